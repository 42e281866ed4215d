// Attachment files whose rows an erasure or a retention sweep deleted: queued in file_deletions in the deleting
// transaction, deleted from storage (local disk or S3) after it commits, then forgotten. A crash in between leaves
// the entry, so the next drain (on any node) deletes the file: no file outlives its row for good. Deleting a file
// that is gone already is not an error, so two nodes draining at once do no harm.
import type { Logger } from 'pino';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import type { DB } from '../store/database.js';
import { forgetFileDeletions, queuedFileDeletions } from '../store/removal.js';

const BATCH = 100;

/** Deletes every queued file; returns how many were deleted. A file that fails stays queued for the next drain. */
export async function drainFileDeletions(db: DB, storage: AttachmentStorage, logger?: Logger): Promise<number> {
  let total = 0;
  const failed = new Set<string>();
  for (;;) {
    const keys = (await queuedFileDeletions(db, BATCH + failed.size)).filter((key) => !failed.has(key));
    if (keys.length === 0) return total;
    const deleted: string[] = [];
    for (const key of keys) {
      try {
        await storage.delete(key);
        deleted.push(key);
      } catch (err) {
        failed.add(key);
        logger?.warn({ err, storage_key: key }, 'an attachment file could not be deleted; the next pass retries');
      }
    }
    await forgetFileDeletions(db, deleted);
    total += deleted.length;
  }
}
