// The database and Redis of this node, opened in that order. A dependency that fails here stops the start with
// one line saying which and how to fix it (src/startup-errors.ts).
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { migrateToLatest, openDatabase, type Database } from '../store/database.js';
import { openRedis, type RedisConnections } from '../redis/connections.js';
import { databaseStartupError, redisStartupError } from '../startup-errors.js';

export interface Stores {
  readonly database: Database;
  /** REDIS_URL's connections; null: this node alone (everything shared stays in memory). */
  readonly redis: RedisConnections | null;
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
  if (config.redisUrl) {
    try {
      redis = await openRedis(config.redisUrl, config.redisPrefix, logger.child({ component: 'redis' }));
    } catch (err) {
      await database.close().catch(() => {});
      throw redisStartupError(err, config.redisUrl);
    }
  }
  return { database, redis };
}
