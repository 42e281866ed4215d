// Taking many messages out of their conversations at once (an erasure's batch, a retention sweep's): the set-based
// form of softDelete's bookkeeping (store/messages.ts), run under the conversations' write locks. Before the
// messages go, each participant who had not read them loses them from their unread counts; after, each
// conversation whose last message went falls back to the newest one still visible. Files of attachments no
// message carries any more are queued for deletion (file_deletions) in the same transaction.
import { sql } from 'kysely';
import type { DB } from './database.js';
import type { ReaderState } from './read-model.js';

/** What taking messages out changed in inboxes: conversations whose last message went, and readers whose unread counts fell. */
export interface InboxesChanged {
  readonly lastMessages: readonly number[];
  /** Per conversation, the readers whose counts changed, as they now are. */
  readonly readers: ReadonlyMap<number, ReaderState[]>;
}

const ids = (list: readonly number[]) => sql`${list.map(String)}::bigint[]`;

/**
 * Before visible messages (among `messageIds`) are deleted: every participant who had not read one of them, sent by
 * someone else, in the conversation itself (thread replies never counted) and not hidden by them, has one unread
 * message fewer, and one unread mention fewer when it mentioned them. Returns those readers, by conversation.
 */
export async function uncountUnread(db: DB, messageIds: readonly number[]): Promise<Map<number, ReaderState[]>> {
  const readers = new Map<number, ReaderState[]>();
  if (messageIds.length === 0) return readers;
  const { rows } = await sql<ReaderState & { conversation_id: string }>`
    update participants p set
      unread_count = greatest(p.unread_count - x.unread, 0),
      unread_mention_count = greatest(p.unread_mention_count - x.mentions, 0)
    from (
      select r.conversation_id, r.user_id, count(*) as unread, count(mm.user_id) as mentions
      from messages m
      join participants r on r.conversation_id = m.conversation_id and r.last_read_message_id < m.id and r.user_id <> m.sender_id
      left join message_mentions mm on mm.message_id = m.id and mm.user_id = r.user_id
      where m.id = any(${ids(messageIds)}) and m.deleted_at is null and m.thread_id is null
        and not exists (select 1 from hidden_messages h where h.user_id = r.user_id and h.message_id = m.id)
      group by r.conversation_id, r.user_id
    ) x
    where p.conversation_id = x.conversation_id and p.user_id = x.user_id
    returning p.conversation_id, p.user_id, p.unread_count, p.last_read_at, p.unread_mention_count, p.muted, p.muted_until`.execute(db);
  for (const { conversation_id, ...reader } of rows) {
    const id = Number(conversation_id);
    readers.set(id, [...(readers.get(id) ?? []), { ...reader, user_id: Number(reader.user_id) }]);
  }
  return readers;
}

/**
 * After messages were deleted: each conversation whose last message was one of them falls back (last message and
 * place in the inbox) to the newest visible message, or its creation when none is left. Returns those conversations.
 */
export async function restoreLastMessages(db: DB, messageIds: readonly number[], now: Date): Promise<number[]> {
  if (messageIds.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    update conversations c set
      last_message_id = (select max(m.id) from messages m where m.conversation_id = c.id and m.thread_id is null and m.deleted_at is null),
      last_activity_at = coalesce((select m.created_at from messages m
        where m.conversation_id = c.id and m.thread_id is null and m.deleted_at is null order by m.id desc limit 1), c.created_at),
      updated_at = ${now}
    where c.last_message_id = any(${ids(messageIds)})
    returning c.id`.execute(db);
  return rows.map((r) => Number(r.id));
}

/**
 * Deletes the attachment rows among `attachmentIds` that no message carries any more, queueing their files (and
 * thumbnails) in file_deletions; the rows are locked first (a send key-share-locks what it sends). Returns how many.
 */
export async function deleteUnusedAttachments(db: DB, attachmentIds: readonly number[]): Promise<number> {
  if (attachmentIds.length === 0) return 0;
  const { rows } = await sql<{ n: string }>`
    with unused as (
      select a.id from attachments a
      where a.id = any(${ids(attachmentIds)}) and not exists (select 1 from messages m where m.attachment_id = a.id)
      order by a.id for update
    ),
    gone as (delete from attachments a using unused u where a.id = u.id returning a.storage_key, a.thumbnail_key),
    queued as (
      insert into file_deletions (storage_key)
      select k from gone, unnest(array[gone.storage_key, gone.thumbnail_key]) k where k is not null
      on conflict do nothing returning 1
    )
    select count(*) as n from gone`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** Files queued for deletion, oldest first. */
export async function queuedFileDeletions(db: DB, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('file_deletions').select('storage_key').orderBy('queued_at').limit(limit).execute();
  return rows.map((r) => r.storage_key);
}

export async function forgetFileDeletions(db: DB, keys: readonly string[]): Promise<void> {
  if (keys.length > 0) await db.deleteFrom('file_deletions').where('storage_key', 'in', keys).execute();
}
