// Clean-up of attachment files, a job of each node: uploads never sent within CHAT_UNSENT_UPLOAD_TTL_S, and
// attachments whose every message was deleted more than a grace period ago (a forward that is still there keeps
// the file). One node at a time, rows first: the pass's SQL (its lock, the rows it takes) is the store's
// (src/store/attachment-sweep.ts); the files are deleted here after its transaction commits.
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import { deleteSweptAttachments, storedAttachmentBytes } from '../store/attachment-sweep.js';
import type { DB } from '../store/database.js';

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
      const bytes = await storedAttachmentBytes(db).catch(() => undefined);
      if (bytes !== undefined) this.set(bytes);
    },
  });

  async function sweep(now = new Date()): Promise<SweepResult> {
    const taken = await deleteSweptAttachments(db, {
      unsentBefore: new Date(now.getTime() - unsentTtlSeconds * 1000),
      deletedBefore: new Date(now.getTime() - deletedGraceSeconds * 1000),
      limit: BATCH,
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
