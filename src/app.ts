// The one composition root: database, broadcaster, presence, socket server, routes.
import type { Logger } from 'pino';
import { createPresenceService } from './chat/presence.js';
import { createRateLimiter } from './chat/rate-limits.js';
import { createTypingTracker } from './chat/typing.js';
import type { ChatContext } from './chat/context.js';
import type { Config } from './config.js';
import { createBroadcaster, logFanout, type Fanout } from './events/broadcaster.js';
import { CONVERSATION_CHANNEL_PREFIX } from './events/catalog.js';
import { createTokenIssuer } from './http/auth.js';
import { buildHttpApp } from './http/server.js';
import { memoryPresenceTracker } from './presence/tracker.js';
import { createRealtimeServer, type RealtimeServer } from './realtime/index.js';
import { channelAuth } from './realtime/pusher/signature.js';
import { localDiskStorage } from './store/attachment-storage.js';
import { migrateToLatest, openDatabase, type Database } from './store/database.js';
import { join } from 'node:path';

export interface App {
  readonly http: Awaited<ReturnType<typeof buildHttpApp>>;
  readonly database: Database;
  readonly realtime: RealtimeServer | null;
  readonly chat: ChatContext;
  /** Start listening; resolves with the bound port. */
  listen(): Promise<number>;
  close(): Promise<void>;
}

export async function createApp(config: Config, logger: Logger): Promise<App> {
  const database = await openDatabase(config);
  await migrateToLatest(database.db);

  const { appKey, appSecret } = config.broadcast;
  const realtime =
    config.broadcast.driver === 'builtin'
      ? createRealtimeServer({ appKey, appSecret, activityTimeoutSeconds: config.broadcast.activityTimeoutSeconds, revocableChannelPrefixes: [CONVERSATION_CHANNEL_PREFIX], logger: logger.child({ component: 'realtime' }) })
      : null;
  const fanout: Fanout = realtime ?? logFanout(logger.child({ component: 'broadcast' }));
  const chat: ChatContext = {
    db: database.db,
    broadcaster: createBroadcaster(fanout, logger),
    limits: config.limits,
    rateLimiter: createRateLimiter({
      send: config.limits.sendsPerMinute,
      typing: config.limits.typingPerMinute,
      heartbeat: config.limits.heartbeatsPerMinute,
      channel_auth: config.limits.channelAuthsPerMinute,
    }),
  };
  const typing = createTypingTracker(config.typingTimeoutMs);
  const presence = createPresenceService(memoryPresenceTracker(config.presenceTimeoutMs));

  const http = await buildHttpApp(
    {
      config,
      chat,
      typing,
      presence,
      storage: localDiskStorage(join(config.dataDir, 'attachments')),
      tokens: createTokenIssuer(config.jwtSecret),
      channels: {
        authorize(socketId, channelName, actor) {
          realtime?.rememberSubscriber(socketId, channelName, String(actor.userId));
          return channelAuth(appKey, appSecret, socketId, channelName);
        },
      },
    },
    logger,
  );

  http.server.on('upgrade', (request, socket, head) => {
    if (!realtime?.handleUpgrade(request, socket, head)) socket.destroy();
  });

  const sweep = setInterval(() => {
    presence.sweep(chat).catch((err: unknown) => logger.error({ err }, 'presence sweep failed'));
  }, config.presenceSweepMs);
  sweep.unref();

  return {
    http,
    database,
    realtime,
    chat,
    async listen() {
      await http.listen({ port: config.port, host: config.host });
      const address = http.server.address();
      return typeof address === 'object' && address ? address.port : config.port;
    },
    async close() {
      clearInterval(sweep);
      typing.stop();
      await realtime?.close();
      await http.close();
      await database.close();
    },
  };
}
