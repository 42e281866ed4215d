// The HTTP server: the routes (src/http) with everything they use, and WebSocket upgrades routed to the
// built-in server's apps by key.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { createTokenIssuer } from '../http/auth.js';
import type { ChannelAuthorizer } from '../http/deps.js';
import { buildHttpApp } from '../http/server.js';
import type { Metrics } from '../ops/metrics.js';
import type { PushSettings } from '../delivery/web-push/subscriptions.js';
import { upgradeRouter } from '../realtime/index.js';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import type { Chat } from './chat.js';
import type { PusherApp } from './builtin-server.js';
import type { Stores } from './stores.js';

export type HttpApp = Awaited<ReturnType<typeof buildHttpApp>>;

export interface HttpParts {
  readonly stores: Stores;
  readonly chat: Chat;
  readonly apps: readonly PusherApp[];
  readonly channels: ChannelAuthorizer;
  readonly storage: AttachmentStorage;
  readonly metrics: Metrics;
  readonly push: PushSettings;
}

export async function startHttp(config: Config, { stores, chat, apps, channels, storage, metrics, push }: HttpParts, logger: Logger): Promise<HttpApp> {
  const { database, redis } = stores;
  const http = await buildHttpApp(
    {
      config,
      chat: chat.chat,
      typing: chat.typing,
      presence: chat.presence,
      storage,
      tokens: createTokenIssuer(config.jwtSecret, config.jwt),
      channels,
      metrics,
      push,
      // The Pusher HTTP API: its events reach every node through the fan-out, its channel info covers every node.
      pusherApi: apps.length > 0 ? apps.map(({ id, key, secret, realtime: backend }) => ({ id, key, secret, backend })) : undefined,
      readiness: {
        database: () => database.ping(),
        ...(redis ? { redis: async () => void (await redis.commands.ping()) } : {}),
      },
    },
    logger,
  );
  const [defaultApp, ...otherApps] = apps;
  const routeUpgrade = defaultApp && upgradeRouter(defaultApp.realtime, new Map(otherApps.map((app) => [app.key, app.realtime])));
  http.server.on('upgrade', (request, socket, head) => {
    // Without the realtime server there is no WebSocket endpoint: say so instead of dropping the socket.
    if (!routeUpgrade?.(request, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  return http;
}
