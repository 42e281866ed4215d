// Message retention (CHAT_MESSAGE_RETENTION_DAYS): messages older than the retention are deleted for good, with
// their attachment files, by a background sweep in batches of BATCH messages, each its own short unit of work
// (the batch's conversations locked in ascending id, as every writer does), so sends keep their latency. One node
// at a time: each batch runs under a transaction-scoped advisory lock the other nodes skip. The first pass runs
// within a minute of start, then every hour.
//
// What it tells: no MessageDeleted (a first sweep after enabling retention may delete millions of messages; live
// clients would get an event for each, and webhooks a POST for each). Clients drop what is past retention on their
// next load. Unread counts lose the deleted messages in the same transaction, and InboxUpdated goes to whoever's
// inbox entry changed: everyone in a conversation whose last message went, and each reader whose counts fell. Threads go with their root; a reply to a deleted
// message keeps its text but loses its preview (reply_to null).
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import { lockConversations } from '../store/locks.js';
import { deleteExpired, expiredMessages } from '../store/retention.js';
import { SERVER, type ChatContext } from './context.js';
import { drainFileDeletions } from './file-deletions.js';
import { announceInboxes } from './inboxes-changed.js';
import { periodic, type Periodic } from './periodic.js';
import { unitOfWork } from './unit-of-work.js';

/** The advisory lock key of the sweep (any bigint unique to it). */
export const RETENTION_LOCK = 7_031_982_451_006_004n;
/** Messages per batch (one short transaction each). */
export const RETENTION_BATCH = 500;
const DAY_MS = 86_400_000;

export interface RetentionSweeper extends Omit<Periodic, 'stopping'> {
  /** Deletes every message older than the retention at `now`, batch by batch; how many (0 when another node holds it). */
  sweep(now?: Date): Promise<number>;
}

export function createRetentionSweeper(options: { ctx: ChatContext; storage: AttachmentStorage; retentionDays: number; logger?: Logger }): RetentionSweeper {
  const { ctx, storage, retentionDays, logger } = options;

  async function sweep(now = new Date()): Promise<number> {
    const before = new Date(now.getTime() - retentionDays * DAY_MS);
    let total = 0;
    // A pass walks windows of the oldest messages; it ends at the first window with nothing past retention.
    let afterId = 0;
    for (;;) {
      const batch = await unitOfWork(ctx, SERVER, async (work) => {
        const { trx } = work;
        const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${RETENTION_LOCK}) as locked`.execute(trx);
        if (!rows[0]?.locked) return null;
        const { expired, lastId } = await expiredMessages(trx, before, afterId, RETENTION_BATCH);
        await lockConversations(trx, expired.map((m) => m.conversation_id));
        announceInboxes(work, await deleteExpired(trx, expired.map((m) => m.id), new Date()));
        return { deleted: expired.length, lastId };
      });
      if (batch === null) break;
      total += batch.deleted;
      await drainFileDeletions(ctx.db, storage, logger);
      if (batch.deleted === 0 || batch.lastId === null || schedule.stopping) break;
      afterId = batch.lastId;
    }
    if (total > 0) logger?.info({ deleted: total, before }, 'message retention: messages past retention deleted');
    return total;
  }

  const schedule = periodic(() => sweep(), { firstDelayMs: 30_000, intervalMs: 3_600_000 }, (err) =>
    logger?.warn({ err }, 'message retention sweep failed; the next pass retries'));
  return { sweep, start: schedule.start, stop: schedule.stop };
}
