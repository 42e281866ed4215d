// Attachments: rows of uploaded files (the bytes are in attachment-storage) and who may read them.
import type { DB } from './database.js';
import type { Attachment } from './schema.js';

export async function insertAttachment(
  db: DB,
  row: {
    uploader_id: number; name: string; mime_type: string; size: number; storage_key: string;
    width: number | null; height: number | null; thumbnail_key: string | null;
  },
  now: Date,
): Promise<Pick<Attachment, 'id' | 'name' | 'mime_type' | 'size' | 'width' | 'height' | 'thumbnail_key'>> {
  return db
    .insertInto('attachments')
    .values({ ...row, created_at: now })
    .returning(['id', 'name', 'mime_type', 'size', 'width', 'height', 'thumbnail_key'])
    .executeTakeFirstOrThrow();
}

/** The bytes of all the user's attachments together. */
export async function attachmentBytesOf(db: DB, uploaderId: number): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string | number>('size'), eb.lit(0)).as('bytes'))
    .where('uploader_id', '=', uploaderId)
    .executeTakeFirstOrThrow();
  return Number(row.bytes);
}

export async function findAttachment(db: DB, id: number): Promise<Attachment | undefined> {
  return db.selectFrom('attachments').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Whether a visible message carries the attachment in a conversation the user is in. */
export async function attachmentSharedWith(db: DB, attachmentId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('messages as m')
    .innerJoin('participants as p', 'p.conversation_id', 'm.conversation_id')
    .select('m.id')
    .where('m.attachment_id', '=', attachmentId)
    .where('m.deleted_at', 'is', null)
    .where('p.user_id', '=', userId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
