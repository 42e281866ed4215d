// The Fastify app: external plugins, then the error handler, then the routes (user routes behind the token hook).
import cors from '@fastify/cors';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type RouteOptions } from 'fastify';
import type { Logger } from 'pino';
import { serverKeyAuthenticator, userAuthenticator } from './auth.js';
import type { HttpDeps } from './deps.js';
import { fenceUsersWrites } from './read-your-writes.js';
import { limitFailedAuthentication, limitRequests } from './route-limits.js';
import { validatorCompiler } from './validation.js';
import { installErrorHandler, refuseNonJsonBodies, refuseNulCharacters } from './error-handler.js';
import { wellFormedBody } from './text.js';
import { clientErrorHandler, connectionsCheckingInterval, installRequestTimeouts, type RequestTimeouts } from './timeouts.js';
import { attachmentRoutes } from './routes/attachments.js';
import { blockRoutes } from './routes/blocks.js';
import { broadcastingRoutes } from './routes/broadcasting.js';
import { clientRoutes } from './routes/client.js';
import { complianceRoutes } from './routes/compliance.js';
import { conversationRoutes } from './routes/conversations.js';
import { groupRoutes } from './routes/groups.js';
import { messageRoutes } from './routes/messages.js';
import { moderationRoutes, reportRoutes } from './routes/moderation.js';
import { opsRoutes } from './routes/ops.js';
import { onlineStatusRoutes } from './routes/online-status.js';
import { pushRoutes } from './routes/push.js';
import { searchRoutes } from './routes/search.js';
import { serverRoutes } from './routes/server.js';
import { syncRoutes } from './routes/sync.js';
import { threadRoutes } from './routes/threads.js';
import { pinRoutes } from './routes/pins.js';
import { ownStateRoutes } from './routes/own-state.js';
import { userRoutes } from './routes/users.js';
import { webRoutes } from './routes/web.js';
import { pusherHttpApi } from '../realtime/index.js';

export const API_PREFIX = '/api/chat/v1';

/** Tells the OpenAPI document which credential a route needs. */
function requireInOpenApi(route: RouteOptions, scheme: 'bearer' | 'serverKey'): void {
  route.schema = { ...route.schema, security: [{ [scheme]: [] }] } as RouteOptions['schema'];
}

/**
 * CORS, when CHAT_CORS_ORIGINS lists origins: every method and request header the API uses (X-Chat-Server-Key
 * is not among them: the server key never belongs in a browser), Retry-After and Content-Disposition readable,
 * preflights cached for 10 minutes. No cookies are used, so no credentials.
 */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Socket-ID', 'X-Request-Id'];
export const CORS_EXPOSED_HEADERS = ['Retry-After', 'Content-Disposition'];

export async function buildHttpApp(deps: HttpDeps, logger: Logger) {
  const timeouts: RequestTimeouts = {
    requestTimeoutMs: deps.config.limits.requestTimeoutSeconds * 1000,
    minBytesPerSecond: deps.config.limits.requestMinBytesPerSecond,
  };
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    http: { connectionsCheckingInterval: connectionsCheckingInterval(timeouts) },
    clientErrorHandler,
    bodyLimit: 1024 * 1024,
    requestIdHeader: 'x-request-id',
    // request.ip: the client's address, from X-Forwarded-For only when a trusted proxy (CHAT_TRUSTED_PROXIES) sent it.
    ...(deps.config.trustedProxies.length > 0 ? { trustProxy: [...deps.config.trustedProxies] } : {}),
    // Pusher HTTP API paths carry channel names (up to 164 characters) and user ids (up to 128, percent-encoded).
    routerOptions: { maxParamLength: 512 },
    // Errors the router raises before any route runs (bad percent-encoding, an over-long path segment): the
    // same {message, code} body as every other error, not Fastify's own shape.
    frameworkErrors: (error, _request, reply) => {
      // These run before any hook: the headers every answer gets (below) are set here too.
      const raw = (reply as unknown as FastifyReply).header('X-Content-Type-Options', 'nosniff').header('Cache-Control', 'no-store');
      if (error.code === 'FST_ERR_BAD_URL') return raw.status(400).send({ message: 'The URL is not valid.', code: 'bad_request' });
      return raw.status(404).send({ message: 'Not found.', code: 'not_found' });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());

  if (deps.config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: [...deps.config.corsOrigins],
      methods: CORS_METHODS,
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      maxAge: 600,
    });
  }
  installRequestTimeouts(app, timeouts);
  // Every answer: never sniffed into another type, and not stored by caches unless the route says otherwise
  // (attachment downloads and the web client's files set their own Cache-Control).
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Cache-Control', 'no-store');
    done();
  });
  await app.register(formbody);
  await app.register(multipart, { limits: { fileSize: deps.config.limits.attachmentMaxBytes, files: 1, fields: 10 } });
  await app.register(swagger, {
    openapi: {
      info: { title: 'Parley chat API', version: '1.0.0', description: 'Self-hosted chat with Pusher-protocol real-time events.' },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          serverKey: { type: 'apiKey', in: 'header', name: 'X-Chat-Server-Key' },
        },
      },
    },
  });
  installErrorHandler(app);
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.httpRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
  });
  await app.register(opsRoutes, { metrics: deps.metrics, checks: deps.readiness, metricsToken: deps.config.metricsToken });
  if (deps.pusherApi) {
    // The Pusher HTTP API at /apps/{app_id}/..., as on Pusher, for the host app's server SDK.
    const { maxEventBytes, maxApiBodyBytes } = deps.config.broadcast;
    await app.register(pusherHttpApi, { apps: deps.pusherApi, maxEventBytes, maxBodyBytes: maxApiBodyBytes });
  }

  await app.register(async (api) => {
    api.addHook('preValidation', refuseNonJsonBodies);
    api.addHook('preValidation', wellFormedBody);
    api.addHook('preValidation', refuseNulCharacters);
    api.get('/openapi.json', { schema: { hide: true } }, async () => api.swagger());
    await api.register(clientRoutes, deps); // no credential: client-config, and the demo sign-in when CHAT_DEMO=1

    await api.register(async (users) => {
      users.addHook('onRequest', limitFailedAuthentication(userAuthenticator(deps.config, deps.chat.db), deps.chat.rateLimiter));
      users.addHook('onRequest', limitRequests(deps.chat.rateLimiter, API_PREFIX));
      users.addHook('onRoute', (route) => requireInOpenApi(route, 'bearer'));
      if (deps.chat.replicas) fenceUsersWrites(users, deps.chat.replicas);
      for (const routes of [conversationRoutes, messageRoutes, groupRoutes, blockRoutes, onlineStatusRoutes, attachmentRoutes, broadcastingRoutes, searchRoutes, userRoutes, pushRoutes, syncRoutes, threadRoutes, pinRoutes, ownStateRoutes, reportRoutes]) {
        await users.register(routes, deps);
      }
    });
    await api.register(async (server) => {
      server.addHook('onRequest', limitFailedAuthentication(serverKeyAuthenticator(deps.config.serverKey), deps.chat.rateLimiter));
      server.addHook('onRoute', (route) => requireInOpenApi(route, 'serverKey'));
      await server.register(serverRoutes, deps);
      await server.register(moderationRoutes, deps);
      await server.register(complianceRoutes, deps);
    });
  }, { prefix: API_PREFIX });
  await app.register(webRoutes, {}); // the web client at /, when web/dist is built

  return app;
}
