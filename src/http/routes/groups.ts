import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { addParticipants, changeRole, createGroup, deleteGroup, leaveGroup, removeParticipant, updateGroup } from '../../chat/groups.js';
import { checkAvatarUrl } from '../../chat/avatar-url.js';
import { ConversationView } from '../../chat/resources.js';
import type { HttpDeps } from '../deps.js';
import { Data, Id, IdParams, userErrors } from '../schemas.js';

const tags = ['groups'];
const Name = Type.String({ minLength: 1, maxLength: 100 });
// Null first: with Ajv's type coercion a string branch tried first would turn null into "" (never clearing it).
// Beyond the schema, an http(s) URL of a public host (checkAvatarUrl, chat/avatar-url.ts).
const AvatarUrl = Type.Union([Type.Null(), Type.String({ maxLength: 2048, description: 'An http or https URL of a public host' })]);
const UserIds = Type.Array(Id, { maxItems: 10_000 });
const MemberParams = Type.Object({ id: Id, user_id: Id });
const NoContent = { 204: Type.Null(), ...userErrors };

export const groupRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.post('/groups', {
    schema: {
      tags, summary: 'Create a group; the creator becomes its owner',
      body: Type.Object({ name: Name, user_ids: UserIds, avatar_url: Type.Optional(AvatarUrl) }),
      response: { 201: Data(ConversationView), ...userErrors },
    },
  }, async (request, reply) => {
    checkAvatarUrl(request.body.avatar_url);
    return reply.status(201).send({ data: await createGroup(chat, request.actor, request.body) });
  });

  app.patch('/groups/:id', {
    schema: {
      tags, summary: 'Rename a group or change its avatar (owner, admin)',
      params: IdParams, body: Type.Object({ name: Type.Optional(Name), avatar_url: Type.Optional(AvatarUrl) }),
      response: { 200: Data(ConversationView), ...userErrors },
    },
  }, async (request) => {
    checkAvatarUrl(request.body.avatar_url);
    return { data: await updateGroup(chat, request.actor, request.params.id, request.body) };
  });

  app.delete('/groups/:id', {
    schema: { tags, summary: 'Delete a group (owner)', params: IdParams, response: NoContent },
  }, async (request, reply) => {
    await deleteGroup(chat, request.actor, request.params.id);
    return reply.status(204).send(null);
  });

  app.post('/groups/:id/participants', {
    schema: {
      tags, summary: 'Add participants (owner, admin)',
      params: IdParams, body: Type.Object({ user_ids: Type.Array(Id, { minItems: 1, maxItems: 10_000 }) }),
      response: { 200: Data(ConversationView), ...userErrors },
    },
  }, async (request) => ({ data: await addParticipants(chat, request.actor, request.params.id, request.body.user_ids) }));

  app.delete('/groups/:id/participants/:user_id', {
    schema: { tags, summary: 'Remove a participant (owner; admin: members only)', params: MemberParams, response: NoContent },
  }, async (request, reply) => {
    await removeParticipant(chat, request.actor, request.params.id, request.params.user_id);
    return reply.status(204).send(null);
  });

  app.patch('/groups/:id/participants/:user_id', {
    schema: {
      tags, summary: 'Change a participant’s role (owner); role owner hands ownership over',
      params: MemberParams,
      body: Type.Object({ role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]) }),
      response: NoContent,
    },
  }, async (request, reply) => {
    await changeRole(chat, request.actor, request.params.id, request.params.user_id, request.body.role);
    return reply.status(204).send(null);
  });

  app.post('/groups/:id/leave', {
    schema: { tags, summary: 'Leave a group (an owner hands ownership to the longest-standing admin, else member)', params: IdParams, response: NoContent },
  }, async (request, reply) => {
    await leaveGroup(chat, request.actor, request.params.id);
    return reply.status(204).send(null);
  });
};
