import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { MAX_PINS } from '../../store/pins.js';
import { listPins, pinMessage } from '../../chat/pins.js';
import { HistoryItem } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Data, ErrorBody, Id, IdParams, Limit, Paged, userErrors } from '../schemas.js';

const tags = ['pins'];
const PinState = Type.Object({
  message_id: Id,
  pinned: Type.Boolean(),
  pinned_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  pinned_by: Type.Union([Id, Type.Null()]),
});

export const pinRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.put('/messages/:id/pin', {
    schema: {
      tags, summary: `Pin a message (group owner or admin; either person of a direct conversation; at most ${MAX_PINS} per conversation)`,
      params: IdParams,
      response: { 200: Data(PinState), ...userErrors, 409: ErrorBody },
    },
  }, async (request) => ({ data: await pinMessage(chat, request.actor, request.params.id, true) }));

  app.delete('/messages/:id/pin', {
    schema: { tags, summary: 'Unpin a message (same rule as pinning)', params: IdParams, response: { 200: Data(PinState), ...userErrors } },
  }, async (request) => ({ data: await pinMessage(chat, request.actor, request.params.id, false) }));

  app.get('/conversations/:id/pins', {
    schema: {
      tags, summary: "A conversation's pinned messages, most recently pinned first",
      params: IdParams,
      querystring: Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 60 })), limit: Limit(50) }),
      response: { 200: Paged(HistoryItem), ...userErrors },
    },
  }, async (request) => {
    const page = await listPins(chat, request.actor, request.params.id, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });
};
