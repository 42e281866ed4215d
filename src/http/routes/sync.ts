import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { GROUP_CHANGES_LIMIT, groupChanges, SYNC_LIMIT, syncAnswerJson, syncChanges } from '../../chat/sync.js';
import { SyncChange, SyncPage } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Data, ErrorBody, IdParams, userErrors } from '../schemas.js';

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
        200: Data(SyncPage),
        ...userErrors,
        410: ErrorBody,
      },
    },
  }, async (request, reply) => {
    // Written as JSON text (the payloads come from the feed as text): sent as it is, not serialized again.
    const page = await syncChanges(chat, request.actor, request.query);
    return reply.type('application/json; charset=utf-8').send(syncAnswerJson(page) as never); // the schema still documents it
  });

  app.get('/groups/:id/changes', {
    schema: {
      tags: ['groups'],
      summary: "A group's membership changes (GroupParticipantsChanged), newest first, as long as the change feed keeps them (docs/api.md)",
      params: IdParams,
      querystring: Type.Object({
        cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 60 })),
        limit: Type.Integer({ minimum: 1, maximum: GROUP_CHANGES_LIMIT.max, default: GROUP_CHANGES_LIMIT.default }),
      }),
      response: { 200: Type.Object({ data: Type.Array(SyncChange), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...userErrors },
    },
  }, async (request, reply) => {
    const page = await groupChanges(chat, request.actor, request.params.id, request.query);
    const json = `{"data":[${page.data.join(',')}],"next_cursor":${JSON.stringify(page.next_cursor)}}`;
    return reply.type('application/json; charset=utf-8').send(json as never);
  });
};
