// Read-your-writes with read replicas (DATABASE_REPLICA_URLS): a user's request that may have written (any
// method but GET and HEAD) fences that user's next lag-tolerant reads onto the primary, before its answer leaves
// (store/read-replicas.ts says for how long, and why that is enough). The hook runs after the handler, so after
// the write's commit; it covers every write route at once, and a request that wrote nothing costs only a fence.
import type { FastifyInstance } from 'fastify';
import type { ReadReplicas } from '../store/read-replicas.js';

export function fenceUsersWrites(users: FastifyInstance, replicas: ReadReplicas): void {
  users.addHook('onSend', async (request, _reply, payload) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.actor) {
      // A fence that cannot be set (Redis away) is not the answer's failure: while Redis is away no fence can
      // be read either, and every user's reads go to the primary.
      await replicas.wrote(request.actor.userId).catch(() => {});
    }
    return payload;
  });
}
