// Message retention (CHAT_MESSAGE_RETENTION_DAYS, src/chat/retention.ts): the oldest messages, a batch at a
// time, deleted for good (rows, with their reactions, mentions, threads and hides by cascade).
import { sql } from 'kysely';
import type { DB } from './database.js';
import { deleteUnusedAttachments, restoreLastMessages, uncountUnread, type InboxesChanged } from './removal.js';

export interface ExpiredMessage {
  readonly id: number;
  readonly conversation_id: number;
}

/**
 * The messages written before `before` among the `limit` messages after id `afterId` (the next window of a pass),
 * with the replies of the thread roots among them (a thread goes with its root), and the window's last id (null:
 * no message after afterId). Ids grow with time, so a pass walks windows from the oldest message and stops at the
 * first window with nothing to delete: it never walks the messages it keeps.
 */
export async function expiredMessages(db: DB, before: Date, afterId: number, limit: number): Promise<{ expired: ExpiredMessage[]; lastId: number | null }> {
  const { rows } = await sql<{ id: string | null; conversation_id: string | null; last_id: string | null }>`
    with window_ as (select id, conversation_id, created_at from messages where id > ${afterId} order by id limit ${limit}),
    oldest as (select id, conversation_id from window_ where created_at < ${before}),
    expired as (
      select id, conversation_id from oldest
      union
      select r.id, r.conversation_id from messages r join oldest o on r.thread_id = o.id
    )
    select e.id, e.conversation_id, w.last_id
    from (select max(id) as last_id from window_) w left join expired e on true
    order by e.id`.execute(db);
  const expired = rows.flatMap((r) => (r.id === null ? [] : [{ id: Number(r.id), conversation_id: Number(r.conversation_id) }]));
  return { expired, lastId: rows[0]?.last_id == null ? null : Number(rows[0].last_id) };
}

/**
 * Deletes the messages (their conversations locked by the caller): unread counts first, then the rows, then each
 * conversation's last message; attachment files no other message carries are queued for deletion. Returns what
 * changed in inboxes.
 */
export async function deleteExpired(db: DB, messageIds: readonly number[], now: Date): Promise<InboxesChanged> {
  if (messageIds.length === 0) return { lastMessages: [], readers: new Map() };
  const readers = await uncountUnread(db, messageIds);
  const { rows } = await sql<{ attachment_id: string | null }>`
    delete from messages where id = any(${messageIds.map(String)}::bigint[]) returning attachment_id`.execute(db);
  const lastMessages = await restoreLastMessages(db, messageIds, now);
  const attachments = [...new Set(rows.flatMap((r) => (r.attachment_id === null ? [] : [Number(r.attachment_id)])))];
  await deleteUnusedAttachments(db, attachments);
  return { lastMessages, readers };
}
