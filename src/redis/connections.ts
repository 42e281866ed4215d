// src/redis: the deployment's Redis connections (REDIS_URL), opened once by the composition root and shared by
// every part that keeps state across nodes: the realtime node's broker, presence, occupancy and authorizations,
// the rate limits, typing, online status and the store's known-users cache. Each keeps its keys under the
// deployment's prefix.
//
// Redis connections for several nodes: one for commands, one for pub/sub (a subscribed connection can do
// nothing else). ioredis reconnects by itself and re-subscribes after a Redis restart.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';

export interface RedisConnections {
  readonly commands: Redis;
  readonly subscriber: Redis;
  /** Key prefix shared by every node of one deployment. */
  readonly prefix: string;
  isReady(): boolean;
  close(): Promise<void>;
}

export async function openRedis(url: string, prefix: string, logger: Logger): Promise<RedisConnections> {
  const options = {
    lazyConnect: true,
    // Fail fast while Redis is away (the request gets a 503) instead of queueing commands without bound.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    // Commands issued in the same tick (a dispatch's publishes) go out in one round trip.
    enableAutoPipelining: true,
    retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
  };
  const commands = new Redis(url, options);
  const subscriber = new Redis(url, { ...options, enableOfflineQueue: true });
  // At startup Redis must answer at once: the first failure rejects (the caller says so in one line) rather
  // than retrying in the background. Once connected, ioredis reconnects by itself and errors are logged.
  const connections = [['commands', commands], ['subscriber', subscriber]] as const;
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
    connection.on('error', (err: Error) => logger.warn({ err: err.message, connection: name }, 'redis error'));
    connection.on('ready', () => logger.info({ connection: name }, 'redis ready'));
  }
  return {
    commands,
    subscriber,
    prefix,
    isReady: () => commands.status === 'ready' && subscriber.status === 'ready',
    async close() {
      await Promise.allSettled([commands.quit(), subscriber.quit()]);
    },
  };
}
