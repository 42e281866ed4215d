import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { SYNC_LIMIT, syncAnswerJson, syncChanges } from '../../chat/sync.js';
import type { HttpDeps } from '../deps.js';
import { Data, ErrorBody, userErrors } from '../schemas.js';

const Change = Type.Object({
  type: Type.String({ description: 'The event name, exactly as broadcast (MessageSent, InboxUpdated, ...).' }),
  conversation_id: Type.Union([Type.Integer(), Type.Null()]),
  data: Type.Unknown({ description: 'The event payload, exactly as the event carries it.' }),
  at: Type.String({ format: 'date-time' }),
});

export const syncRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.get('/sync', {
    schema: {
      tags: ['sync'],
      summary: 'What the caller missed since a cursor, as the events they would have received live (docs/api.md, "Sync")',
      querystring: Type.Object({
        since: Type.Optional(Type.String({ minLength: 1, maxLength: 30_000 })),
        limit: Type.Integer({ minimum: 1, maximum: SYNC_LIMIT.max, default: SYNC_LIMIT.default }),
      }),
      response: {
        200: Data(Type.Object({ changes: Type.Array(Change), cursor: Type.String(), has_more: Type.Boolean() })),
        ...userErrors,
        410: ErrorBody,
      },
    },
  }, async (request, reply) => {
    // Written as JSON text (the payloads come from the feed as text): sent as it is, not serialized again.
    const page = await syncChanges(chat, request.actor, request.query);
    return reply.type('application/json; charset=utf-8').send(syncAnswerJson(page) as never); // the schema still documents it
  });
};
