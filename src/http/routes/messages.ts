import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { MAX_FORWARD_TARGETS, deleteMessage, editMessage, forwardMessage } from '../../chat/messages.js';
import { hideMessageForMe } from '../../chat/own-state.js';
import { addMessageReaction, removeMessageReaction } from '../../chat/reactions.js';
import { MessageReactions, MessageResource } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Data, Id, IdParams, userErrors } from '../schemas.js';

const tags = ['messages'];

export const messageRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.patch('/messages/:id', {
    schema: { tags, summary: 'Edit a message (sender only)', params: IdParams, body: Type.Object({ body: Type.String() }), response: { 200: Data(MessageResource), ...userErrors } },
  }, async (request) => ({ data: await editMessage(chat, request.actor, request.params.id, request.body) }));

  app.delete('/messages/:id', {
    schema: {
      tags, summary: 'Delete a message for everyone (sender, or a group owner or admin); for=me: hide it for yourself only (any participant)',
      params: IdParams,
      querystring: Type.Object({ for: Type.Optional(Type.Literal('me')) }),
      response: { 204: Type.Null(), ...userErrors },
    },
  }, async (request, reply) => {
    if (request.query.for === 'me') await hideMessageForMe(chat, request.actor, request.params.id);
    else await deleteMessage(chat, request.actor, request.params.id);
    return reply.status(204).send(null);
  });

  app.post('/messages/:id/forward', {
    schema: {
      tags, summary: 'Forward a message to other conversations',
      params: IdParams,
      body: Type.Object({ conversation_ids: Type.Array(Id, { minItems: 1, maxItems: MAX_FORWARD_TARGETS }) }),
      response: { 201: Data(Type.Array(MessageResource)), ...userErrors },
    },
  }, async (request, reply) => {
    const messages = await forwardMessage(chat, request.actor, request.params.id, request.body.conversation_ids);
    return reply.status(201).send({ data: messages });
  });

  // The emoji is one path segment, percent-encoded (👍 is %F0%9F%91%8D); the router decodes it.
  const ReactionParams = Type.Object({ id: Id, emoji: Type.String({ description: 'One emoji, or a short name ^[a-z0-9_+-]{1,32}$ (URL-encoded)' }) });

  app.put('/messages/:id/reactions/:emoji', {
    schema: {
      tags, summary: 'React to a message (idempotent; at most 20 distinct emoji per message)',
      params: ReactionParams,
      response: { 200: Data(MessageReactions), ...userErrors },
    },
  }, async (request) => ({ data: await addMessageReaction(chat, request.actor, request.params.id, request.params.emoji) }));

  app.delete('/messages/:id/reactions/:emoji', {
    schema: {
      tags, summary: 'Withdraw one’s reaction (idempotent)',
      params: ReactionParams,
      response: { 200: Data(MessageReactions), ...userErrors },
    },
  }, async (request) => ({ data: await removeMessageReaction(chat, request.actor, request.params.id, request.params.emoji) }));
};
