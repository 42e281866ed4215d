// Clean-up of attachment files: uploads never sent within CHAT_UNSENT_UPLOAD_TTL_S, and attachments whose every
// message was deleted more than a grace period ago (a forward that is still there keeps the file). One node at a
// time: each pass runs under a transaction-scoped advisory lock that the other nodes skip (pg_try_advisory_xact_lock),
// and the rows it takes are locked FOR UPDATE SKIP LOCKED. Rows are deleted in the transaction; files after it
// commits, so a pass that fails midway never leaves a row without its file.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import type { DB } from '../store/database.js';
import { inTransaction } from '../store/transaction.js';

/** The advisory lock key of the sweep (any bigint unique to it): 'parley attachments' folded into 63 bits. */
export const SWEEP_LOCK = 7_031_982_451_006_001n;
/** Rows handled per pass (per kind); the next pass takes the rest. */
const BATCH = 200;
/** Default time after a message's deletion before its file goes: a day, so a deletion seen late still has a window. */
export const DELETED_FILE_GRACE_S = 86_400;

export interface SweepResult {
  /** False when another node held the sweep: this pass did nothing. */
  readonly ran: boolean;
  readonly unsent: { readonly count: number; readonly bytes: number };
  readonly deleted: { readonly count: number; readonly bytes: number };
}

export interface AttachmentSweeper {
  /** One pass at `now`. */
  sweep(now?: Date): Promise<SweepResult>;
  /** Runs a pass every intervalMs (the first after one interval) until stop(). */
  start(intervalMs?: number): void;
  stop(): Promise<void>;
}

export interface SweeperOptions {
  readonly db: DB;
  readonly storage: AttachmentStorage;
  readonly unsentTtlSeconds: number;
  readonly deletedGraceSeconds?: number;
  readonly logger?: Logger;
  /** Where parley_attachment_* metrics are registered (the app's /metrics registry). */
  readonly registry?: Registry;
}

export function createAttachmentSweeper(options: SweeperOptions): AttachmentSweeper {
  const { db, storage, unsentTtlSeconds, deletedGraceSeconds = DELETED_FILE_GRACE_S, logger } = options;
  const registers = options.registry ? [options.registry] : [];
  const deletedBytes = new Counter({
    name: 'parley_attachment_bytes_deleted_total',
    help: 'Bytes of attachment files deleted by the sweeper, by reason (unsent upload, deleted message)',
    labelNames: ['reason'],
    registers,
  });
  new Gauge({
    name: 'parley_attachment_bytes_stored',
    help: 'Bytes of all attachments stored (the sum of their sizes in the database)',
    registers,
    async collect() {
      const row = await db
        .selectFrom('attachments')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<string | number>('size'), eb.lit(0)).as('bytes'))
        .executeTakeFirst()
        .catch(() => undefined);
      if (row) this.set(Number(row.bytes));
    },
  });

  async function sweep(now = new Date()): Promise<SweepResult> {
    const unsentBefore = new Date(now.getTime() - unsentTtlSeconds * 1000);
    const deletedBefore = new Date(now.getTime() - deletedGraceSeconds * 1000);
    const taken = await inTransaction(db, async (trx) => {
      const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${SWEEP_LOCK}) as locked`.execute(trx);
      if (!rows[0]?.locked) return null;
      // Never sent: no message (live or deleted) carries it.
      const unsent = await trx
        .selectFrom('attachments as a')
        .select(['a.id', 'a.storage_key', 'a.thumbnail_key', 'a.size'])
        .where('a.created_at', '<', unsentBefore)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('messages as m').select('m.id').whereRef('m.attachment_id', '=', 'a.id'))))
        .orderBy('a.id')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute();
      // Sent, and every message carrying it (the original and its forwards) deleted before the grace cut-off.
      const deleted = await trx
        .selectFrom('attachments as a')
        .select(['a.id', 'a.storage_key', 'a.thumbnail_key', 'a.size'])
        .where(({ exists, selectFrom }) => exists(selectFrom('messages as m').select('m.id').whereRef('m.attachment_id', '=', 'a.id')))
        .where(({ not, exists, selectFrom }) =>
          not(exists(
            selectFrom('messages as m')
              .select('m.id')
              .whereRef('m.attachment_id', '=', 'a.id')
              .where((m) => m.or([m('m.deleted_at', 'is', null), m('m.deleted_at', '>=', deletedBefore)])),
          )))
        .orderBy('a.id')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute();
      const ids = [...unsent, ...deleted].map((a) => a.id);
      if (ids.length > 0) {
        await trx.updateTable('messages').set({ attachment_id: null }).where('attachment_id', 'in', ids).execute();
        await trx.deleteFrom('attachments').where('id', 'in', ids).execute();
      }
      return { unsent, deleted };
    });
    if (!taken) return { ran: false, unsent: { count: 0, bytes: 0 }, deleted: { count: 0, bytes: 0 } };
    const remove = async (rows: readonly { storage_key: string; thumbnail_key: string | null; size: number }[], reason: string) => {
      let bytes = 0;
      for (const row of rows) {
        try {
          await storage.delete(row.storage_key);
          if (row.thumbnail_key !== null) await storage.delete(row.thumbnail_key);
          bytes += Number(row.size);
        } catch (err) {
          // The row is gone; the file stays behind (found by listing the store). Logged, the sweep goes on.
          logger?.error({ err, storage_key: row.storage_key }, 'attachment sweeper could not delete a file');
        }
      }
      deletedBytes.inc({ reason }, bytes);
      return { count: rows.length, bytes };
    };
    const result = {
      ran: true,
      unsent: await remove(taken.unsent, 'unsent'),
      deleted: await remove(taken.deleted, 'message_deleted'),
    };
    if (result.unsent.count + result.deleted.count > 0) logger?.info(result, 'attachment sweeper deleted files');
    return result;
  }

  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  return {
    sweep,
    start(intervalMs = 60_000) {
      timer ??= setInterval(() => {
        running = sweep().catch((err: unknown) => logger?.warn({ err }, 'attachment sweep failed; the next one retries'));
      }, intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
