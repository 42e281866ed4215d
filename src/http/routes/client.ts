// What a browser client needs before it has a token: the socket settings (client-config), and, only when the
// operator turned CHAT_DEMO on, a sign-in by user id and name for trying Parley out. Both stay out of the OpenAPI
// document: they are the web client's helpers, not part of the chat API (docs/api.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { upsertUser } from '../../chat/users.js';
import type { ClientConfig } from '../../contract/resources.js';
import type { HttpDeps } from '../deps.js';
import { Id } from '../schemas.js';

const DEMO_TOKEN_TTL_SECONDS = 24 * 3600;

export const clientRoutes: FastifyPluginAsyncTypebox<HttpDeps> = async (app, { config, chat, tokens }) => {
  // Built-in server: ws_host / ws_port null, the socket is on the page's own host and port (Parley serves both);
  // force_tls is what the server knows, a page loaded over https uses TLS anyway. BROADCAST_DRIVER=pusher: the
  // external server's key and address, as browsers reach it. realtime false: no socket server at all (log).
  const { pusher } = config;
  const socket = pusher
    ? { app_key: pusher.key, ws_host: pusher.client.host, ws_port: pusher.client.port, force_tls: pusher.client.tls }
    : { app_key: config.broadcast.appKey, ws_host: null, ws_port: null, force_tls: false };
  app.get('/client-config', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    const answer: ClientConfig = { ...socket, realtime: config.broadcast.driver !== 'log', demo: config.demo };
    return answer;
  });

  if (!config.demo) return;
  app.log.warn('CHAT_DEMO is on: anyone who can reach this server can sign in as any user (POST /api/chat/v1/demo/token)');

  app.post('/demo/token', {
    schema: {
      hide: true,
      body: Type.Object({
        user_id: Id,
        name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
      }),
    },
  }, async (request, reply) => {
    const { user_id: userId, name } = request.body;
    // Known at once, so others can start a conversation with this user before their first request.
    await upsertUser(chat.db, userId, { name: name.trim() });
    const { token, expiresAt } = await tokens.issue(userId, { name: name.trim(), ttlSeconds: Math.min(DEMO_TOKEN_TTL_SECONDS, config.jwt.maxTtlSeconds) });
    return reply.status(201).send({ token, expires_at: expiresAt.toISOString() });
  });
};
