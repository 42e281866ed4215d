// src/redis: the deployment's Redis connections, opened once by the composition root and shared by every part
// that keeps state across nodes: the realtime node's broker, presence, occupancy and authorizations, the rate
// limits, typing, online status and the store's known-users cache. Each keeps its keys under the deployment's
// prefix. Three kinds of deployment (RedisTarget): one Redis (REDIS_URL), a Sentinel-managed primary
// (REDIS_SENTINELS) or a Redis Cluster (REDIS_CLUSTER_NODES).
//
// One connection for commands and one for pub/sub (a subscribed connection can do nothing else). ioredis
// reconnects by itself and re-subscribes after a Redis restart; behind Sentinel it asks the sentinels for the
// primary on every reconnection, so a failover is followed without a restart. On a Cluster, two ioredis Cluster
// clients: each follows MOVED/ASK and refreshes its slot map when a master fails over, and the subscriber's
// shardedSubscribers keep one connection per master for the shard channels (SSUBSCRIBE), moved when a slot moves.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { redisPubSub, type RedisPubSub } from './pubsub.js';

/** Where the deployment's Redis is. */
export type RedisTarget =
  | { readonly kind: 'single'; readonly url: string }
  | { readonly kind: 'sentinel'; readonly sentinels: readonly HostPort[]; readonly master: string }
  | { readonly kind: 'cluster'; readonly nodes: readonly HostPort[] };

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** A client that runs commands: one Redis (or the Sentinel's primary), or a Cluster routing each key to its master. */
export type RedisCommands = Redis | Cluster;

export interface RedisConnections {
  readonly kind: RedisTarget['kind'];
  readonly commands: RedisCommands;
  /** The pub/sub connection. Parts use `pubsub`, which hides what kind of pub/sub it is. */
  readonly subscriber: RedisCommands;
  /** Topics between nodes: PUBLISH/SUBSCRIBE on one Redis, shard channels (SPUBLISH/SSUBSCRIBE) on a Cluster. */
  readonly pubsub: RedisPubSub;
  /** Key prefix shared by every node of one deployment. */
  readonly prefix: string;
  isReady(): boolean;
  close(): Promise<void>;
}

/**
 * Keys one script or transaction uses together must share a slot in a Redis Cluster; `{...}` (a hash tag) names
 * the part of a key that decides its slot. `slotGroup(prefix, 'presence')` starts every key of that group, so
 * the group sits in one slot while other groups (and other prefixes) spread over the cluster. The same names
 * serve one Redis, where slots do not matter.
 */
export function slotGroup(prefix: string, group: string): string {
  return `${prefix}{${prefix}${group}}`;
}

const COMMON = {
  lazyConnect: true,
  // Commands issued in the same tick (a dispatch's publishes) go out in one round trip.
  enableAutoPipelining: true,
} as const;

/** Per connection: fail fast while Redis is away (the request gets a 503) instead of queueing commands without bound. */
const NODE_OPTIONS = {
  ...COMMON,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
  // A primary demoted by a failover answers writes with READONLY: reconnect, to the new primary.
  reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 2 : false),
} satisfies RedisOptions;

export async function openRedis(target: RedisTarget | string, prefix: string, logger: Logger): Promise<RedisConnections> {
  const where: RedisTarget = typeof target === 'string' ? { kind: 'single', url: target } : target;
  if (where.kind === 'cluster') return openCluster(where, prefix, logger);
  const create = (options: RedisOptions) =>
    where.kind === 'single'
      ? new Redis(where.url, options)
      : new Redis({
          ...options,
          sentinels: where.sentinels.map(({ host, port }) => ({ host, port })),
          name: where.master,
          // No failoverDetector: in ioredis 6.0.0 its +switch-master disconnect, arriving while the client is
          // already reconnecting to the dead primary, ended the client for good (seen in the Sentinel fault
          // test). A lost primary drops the connection anyway, and every reconnection asks the sentinels.
          sentinelRetryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
        });
  const commands = create(NODE_OPTIONS);
  const subscriber = create({ ...NODE_OPTIONS, enableOfflineQueue: true });
  const connections = [['commands', commands], ['subscriber', subscriber]] as const;
  await connectAll(connections, logger);
  return {
    kind: where.kind,
    commands,
    subscriber,
    pubsub: redisPubSub({ kind: 'classic', commands, subscriber }),
    prefix,
    isReady: () => commands.status === 'ready' && subscriber.status === 'ready',
    async close() {
      await Promise.allSettled([commands.quit(), subscriber.quit()]);
    },
  };
}

async function openCluster(target: Extract<RedisTarget, { kind: 'cluster' }>, prefix: string, logger: Logger): Promise<RedisConnections> {
  const create = (role: 'commands' | 'subscriber') =>
    new Cluster(
      target.nodes.map(({ host, port }) => ({ host, port })),
      {
        ...COMMON,
        // Commands: while the whole cluster is away they fail at once (a 503), as with one Redis. The subscriber
        // queues, so a channel subscribed meanwhile is subscribed once the cluster is back.
        enableOfflineQueue: role === 'subscriber',
        // While a master fails over, its slots' commands are retried every 100 ms, up to about 2 s; the callers'
        // own bounds (the rate limits' 250 ms, the broker's 1 s) limit what a request waits.
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        retryDelayOnTryAgain: 100,
        maxRedirections: 20,
        clusterRetryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
        // The slot map is refreshed on every MOVED and every lost node, and besides every 5 s.
        slotsRefreshInterval: 5_000,
        // The subscriber's SSUBSCRIBEs go to one connection per master (ioredis's sharded subscriber group).
        shardedSubscribers: role === 'subscriber',
        redisOptions: {
          connectTimeout: 2_000,
          maxRetriesPerRequest: 1,
        },
      },
    );
  const commands = create('commands');
  const subscriber = create('subscriber');
  await connectAll(
    [
      ['commands', commands],
      ['subscriber', subscriber],
    ],
    logger,
  );
  return {
    kind: 'cluster',
    commands,
    subscriber,
    pubsub: redisPubSub({ kind: 'sharded', commands, subscriber }),
    prefix,
    isReady: () => commands.status === 'ready' && subscriber.status === 'ready',
    async close() {
      await Promise.allSettled([commands.quit(), subscriber.quit()]);
    },
  };
}

/**
 * At startup Redis must answer at once: the first failure rejects (the caller says so in one line) rather than
 * retrying in the background. Once connected, ioredis reconnects by itself and errors are logged.
 */
async function connectAll(connections: readonly (readonly [string, RedisCommands])[], logger: Logger): Promise<void> {
  try {
    await Promise.all(
      connections.map(([, connection]) => {
        const failed = new Promise<never>((_, reject) => connection.once('error', reject));
        return Promise.race([connection.connect(), failed]);
      }),
    );
  } catch (err) {
    for (const [, connection] of connections) {
      connection.removeAllListeners('error');
      connection.on('error', () => {}); // a late error of a connection being dropped
      connection.disconnect();
    }
    throw err;
  }
  for (const [name, connection] of connections) {
    connection.removeAllListeners('error');
    // A Cluster's lost master errors once per queued command: said at most once a second.
    let saidAt = 0;
    connection.on('error', (err: Error) => {
      if (Date.now() - saidAt < 1_000) return;
      saidAt = Date.now();
      logger.warn({ err: err.message, connection: name }, 'redis error');
    });
    connection.on('ready', () => logger.info({ connection: name }, 'redis ready'));
  }
}
