// The built-in Pusher server's apps (BROADCAST_DRIVER=builtin): the default one, which carries the chat, and
// BROADCAST_APPS_FILE's, each isolated under a Redis prefix of its own (src/realtime/apps.ts).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { PusherAppConfig } from '../config/pusher-apps.js';
import {
  createRealtimeNode,
  createWebhookSender,
  memoryParts,
  redisForApp,
  redisParts,
  type AuthorizationLedger,
  type RealtimeNode,
  type RealtimeStats,
} from '../realtime/index.js';
import { realtimeSettingsFrom } from '../realtime/node-settings.js';
import type { RedisConnections } from '../redis/connections.js';

/** One Pusher app of the built-in server: its realtime node (also its HTTP API's backend) and its authorization store. */
export interface PusherApp {
  readonly id: string;
  readonly key: string;
  readonly secret: string;
  readonly realtime: RealtimeNode;
  /** Where the HTTP auth endpoint records whose subscription a signature is for (the node claims it on subscribe). */
  readonly authorizations: AuthorizationLedger;
}

/** The default app first, then BROADCAST_APPS_FILE's; empty when the built-in server is off. */
export async function startPusherApps(config: Config, redis: RedisConnections | null, logger: Logger): Promise<readonly PusherApp[]> {
  const { broadcast } = config;
  if (broadcast.driver !== 'builtin') return [];
  // This process in the cluster: its broker, presence and occupancy shares are all keyed by this one id.
  const nodeId = randomUUID();
  const defaultApp = await startPusherApp(config, redis, nodeId, logger, {
    id: broadcast.appId,
    key: broadcast.appKey,
    secret: broadcast.appSecret,
    webhookUrls: broadcast.webhookUrls,
    clientEvents: broadcast.clientEvents,
    maxConnections: broadcast.maxConnections,
    chat: true,
  });
  const otherApps = await Promise.all(broadcast.apps.map((app) => startPusherApp(config, redis, nodeId, logger, { ...app, chat: false })));
  return [defaultApp, ...otherApps];
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
  const redis = deploymentRedis && (app.chat ? deploymentRedis : redisForApp(deploymentRedis, app.id));
  const appLogger = app.chat ? logger : logger.child({ app: app.id });
  // With Redis: events reach only the nodes subscribed to their channel; presence members and (for the
  // webhooks) each channel_occupied/channel_vacated are decided once per cluster.
  const parts = redis ? redisParts(redis, nodeId, appLogger) : memoryParts();
  const realtime = await createRealtimeNode({
    ...realtimeSettingsFrom(config, app),
    ...parts,
    webhooks: app.webhookUrls.length > 0 ? createWebhookSender({ urls: app.webhookUrls, appKey: app.key, appSecret: app.secret, logger: appLogger }) : null,
    logger: appLogger.child({ component: 'realtime' }),
  });
  return { id: app.id, key: app.key, secret: app.secret, realtime, authorizations: realtime.authorizations };
}

/** The apps' sockets, channels and subscriptions on this node together (for /metrics); null without the built-in server. */
export function realtimeStats(apps: readonly PusherApp[]): RealtimeStats | null {
  if (apps.length === 0) return null;
  return apps.map((app) => app.realtime.stats()).reduce((sum, s) => ({
    connections: sum.connections + s.connections,
    channels: sum.channels + s.channels,
    subscriptions: sum.subscriptions + s.subscriptions,
    clusterReceived: sum.clusterReceived + s.clusterReceived,
    clusterDelivered: sum.clusterDelivered + s.clusterDelivered,
  }));
}
