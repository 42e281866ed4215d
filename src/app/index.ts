// The one composition root: createApp builds this node from its Config, step by step, each step in a file of
// this folder: stores (database, Redis), builtin-server (the built-in Pusher server's apps), broadcast (where events go),
// delivery (outbox, webhooks, Web Push), chat (context, online status, typing), jobs (periodic work), http.
import type { Logger } from 'pino';
import type { AttachmentSweeper } from '../chat/attachment-sweeper.js';
import type { ChatContext } from '../chat/context.js';
import type { ErasureWorker } from '../chat/erasure.js';
import type { RetentionSweeper } from '../chat/retention.js';
import type { Config } from '../config/index.js';
import type { OutboxWorker } from '../delivery/outbox-worker.js';
import { createMetrics } from '../ops/metrics.js';
import type { WebPush } from '../delivery/web-push/index.js';
import type { RealtimeNode } from '../realtime/index.js';
import type { Database } from '../store/database.js';
import type { RedisConnections } from '../redis/connections.js';
import { listenStartupError } from '../startup-errors.js';
import { startBroadcast } from './broadcast.js';
import { createChat, onlineStatus } from './chat.js';
import { startDelivery } from './delivery.js';
import { startHttp, type HttpApp } from './http.js';
import { createAttachmentStorage, createJobs } from './jobs.js';
import { realtimeStats, startPusherApps } from './builtin-server.js';
import { openStores } from './stores.js';

export interface App {
  readonly http: HttpApp;
  readonly database: Database;
  readonly redis: RedisConnections | null;
  readonly realtime: RealtimeNode | null;
  readonly chat: ChatContext;
  /** Deletes unsent uploads and files of deleted messages, one pass a minute once listening (one node at a time). */
  readonly attachmentSweeper: AttachmentSweeper;
  /** Web Push: VAPID keys, the subscription rules and the MessageSent deliverer (for the outbox). */
  readonly push: WebPush;
  /** The outbox's delivery worker of this node (webhooks, pushes; src/delivery). */
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

/**
 * How many connections may wait to be accepted. Node's default, 511, overflows when the sockets of a node that died
 * come back at once (2,500 to each of two nodes): the kernel drops the SYNs past it and each client waits a second or
 * more to retry. The kernel caps it at net.core.somaxconn (4096 on current Linux).
 */
const LISTEN_BACKLOG = 4096;

export async function createApp(config: Config, logger: Logger): Promise<App> {
  const stores = await openStores(config, logger);
  const { database, redis, replicas } = stores;
  const apps = await startPusherApps(config, redis, logger);
  const metrics = createMetrics({
    realtime: () => realtimeStats(apps),
    databasePool: () => database.poolStats(),
    readReplicas: () => replicas?.stats() ?? null,
    redisUp: () => (redis ? redis.isReady() : null),
    clusterReceived: () => (redis ? (realtimeStats(apps)?.clusterReceived ?? null) : null),
    clusterDelivered: () => (redis ? (realtimeStats(apps)?.clusterDelivered ?? null) : null),
  });
  const { broadcaster, channels, pusherHttp } = await startBroadcast(config, apps, metrics, logger);
  const online = onlineStatus(config, stores);
  const { outbox, notifications, push } = startDelivery(config, database, online, metrics, logger);
  const chat = await createChat(config, stores, broadcaster, notifications, online, logger);
  const storage = createAttachmentStorage(config);
  const jobs = createJobs(config, chat.chat, storage, metrics, logger);
  const http = await startHttp(config, { stores, chat, apps, channels, storage, metrics, push: push.settings }, logger);

  return {
    http,
    database,
    redis,
    realtime: apps[0]?.realtime ?? null,
    chat: chat.chat,
    attachmentSweeper: jobs.attachmentSweeper,
    push,
    outbox,
    retention: jobs.retention,
    erasure: jobs.erasure,
    async listen() {
      await http.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }).catch((err: unknown) => {
        throw listenStartupError(err, config.host, config.port);
      });
      jobs.start();
      outbox.start();
      const address = http.server.address();
      return typeof address === 'object' && address ? address.port : config.port;
    },
    async close() {
      chat.stop();
      const httpClosed = http.close(); // stops accepting at once; resolves when in-flight requests are done
      // A keep-alive connection whose request finishes after this point is idle but open, and would hold the
      // close until the client drops it (Fastify's keep-alive timeout is 72 s): close such connections as they idle.
      const closeIdle = setInterval(() => http.server.closeIdleConnections(), 50);
      try {
        await Promise.all(apps.map((app) => app.realtime.close(4200)));
        await httpClosed;
      } finally {
        clearInterval(closeIdle);
      }
      await outbox.stop();
      pusherHttp?.close();
      await jobs.stop();
      await redis?.close();
      await replicas?.close();
      await database.close();
    },
  };
}
