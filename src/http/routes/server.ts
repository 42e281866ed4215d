// Routes for the host application's backend (X-Chat-Server-Key), never for browsers.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { UserResource } from '../../contract/resources.js';
import { USER_AVATAR_URL_MAX_CHARS, USER_NAME_MAX_CHARS, upsertUser } from '../../chat/users.js';
import type { HttpDeps } from '../deps.js';
import { Data, ErrorBody, Id } from '../schemas.js';

const tags = ['server'];
const serverErrors = { 401: ErrorBody, 422: ErrorBody, 429: ErrorBody }; // 429: failed authentications from one address

export const serverRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { chat, tokens }) => {
  app.put('/users/:id', {
    schema: {
      tags, summary: 'Create or update a user', params: Type.Object({ id: Id }),
      // avatar_url: null first, or Ajv's type coercion turns null into "" (see routes/groups.ts).
      body: Type.Object({
        name: Type.String({ maxLength: USER_NAME_MAX_CHARS }),
        avatar_url: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: USER_AVATAR_URL_MAX_CHARS })])),
      }),
      // 409: the user was erased (DELETE /users/{id}); an erased id stays erased.
      response: { 200: Data(UserResource), 201: Data(UserResource), 409: ErrorBody, ...serverErrors },
    },
  }, async (request, reply) => {
    const { user, created } = await upsertUser(chat.db, request.params.id, request.body);
    return reply.status(created ? 201 : 200).send({ data: user });
  });

  // ttl_seconds has one upper limit, CHAT_JWT_MAX_TTL_S, checked (with its message) where the token is issued.
  app.post('/users/:id/tokens', {
    schema: {
      tags, summary: 'Mint a user token', params: Type.Object({ id: Id }),
      body: Type.Union([Type.Object({ ttl_seconds: Type.Optional(Type.Integer({ minimum: 60 })) }), Type.Null()]),
      response: { 201: Type.Object({ token: Type.String(), expires_at: Type.String() }), ...serverErrors },
    },
  }, async (request, reply) => {
    const { token, expiresAt } = await tokens.issue(request.params.id, { ttlSeconds: request.body?.ttl_seconds });
    return reply.status(201).send({ token, expires_at: expiresAt.toISOString() });
  });
};
