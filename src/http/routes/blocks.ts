import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { blockUser, listBlocks, unblockUser } from '../../chat/blocks.js';
import { UserResource } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Id, userErrors } from '../schemas.js';

const tags = ['blocks'];
const BlockedIds = Type.Object({ messaging_blocked_user_ids: Type.Array(Id) });

export const blockRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.get('/blocks', {
    schema: {
      tags, summary: 'Users the caller blocked, and everyone the caller cannot message directly',
      response: { 200: Type.Object({ data: Type.Array(UserResource), messaging_blocked_user_ids: Type.Array(Id) }), ...userErrors },
    },
  }, async (request) => listBlocks(chat, request.actor));

  app.post('/blocks', {
    schema: { tags, summary: 'Block a user', body: Type.Object({ user_id: Id }), response: { 200: Type.Object({ data: BlockedIds }), ...userErrors } },
  }, async (request) => ({ data: await blockUser(chat, request.actor, request.body.user_id) }));

  app.delete('/blocks/:user_id', {
    schema: { tags, summary: 'Unblock a user', params: Type.Object({ user_id: Id }), response: { 200: Type.Object({ data: BlockedIds }), ...userErrors } },
  }, async (request) => ({ data: await unblockUser(chat, request.actor, request.params.user_id) }));
};
