import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { getConversation, listInbox, openDirect } from '../../chat/conversations.js';
import { listMessages, sendMessage } from '../../chat/messages.js';
import { listReadPositions, markRead } from '../../chat/reads.js';
import { ConversationView, HistoryItem, InboxPage, MessageResource, ReadPositionResource } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Data, Id, IdParams, Limit, Paged, userErrors } from '../schemas.js';

const tags = ['conversations'];
/** A sent message: the MessageResource, plus thread_id for a reply in a thread (v1.2). */
const SentMessage = Type.Object({ ...MessageResource.properties, thread_id: Type.Optional(Id) });

export const conversationRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat, typing }) => {
  app.get('/conversations', {
    schema: {
      tags, summary: 'The inbox: the caller’s conversations, pinned first, then newest activity first (archived=true: the archived ones)',
      querystring: Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 100 })), limit: Limit(30), archived: Type.Optional(Type.Boolean()) }),
      response: {
        200: InboxPage,
        ...userErrors,
      },
    },
  }, async (request) => {
    const page = await listInbox(chat, request.actor, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor, sync_cursor: page.sync_cursor } };
  });

  app.post('/conversations', {
    schema: {
      tags, summary: 'Find or create the direct conversation with a user',
      body: Type.Object({ user_id: Id }),
      response: { 200: Data(ConversationView), 201: Data(ConversationView), ...userErrors },
    },
  }, async (request, reply) => {
    const { conversation, created } = await openDirect(chat, request.actor, request.body.user_id);
    return reply.status(created ? 201 : 200).send({ data: conversation });
  });

  app.get('/conversations/:id', {
    schema: { tags, summary: 'One conversation as the caller sees it', params: IdParams, response: { 200: Data(ConversationView), ...userErrors } },
  }, async (request) => ({ data: await getConversation(chat, request.actor, request.params.id) }));

  app.get('/conversations/:id/messages', {
    schema: {
      tags, summary: 'History, newest first; page back with before, catch up with after',
      params: IdParams,
      querystring: Type.Object({ before: Type.Optional(Id), after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })), limit: Limit(50) }),
      response: { 200: Paged(HistoryItem), ...userErrors },
    },
  }, async (request) => {
    const page = await listMessages(chat, request.actor, request.params.id, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });

  app.post('/conversations/:id/messages', {
    schema: {
      tags, summary: 'Send a message (idempotent with client_message_id)',
      params: IdParams,
      body: Type.Object({
        body: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        attachment_id: Type.Optional(Type.Union([Id, Type.Null()])),
        reply_to_id: Type.Optional(Type.Union([Id, Type.Null()])),
        client_message_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()])),
        mentioned_user_ids: Type.Optional(Type.Union([Type.Array(Id, { maxItems: 1000 }), Type.Null()])),
        thread_id: Type.Optional(Type.Union([Id, Type.Null()], { description: 'v1.2: send as a reply in the thread of this message' })),
      }),
      response: { 200: Data(SentMessage), 201: Data(SentMessage), ...userErrors },
    },
  }, async (request, reply) => {
    const { message, created } = await sendMessage(chat, request.actor, request.params.id, request.body);
    return reply.status(created ? 201 : 200).send({ data: message });
  });

  app.post('/conversations/:id/read', {
    schema: {
      tags, summary: 'Mark read up to a message (default: the latest)',
      params: IdParams,
      // No body at all is fine too (Fastify validates a missing body as null).
      body: Type.Union([Type.Object({ message_id: Type.Optional(Id) }), Type.Null()]),
      response: {
        200: Data(Type.Object({ conversation_id: Id, user_id: Id, read_at: Type.String(), last_read_message_id: Type.Integer() })),
        ...userErrors,
      },
    },
  }, async (request) => ({ data: await markRead(chat, request.actor, request.params.id, request.body?.message_id) }));

  app.get('/conversations/:id/reads', {
    schema: {
      tags, summary: 'Every participant’s read position, by ascending user id (cursor: the last user id of a page)',
      params: IdParams,
      querystring: Type.Object({ cursor: Type.Optional(Id), limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }),
      response: { 200: Paged(ReadPositionResource), ...userErrors },
    },
  }, async (request) => {
    const page = await listReadPositions(chat, request.actor, request.params.id, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });

  app.post('/conversations/:id/typing', {
    schema: {
      tags, summary: 'Signal typing (a start expires by itself after 8 s)',
      params: IdParams,
      body: Type.Object({ is_typing: Type.Boolean() }),
      response: { 204: Type.Null(), ...userErrors },
    },
  }, async (request, reply) => {
    await typing.signal(chat, request.actor, request.params.id, request.body.is_typing);
    return reply.status(204).send(null);
  });
};
