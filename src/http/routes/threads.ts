import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { HistoryItem, ThreadItem } from '../../contract/resources.js';
import { listThreadReplies, listThreads, markThreadRead } from '../../chat/threads.js';
import type { HttpDeps } from '../deps.js';
import { Data, Id, IdParams, Limit, Paged, userErrors } from '../schemas.js';

const tags = ['threads'];

export const threadRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.get('/messages/:id/thread', {
    schema: {
      tags, summary: "A thread's replies, newest first (before / after a reply id, as history)",
      params: IdParams,
      querystring: Type.Object({ before: Type.Optional(Id), after: Type.Optional(Id), limit: Limit(50) }),
      response: { 200: Paged(HistoryItem), ...userErrors },
    },
  }, async (request) => {
    const page = await listThreadReplies(chat, request.actor, request.params.id, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });

  app.get('/threads', {
    schema: {
      tags, summary: 'The threads the caller takes part in, most recent reply first',
      querystring: Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 60 })), limit: Limit(30) }),
      response: {
        200: Paged(ThreadItem),
        ...userErrors,
      },
    },
  }, async (request) => {
    const page = await listThreads(chat, request.actor, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });

  app.post('/messages/:id/thread/read', {
    schema: {
      tags, summary: 'Mark a thread read up to its newest reply',
      params: IdParams,
      response: { 200: Data(Type.Object({ thread_id: Id, read_at: Type.String({ format: 'date-time' }) })), ...userErrors },
    },
  }, async (request) => ({ data: await markThreadRead(chat, request.actor, request.params.id) }));
};
