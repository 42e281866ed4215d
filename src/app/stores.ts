// The database, Redis and the database's read replicas of this node, opened in that order. A dependency that
// fails here stops the start with one line saying which and how to fix it (src/startup-errors.ts); a replica
// that does not answer does not (it is skipped until it does: store/read-replicas.ts).
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { migrateToLatest, openDatabase, type Database } from '../store/database.js';
import { memoryWriteFences, openReadReplicas, type ReadReplicas, type WriteFences } from '../store/read-replicas.js';
import { openRedis, type RedisConnections } from '../redis/connections.js';
import { databaseStartupError, redisStartupError } from '../startup-errors.js';

export interface Stores {
  readonly database: Database;
  /** The connections to REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS; null: this node alone (everything shared stays in memory). */
  readonly redis: RedisConnections | null;
  /** DATABASE_REPLICA_URLS's replicas, for the reads that tolerate lag; null without them. */
  readonly replicas: ReadReplicas | null;
}

/** Users' write fences (read-your-writes): with Redis shared by the nodes, so a user's next request may reach any node. */
function writeFences(redis: RedisConnections | null, ttlMs: number): WriteFences {
  if (!redis) return memoryWriteFences(ttlMs);
  const key = (userId: number) => `${redis.prefix}write-fence:${userId}`;
  return {
    mark: async (userId) => void (await redis.commands.set(key(userId), '1', 'PX', ttlMs)),
    active: async (userId) => (await redis.commands.exists(key(userId))) > 0,
  };
}

export async function openStores(config: Config, logger: Logger): Promise<Stores> {
  let database: Database;
  try {
    database = await openDatabase({ ...config, onWarning: (message) => logger.warn(message) });
    await migrateToLatest(database.db);
  } catch (err) {
    throw databaseStartupError(err, config.databaseUrl, config.dataDir);
  }
  let redis: RedisConnections | null = null;
  if (config.redis) {
    try {
      redis = await openRedis(config.redis, config.redisPrefix, logger.child({ component: 'redis' }));
    } catch (err) {
      await database.close().catch(() => {});
      throw redisStartupError(err, config.redis);
    }
  }
  const replicas =
    config.databaseReplicaUrls.length === 0
      ? null
      : await openReadReplicas(database.db, {
          urls: config.databaseReplicaUrls,
          maxLagMs: config.databaseReplicaMaxLagMs,
          // A margin over the max lag for the clocks of Redis and of the nodes, which time the fence and the lag apart.
          fences: writeFences(redis, config.databaseReplicaMaxLagMs + 50),
          preparedStatements: config.databasePreparedStatements,
          onChange: ({ replica, state, detail }) =>
            logger[state === 'usable' ? 'info' : 'warn']({ replica, state, detail }, `database replica ${replica + 1} is ${state}`),
        });
  return { database, redis, replicas };
}
