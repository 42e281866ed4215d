import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { MAX_SLOW_MODE_S, addParticipants, changeRole, createGroup, deleteGroup, leaveGroup, removeParticipant, updateGroup } from '../../chat/groups.js';
import { banFromGroup, listGroupBans, unbanFromGroup } from '../../chat/group-bans.js';
import { checkAvatarUrl } from '../../chat/avatar-url.js';
import { ConversationView } from '../../contract/resources.js';
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
/** The longest reason given for a ban. */
export const BAN_REASON_MAX_CHARS = 500;
const Timestamp = Type.String({ format: 'date-time' });
const GroupBan = Type.Object({ user_id: Id, reason: Type.Union([Type.String(), Type.Null()]), until: Type.Union([Timestamp, Type.Null()]), created_at: Timestamp });

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
      tags, summary: 'Rename a group, change its avatar, slow mode or freeze it (owner, admin)',
      params: IdParams,
      body: Type.Object({
        name: Type.Optional(Name),
        avatar_url: Type.Optional(AvatarUrl),
        slow_mode_s: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SLOW_MODE_S, description: 'A member may send once per this many seconds; 0: off' })),
        frozen: Type.Optional(Type.Boolean({ description: 'Only the owner and admins may send' })),
      }),
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

  app.post('/groups/:id/bans', {
    schema: {
      tags, summary: 'Ban a user from a group: a member is removed, and nobody adds them back until unbanned or `until` (owner; admin: members only)',
      params: IdParams,
      body: Type.Object({
        user_id: Id,
        reason: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: BAN_REASON_MAX_CHARS })])),
        until: Type.Optional(Type.Union([Type.Null(), Type.String({ format: 'date-time', description: 'When the ban ends; absent or null: until unbanned' })])),
      }),
      response: { 201: Data(GroupBan), ...userErrors },
    },
  }, async (request, reply) => reply.status(201).send({ data: await banFromGroup(chat, request.actor, request.params.id, request.body) }));

  app.get('/groups/:id/bans', {
    schema: { tags, summary: "A group's bans in force, most recent first (owner, admin)", params: IdParams, response: { 200: Data(Type.Array(GroupBan)), ...userErrors } },
  }, async (request) => ({ data: await listGroupBans(chat, request.actor, request.params.id) }));

  app.delete('/groups/:id/bans/:user_id', {
    schema: { tags, summary: 'Lift a ban (owner, admin)', params: MemberParams, response: NoContent },
  }, async (request, reply) => {
    await unbanFromGroup(chat, request.actor, request.params.id, request.params.user_id);
    return reply.status(204).send(null);
  });

  app.post('/groups/:id/leave', {
    schema: { tags, summary: 'Leave a group (an owner hands ownership to the longest-standing admin, else member)', params: IdParams, response: NoContent },
  }, async (request, reply) => {
    await leaveGroup(chat, request.actor, request.params.id);
    return reply.status(204).send(null);
  });
};
