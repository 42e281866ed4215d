// The attachment sweeper's SQL (the job is src/chat/attachment-sweeper.ts): which attachment rows may go, taken and
// deleted in one transaction by one node at a time, and the bytes stored for the gauge. The pass holds a
// transaction-scoped advisory lock that the other nodes skip (pg_try_advisory_xact_lock), and the rows it takes are
// locked FOR UPDATE SKIP LOCKED. The caller deletes the files after the commit, so a pass that fails midway never
// leaves a row without its file.
import { sql } from 'kysely';
import type { DB } from './database.js';
import { inTransaction } from './transaction.js';

/** The advisory lock key of the sweep (any bigint unique to it): 'parley attachments' folded into 63 bits. */
export const SWEEP_LOCK = 7_031_982_451_006_001n;

/** A deleted attachment row: where its files are, and its size. */
export interface SweptAttachment {
  readonly id: number;
  readonly storage_key: string;
  readonly thumbnail_key: string | null;
  readonly size: number;
}

/**
 * Deletes up to `limit` rows of each kind and returns them: uploads made before unsentBefore that no message
 * (live or deleted) carries, and attachments whose every message (the original and its forwards) was deleted
 * before deletedBefore. Null when another node holds the sweep.
 */
export async function deleteSweptAttachments(
  db: DB,
  { unsentBefore, deletedBefore, limit }: { readonly unsentBefore: Date; readonly deletedBefore: Date; readonly limit: number },
): Promise<{ readonly unsent: readonly SweptAttachment[]; readonly deleted: readonly SweptAttachment[] } | null> {
  return inTransaction(db, async (trx) => {
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
      .limit(limit)
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
      .limit(limit)
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
}

/** Bytes of all attachments stored (the sum of their sizes in the database). */
export async function storedAttachmentBytes(db: DB): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string | number>('size'), eb.lit(0)).as('bytes'))
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}
