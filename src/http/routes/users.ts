// Users as a user sees them (user token): GET /users, the name search of "new chat" pickers. The host app's
// own user endpoints (PUT /users/{id}, tokens) are in server.ts, behind the server key.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { USER_QUERY_MAX_CHARS, searchUsers } from '../../chat/search.js';
import { UserResource } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Limit, Paged, userErrors } from '../schemas.js';

const tags = ['users'];

export const userRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat }) => {
  app.get('/users', {
    schema: {
      tags,
      summary: 'Find users by name: each word of query starts a word of the name (case- and accent-insensitive); by name',
      querystring: Type.Object({
        query: Type.Optional(Type.String({ description: `Name words or their beginnings (1 to ${USER_QUERY_MAX_CHARS} characters)` })),
        cursor: Type.Optional(Type.String({ maxLength: 1000 })),
        limit: Limit(20),
      }),
      response: { 200: Paged(UserResource), ...userErrors },
    },
  }, async (request) => {
    const page = await searchUsers(chat, request.actor, request.query);
    return { data: page.data, meta: { next_cursor: page.next_cursor } };
  });
};
