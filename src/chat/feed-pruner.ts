// Retention of the change feed: changes older than CHAT_SYNC_RETENTION_S (and participation spans that ended
// before then) are deleted in bounded batches, so no pass holds locks for long. One node at a time: each batch
// runs under a transaction-scoped advisory lock that the other nodes skip. A cursor older than the retention is
// refused by GET /sync (410) before it could miss what was deleted; an hour of slack keeps the changes of a
// transaction that began before a cursor was handed out but committed after it.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { pruneChanges } from '../store/change-feed.js';
import type { DB } from '../store/database.js';
import { inTransaction } from '../store/transaction.js';
import { periodic } from './periodic.js';

/** The advisory lock key of the pruning (any bigint unique to it). */
export const PRUNE_LOCK = 7_031_982_451_006_002n;
const BATCH = 5_000;
const SLACK_MS = 3_600_000;

export interface FeedPruner {
  /** Deletes what is past retention at `now`, batch by batch; the number of changes deleted (0 when another node holds it). */
  prune(now?: Date): Promise<number>;
  /** A pass within a minute, then every intervalMs, until stop(). */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

export function createFeedPruner(options: { db: DB; retentionSeconds: number; logger?: Logger }): FeedPruner {
  const { db, retentionSeconds, logger } = options;

  async function prune(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - retentionSeconds * 1000 - SLACK_MS);
    let total = 0;
    for (;;) {
      const deleted = await inTransaction(db, async (trx) => {
        const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${PRUNE_LOCK}) as locked`.execute(trx);
        return rows[0]?.locked ? pruneChanges(trx, before, BATCH) : 0;
      });
      total += deleted;
      if (deleted < BATCH || schedule.stopping) break;
    }
    if (total > 0) logger?.info({ deleted: total }, 'change feed: changes past retention deleted');
    return total;
  }

  const schedule = periodic(() => prune(), { firstDelayMs: 30_000, intervalMs: 3_600_000 }, (err) =>
    logger?.warn({ err }, 'change feed pruning failed; the next pass retries'));
  return {
    prune,
    start: (intervalMs) => schedule.start(intervalMs === undefined ? {} : { intervalMs }),
    stop: () => schedule.stop(),
  };
}
