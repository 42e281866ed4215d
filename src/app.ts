// The one composition root: database, Redis, broadcaster, presence, socket server, routes.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ChatContext } from './chat/context.js';
import { createSendQueue } from './chat/messages.js';
import { createPresenceService } from './chat/presence.js';
import { memoryRateLimiter, redisRateLimiter, type RateLimiter, type RateLimits } from './chat/rate-limits.js';
import { createTypingTracker, memoryTypingLeases, redisTypingLeases } from './chat/typing.js';
import type { Config } from './config.js';
import type { PusherAppConfig } from './config/pusher-apps.js';
import { createBroadcaster, logFanout, type Fanout } from './events/broadcaster.js';
import { CHAT_CHANNEL_PREFIX, CONVERSATION_CHANNEL_PREFIX } from './events/catalog.js';
import { createTokenIssuer } from './http/auth.js';
import { buildHttpApp } from './http/server.js';
import { blockedWords } from './chat/blocked-words.js';
import { createAttachmentSweeper, type AttachmentSweeper } from './chat/attachment-sweeper.js';
import { createFeedPruner } from './chat/feed-pruner.js';
import { createRetentionSweeper, type RetentionSweeper } from './chat/retention.js';
import { createErasureWorker, type ErasureWorker } from './chat/erasure.js';
import { createMetrics } from './ops/metrics.js';
import { memoryPresenceTracker, redisPresenceTracker } from './presence/tracker.js';
import { pushAudience } from './push/audience.js';
import { createWebPush, type WebPush } from './push/index.js';
import { PUSH_OUTBOX_KIND, pushDeliverer } from './push/outbox.js';
import { createNotifications } from './notifications/index.js';
import { outboxMetrics } from './notifications/metrics.js';
import { createOutboxWorker, type OutboxWorker } from './notifications/outbox-worker.js';
import { loadWebhookSecret, webhookDeliverer } from './notifications/webhooks.js';
import {
  LOCAL_PRESENCE,
  PONG_TIMEOUT_SECONDS,
  REMEMBER_TTL_MS,
  RememberedSubscribers,
  channelAuth,
  createRealtimeNode,
  createWebhookSender,
  localBroker,
  pusherHttpFanout,
  redisAuthorizationLedger,
  redisBroker,
  redisForApp,
  redisPresence,
  upgradeRouter,
  userAuth,
  type AuthorizationLedger,
  type PusherHttpFanout,
  type RealtimeNode,
  type RealtimeStats,
} from './realtime/index.js';
import { localDiskStorage, s3Storage, type AttachmentStorage } from './store/attachment-storage.js';
import { migrateToLatest, openDatabase, type Database } from './store/database.js';
import { shareForgetting } from './store/known-users.js';
import { openRedis, type RedisConnections } from './store/redis.js';
import { databaseStartupError, listenStartupError, redisStartupError } from './startup-errors.js';

export interface App {
  readonly http: Awaited<ReturnType<typeof buildHttpApp>>;
  readonly database: Database;
  readonly redis: RedisConnections | null;
  readonly realtime: RealtimeNode | null;
  readonly chat: ChatContext;
  /** Deletes unsent uploads and files of deleted messages, one pass a minute once listening (one node at a time). */
  readonly attachmentSweeper: AttachmentSweeper;
  /** Web Push: VAPID keys, the subscription rules and the MessageSent deliverer (for the outbox). */
  readonly push: WebPush;
  /** The outbox's delivery worker of this node (webhooks, pushes; src/notifications). */
  readonly outbox: OutboxWorker;
  /** Deletes messages past CHAT_MESSAGE_RETENTION_DAYS, a pass within a minute once listening, then hourly; null when unset. */
  readonly retention: RetentionSweeper | null;
  /** Runs users' erasures (DELETE /users/{id}) in the background: pending ones at start, new ones within a second. */
  readonly erasure: ErasureWorker;
  /** Start listening; resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful stop: no new requests, in-flight ones finish, sockets closed with 4200 (reconnect elsewhere), then Redis and the database. */
  close(): Promise<void>;
}

/** The rate limits (CHAT_RATE_*): shared by the nodes through Redis when there is one, else this node's own. */
function rateLimiter(config: Config, redis: RedisConnections | null, logger: Logger): RateLimiter {
  const { limits } = config;
  const perMinute: RateLimits = {
    send: limits.sendsPerMinute,
    typing: limits.typingPerMinute,
    heartbeat: limits.heartbeatsPerMinute,
    channel_auth: limits.channelAuthsPerMinute,
    edit: limits.editsPerMinute,
    read: limits.readsPerMinute,
    conversation: limits.conversationChangesPerMinute,
    group_create: limits.groupsPerHour, // per hour: see WINDOWS_MS
    upload: limits.uploadsPerMinute,
    block: limits.blocksPerMinute,
    write: limits.otherWritesPerMinute,
    search: limits.searchesPerMinute,
    history: limits.historyPagesPerMinute,
    auth_failure: limits.authFailuresPerMinute,
  };
  if (!redis) return memoryRateLimiter(perMinute);
  let warnedAt = 0;
  return redisRateLimiter(redis, perMinute, {
    // Redis away or slow: this node limits on its own meanwhile (fail open to the per-node limit). Said once in 10 s.
    onError: (err) => {
      if (Date.now() - warnedAt < 10_000) return;
      warnedAt = Date.now();
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'rate limits: Redis unavailable, limiting per node');
    },
  });
}

export async function createApp(config: Config, logger: Logger): Promise<App> {
  // A dependency that fails here stops the start with one line saying which and how to fix it (startup-errors.ts).
  let database: Database;
  try {
    database = await openDatabase({ ...config, onWarning: (message) => logger.warn(message) });
    await migrateToLatest(database.db);
  } catch (err) {
    throw databaseStartupError(err, config.databaseUrl, config.dataDir);
  }
  let redis: RedisConnections | null = null;
  if (config.redisUrl) {
    try {
      redis = await openRedis(config.redisUrl, config.redisPrefix, logger.child({ component: 'redis' }));
    } catch (err) {
      await database.close().catch(() => {});
      throw redisStartupError(err, config.redisUrl);
    }
  }

  const { appKey, appSecret } = config.broadcast;
  const builtin = config.broadcast.driver === 'builtin';
  // This process in the cluster: its broker, presence and occupancy shares are all keyed by this one id.
  const nodeId = randomUUID();
  const defaultApp = builtin
    ? await startPusherApp(config, redis, nodeId, logger, {
        id: config.broadcast.appId,
        key: appKey,
        secret: appSecret,
        webhookUrls: config.broadcast.webhookUrls,
        clientEvents: config.broadcast.clientEvents,
        maxConnections: config.broadcast.maxConnections,
        chat: true,
      })
    : null;
  // BROADCAST_APPS_FILE: further apps on the same port, each isolated (src/realtime/apps.ts).
  const otherApps = defaultApp ? await Promise.all(config.broadcast.apps.map((app) => startPusherApp(config, redis, nodeId, logger, { ...app, chat: false }))) : [];
  const realtime = defaultApp?.realtime ?? null;
  let fanout: Fanout = realtime ?? logFanout(logger.child({ component: 'broadcast' }));

  const metrics = createMetrics({
    realtime: () => (defaultApp ? sumStats([defaultApp, ...otherApps].map((app) => app.realtime.stats())) : null),
    databasePool: () => database.poolStats(),
    redisUp: () => (redis ? redis.isReady() : null),
    clusterReceived: () => (redis && defaultApp ? [defaultApp, ...otherApps].reduce((sum, app) => sum + app.realtime.stats().clusterReceived, 0) : null),
  });
  // BROADCAST_DRIVER=pusher: no socket server here; events go to the external server's HTTP API.
  let pusherHttp: PusherHttpFanout | null = null;
  if (config.pusher) {
    pusherHttp = await pusherHttpFanout({
      ...config.pusher,
      logger: logger.child({ component: 'pusher-http' }),
      metrics: metrics.pusher,
      bodyMaxChars: config.limits.bodyMaxChars,
    });
    fanout = pusherHttp;
  }
  // Channel authorizations are signed for the server the browsers connect to.
  const signing = config.pusher ? { key: config.pusher.key, secret: config.pusher.secret } : { key: appKey, secret: appSecret };
  const broadcaster = createBroadcaster(fanout, logger, metrics.eventDispatched);
  // The outbox (src/notifications): rows written in each action's transaction, delivered by a worker per node.
  const outbox = createOutboxWorker({ db: database.db, logger, events: outboxMetrics(metrics.registry, database.db) });
  // push: a 'push' row for each MessageSent while any browser is subscribed, delivered by src/push (which
  // decides the recipients at delivery).
  const pushSubscribers = pushAudience(database.db);
  const notifications = createNotifications({ webhookUrls: config.webhooks.urls, push: () => pushSubscribers.any(), worker: outbox });
  const chat: ChatContext = {
    db: database.db,
    broadcaster,
    limits: config.limits,
    rateLimiter: rateLimiter(config, redis, logger),
    // PGlite has one connection: one lane. On PostgreSQL a few lanes keep several batches in flight.
    sends: createSendQueue({ db: database.db, broadcaster, notifications }, { lanes: database.kind === 'pglite' ? 1 : config.databaseSendLanes }),
    notifications,
    blockedWords: blockedWords(config.limits.blockedWords),
    forgetUser: await shareForgetting(database.db, redis, logger.child({ component: 'known-users' })),
  };
  const typing = createTypingTracker(config.typingTimeoutMs, redis ? redisTypingLeases(redis) : memoryTypingLeases());
  const presenceTracker = redis ? redisPresenceTracker(redis, config.presenceTimeoutMs) : memoryPresenceTracker(config.presenceTimeoutMs);
  const presence = createPresenceService(presenceTracker);
  const push = createWebPush({ config, db: database.db, presence: presenceTracker, audience: pushSubscribers, logger });
  outbox.register({ kind: PUSH_OUTBOX_KIND, deliver: pushDeliverer(push) });
  if (config.webhooks.urls.length > 0) {
    outbox.register(
      webhookDeliverer({
        secret: loadWebhookSecret(config),
        async offline(userIds) {
          const online = await presenceTracker.lastBeats(userIds);
          return userIds.filter((id) => !online.has(id));
        },
      }),
    );
  }

  const storage = createAttachmentStorage(config);
  const attachmentSweeper = createAttachmentSweeper({
    db: database.db,
    storage,
    unsentTtlSeconds: config.storage.unsentUploadTtlSeconds,
    logger,
    registry: metrics.registry,
  });

  const feedPruner = createFeedPruner({ db: database.db, retentionSeconds: config.limits.syncRetentionSeconds, logger });
  const retentionDays = config.limits.messageRetentionDays;
  const retention = retentionDays === null ? null : createRetentionSweeper({ ctx: chat, storage, retentionDays, logger });
  const erasure = createErasureWorker({ ctx: chat, storage, logger });

  const http = await buildHttpApp(
    {
      config,
      chat,
      typing,
      presence,
      storage,
      tokens: createTokenIssuer(config.jwtSecret, config.jwt),
      channels: {
        async authorize(socketId, channelName, actor) {
          // Recorded before the answer goes out, so the subscribe that follows finds it on any node.
          await defaultApp?.authorizations.remember(socketId, channelName, String(actor.userId));
          return channelAuth(signing.key, signing.secret, socketId, channelName);
        },
        authenticateUser(socketId, actor) {
          const userData = JSON.stringify({ id: String(actor.userId) });
          return { auth: userAuth(signing.key, signing.secret, socketId, userData), user_data: userData };
        },
      },
      metrics,
      push: push.settings,
      // The Pusher HTTP API: its events reach every node through the fan-out, its channel info covers every node.
      pusherApi: defaultApp ? [defaultApp, ...otherApps].map(({ id, key, secret, realtime: backend }) => ({ id, key, secret, backend })) : undefined,
      readiness: {
        database: () => database.ping(),
        ...(redis ? { redis: async () => void (await redis.commands.ping()) } : {}),
      },
    },
    logger,
  );

  const routeUpgrade = realtime && upgradeRouter(realtime, new Map(otherApps.map((app) => [app.key, app.realtime])));
  http.server.on('upgrade', (request, socket, head) => {
    // Without the realtime server there is no WebSocket endpoint: say so instead of dropping the socket.
    if (!routeUpgrade?.(request, socket, head)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  // With Redis every node sweeps, and each expiry is claimed by exactly one of them.
  const sweep = setInterval(() => {
    presence.sweep(chat).catch((err: unknown) => logger.warn({ err }, 'presence sweep failed'));
  }, config.presenceSweepMs);
  sweep.unref();

  return {
    http,
    database,
    redis,
    realtime,
    chat,
    attachmentSweeper,
    push,
    outbox,
    retention,
    erasure,
    async listen() {
      await http.listen({ port: config.port, host: config.host }).catch((err: unknown) => {
        throw listenStartupError(err, config.host, config.port);
      });
      attachmentSweeper.start();
      feedPruner.start();
      retention?.start();
      erasure.start();
      outbox.start();
      const address = http.server.address();
      return typeof address === 'object' && address ? address.port : config.port;
    },
    async close() {
      clearInterval(sweep);
      typing.stop();
      const httpClosed = http.close(); // stops accepting at once; resolves when in-flight requests are done
      // A keep-alive connection whose request finishes after this point is idle but open, and would hold the
      // close until the client drops it (Fastify's keep-alive timeout is 72 s): close such connections as they idle.
      const closeIdle = setInterval(() => http.server.closeIdleConnections(), 50);
      try {
        await Promise.all([defaultApp, ...otherApps].map((app) => app?.realtime.close(4200)));
        await httpClosed;
      } finally {
        clearInterval(closeIdle);
      }
      await outbox.stop();
      pusherHttp?.close();
      await attachmentSweeper.stop();
      await feedPruner.stop();
      await retention?.stop();
      await erasure.stop();
      await redis?.close();
      await database.close();
    },
  };
}

/** CHAT_STORAGE: local disk under CHAT_DATA_DIR/attachments, or the S3-compatible bucket. */
function createAttachmentStorage(config: Config): AttachmentStorage {
  return config.storage.driver === 's3' ? s3Storage(config.storage.s3) : localDiskStorage(join(config.dataDir, 'attachments'));
}

/** One Pusher app of the built-in server: its realtime node (also its HTTP API's backend) and its authorization store. */
interface PusherApp {
  readonly id: string;
  readonly key: string;
  readonly secret: string;
  readonly realtime: RealtimeNode;
  /** Where the HTTP auth endpoint records whose subscription a signature is for (the node claims it on subscribe). */
  readonly authorizations: AuthorizationLedger;
}

/**
 * Starts one app: the default one (`chat`: Parley's own channels are server-owned and revocable) or one of
 * BROADCAST_APPS_FILE, whose Redis keys and topics live under a prefix of its own.
 */
async function startPusherApp(
  config: Config,
  deploymentRedis: RedisConnections | null,
  nodeId: string,
  logger: Logger,
  app: PusherAppConfig & { readonly chat: boolean },
): Promise<PusherApp> {
  const { broadcast } = config;
  const redis = deploymentRedis && (app.chat ? deploymentRedis : redisForApp(deploymentRedis, app.id));
  const appLogger = app.chat ? logger : logger.child({ app: app.id });
  const authorizations = redis ? redisAuthorizationLedger(redis, REMEMBER_TTL_MS) : new RememberedSubscribers(REMEMBER_TTL_MS);
  const realtime = await createRealtimeNode({
    appKey: app.key,
    appSecret: app.secret,
    activityTimeoutSeconds: broadcast.activityTimeoutSeconds,
    pongTimeoutSeconds: PONG_TIMEOUT_SECONDS,
    maxMessageBytes: broadcast.maxMessageBytes,
    maxBufferedBytes: broadcast.maxBufferedBytes,
    maxConnections: app.maxConnections,
    maxConnectionsPerAddress: broadcast.maxConnectionsPerAddress,
    trustedProxies: config.trustedProxies,
    maxChannelsPerConnection: broadcast.maxChannelsPerConnection,
    maxFramesPerSecond: broadcast.maxFramesPerSecond,
    maxFrameBurst: broadcast.maxFrameBurst,
    maxPresenceMembers: broadcast.maxPresenceMembers,
    allowedOrigins: broadcast.allowedOrigins,
    clientEvents: { enabled: app.clientEvents, perSecond: broadcast.clientEventsPerSecond, maxDataBytes: broadcast.maxEventBytes },
    // Chat traffic goes through the HTTP API, where it is authorized, rate limited and blocked users are refused.
    serverOwnedChannelPrefixes: app.chat ? [CHAT_CHANNEL_PREFIX] : [],
    // Relaying another Parley's chat (BROADCAST_CHAT_CHANNELS=relay), that Parley authorizes and revokes them.
    revocableChannelPrefixes: app.chat && broadcast.chatChannels === 'own' ? [CONVERSATION_CHANNEL_PREFIX] : [],
    // With Redis: events reach only the nodes subscribed to their channel; presence members and (for the
    // webhooks) each channel_occupied/channel_vacated are decided once per cluster.
    broker: redis ? redisBroker(redis, nodeId, appLogger.child({ component: 'fanout' })) : localBroker(),
    presence: redis ? redisPresence(redis, nodeId) : LOCAL_PRESENCE,
    authorizations,
    webhooks: app.webhookUrls.length > 0 ? createWebhookSender({ urls: app.webhookUrls, appKey: app.key, appSecret: app.secret, logger: appLogger }) : null,
    logger: appLogger.child({ component: 'realtime' }),
  });
  return { id: app.id, key: app.key, secret: app.secret, realtime, authorizations };
}

function sumStats(all: readonly RealtimeStats[]): RealtimeStats {
  return all.reduce((sum, s) => ({
    connections: sum.connections + s.connections,
    channels: sum.channels + s.channels,
    subscriptions: sum.subscriptions + s.subscriptions,
    clusterReceived: sum.clusterReceived + s.clusterReceived,
  }));
}
