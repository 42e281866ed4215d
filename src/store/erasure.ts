// A user's erasure (DELETE /users/{id}, src/chat/erasure.ts): the mark, the job's progress, and each phase's
// bounded batch of SQL. Every batch runs in a transaction holding the job's row (FOR UPDATE SKIP LOCKED, taken
// first: one node at a time per job), then the conversations it writes to in ascending id (store/locks.ts).
import { sql } from 'kysely';
import type { DB } from './database.js';
import { deleteUnusedAttachments, restoreLastMessages, uncountUnread, type InboxesChanged } from './removal.js';
import type { Schema } from './schema.js';

export const ERASED_NAME = 'Deleted user';
export type ErasureMode = Schema['erasure_jobs']['messages'];

export interface ErasureJob {
  readonly user_id: number;
  readonly messages: ErasureMode;
  readonly phase: string;
  readonly after_id: number;
  readonly after_seq: number;
}

/**
 * Marks the user erased under their row's lock (a send share-locks its sender's row, so it either commits before
 * this or sees the mark and is refused): name "Deleted user", no avatar, erased_at set; and starts (or, from `keep`
 * to `erase`, widens) the job. Null when the user was never seen; `started` false when a job that covers this
 * one exists already (a repeated request changes nothing).
 */
export async function markErased(db: DB, userId: number, mode: ErasureMode, now: Date): Promise<{ started: boolean } | null> {
  const user = await db.selectFrom('users').select('id').where('id', '=', userId).forNoKeyUpdate().executeTakeFirst();
  if (!user) return null;
  await db
    .updateTable('users')
    .set({ name: ERASED_NAME, avatar_url: null, erased_at: sql`coalesce(erased_at, ${now})`, updated_at: now })
    .where('id', '=', userId)
    .execute();
  const { rows } = await sql<{ user_id: string }>`
    insert into erasure_jobs as j (user_id, messages, requested_at) values (${userId}, ${mode}, ${now})
    on conflict (user_id) do update set messages = 'erase', phase = 'groups', after_id = 0, after_seq = 0, completed_at = null
      where j.messages = 'keep' and excluded.messages = 'erase'
    returning j.user_id`.execute(db);
  return { started: rows.length > 0 };
}

/** Whether the user is erased (or being erased). */
export async function isErased(db: DB, userId: number): Promise<boolean> {
  const row = await db.selectFrom('users').select('erased_at').where('id', '=', userId).executeTakeFirst();
  return row?.erased_at != null;
}

/** The users whose erasure is not complete, oldest request first. */
export async function pendingErasures(db: DB, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('erasure_jobs').select('user_id').where('completed_at', 'is', null).orderBy('requested_at').limit(limit).execute();
  return rows.map((r) => Number(r.user_id));
}

/** The job's row, locked for this transaction; undefined when done or when another node is working on it. */
export async function claimJob(db: DB, userId: number): Promise<ErasureJob | undefined> {
  const row = await db
    .selectFrom('erasure_jobs')
    .select(['user_id', 'messages', 'phase', 'after_id', 'after_seq'])
    .where('user_id', '=', userId)
    .where('completed_at', 'is', null)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  return row && { ...row, user_id: Number(row.user_id), after_id: Number(row.after_id), after_seq: Number(row.after_seq) };
}

export async function advanceJob(db: DB, userId: number, to: { phase: string; after_id?: number; after_seq?: number; erased?: number; completed_at?: Date }): Promise<void> {
  await db
    .updateTable('erasure_jobs')
    .set({
      phase: to.phase,
      after_id: to.after_id ?? 0,
      after_seq: to.after_seq ?? 0,
      messages_erased: sql`messages_erased + ${to.erased ?? 0}`,
      ...(to.completed_at ? { completed_at: to.completed_at } : {}),
    })
    .where('user_id', '=', userId)
    .execute();
}

/** The groups the user is still in, ascending. */
export async function groupsOf(db: DB, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('participants as p')
    .innerJoin('conversations as c', 'c.id', 'p.conversation_id')
    .select('c.id')
    .where('p.user_id', '=', userId)
    .where('c.type', '=', 'group')
    .orderBy('c.id')
    .execute();
  return rows.map((r) => Number(r.id));
}

/**
 * What is the user's own and not a message: their blocks, push subscriptions, thread read positions, hidden
 * messages, the text of their reports, and in each conversation they are still in (direct ones) their mute, read
 * receipt and own state.
 */
export async function deletePersonalData(db: DB, userId: number): Promise<void> {
  await db.deleteFrom('blocks').where('blocker_id', '=', userId).execute();
  await db.deleteFrom('push_subscriptions').where('user_id', '=', userId).execute();
  await db.deleteFrom('thread_members').where('user_id', '=', userId).execute();
  await db.deleteFrom('hidden_messages').where('user_id', '=', userId).execute();
  await db.updateTable('message_reports').set({ note: null }).where('reporter_id', '=', userId).execute();
  await db
    .updateTable('participants')
    .set({ muted: false, muted_until: null, last_read_at: null, archived_at: null, pinned_at: null, cleared_at: null })
    .where('user_id', '=', userId)
    .execute();
}

/** The messages (id, conversation) the user reacted to, the next `limit` after message id `after`. */
export async function reactedMessages(db: DB, userId: number, after: number, limit: number): Promise<{ id: number; conversation_id: number }[]> {
  const rows = await db
    .selectFrom('message_reactions as r')
    .innerJoin('messages as m', 'm.id', 'r.message_id')
    .select(['m.id', 'm.conversation_id'])
    .distinct()
    .where('r.user_id', '=', userId)
    .where('r.message_id', '>', after)
    .orderBy('m.id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), conversation_id: Number(r.conversation_id) }));
}

export async function deleteReactions(db: DB, userId: number, messageIds: readonly number[]): Promise<void> {
  if (messageIds.length > 0) await db.deleteFrom('message_reactions').where('user_id', '=', userId).where('message_id', 'in', messageIds).execute();
}

export interface ErasedMessage {
  readonly id: number;
  readonly conversation_id: number;
  /** It was visible: it goes from history now (MessageDeleted). */
  readonly visible: boolean;
  readonly pinned: boolean;
  readonly thread_id: number | null;
}

/**
 * The next `limit` messages after id `after` holding the user's text: those they sent (`column` sender_id), or the
 * forwards of their messages by others (forwarded_from_sender_id). Deleted ones too: their bodies are still stored.
 */
export async function messagesToErase(db: DB, column: 'sender_id' | 'forwarded_from_sender_id', userId: number, after: number, limit: number): Promise<ErasedMessage[]> {
  const rows = await db
    .selectFrom('messages')
    .select(['id', 'conversation_id', 'deleted_at', 'pinned_at', 'thread_id'])
    .where(column, '=', userId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    conversation_id: Number(r.conversation_id),
    visible: r.deleted_at === null,
    pinned: r.pinned_at !== null,
    thread_id: r.thread_id === null ? null : Number(r.thread_id),
  }));
}

/**
 * Deletes the messages for everyone and blanks them (their conversations locked by the caller): body, attachment,
 * pin and client id gone (the search vector follows the body), unread counts and last messages moved as a
 * delete moves them; attachment files no message carries any more are queued for deletion. Returns what changed
 * in inboxes.
 */
export async function eraseMessages(db: DB, messages: readonly ErasedMessage[], now: Date): Promise<InboxesChanged> {
  if (messages.length === 0) return { lastMessages: [], readers: new Map() };
  const ids = messages.map((m) => m.id);
  const readers = await uncountUnread(db, ids.filter((_, i) => messages[i]!.visible));
  const { rows } = await sql<{ attachment_id: string | null }>`
    update messages m set deleted_at = coalesce(m.deleted_at, ${now}), body = null, attachment_id = null, pinned_at = null, pinned_by = null,
      client_message_id = null, edited_at = null
    from (select id, attachment_id from messages where id = any(${ids.map(String)}::bigint[]) for update) old
    where m.id = old.id
    returning old.attachment_id`.execute(db);
  const lastMessages = await restoreLastMessages(db, ids, now);
  await deleteUnusedAttachments(db, [...new Set(rows.flatMap((r) => (r.attachment_id === null ? [] : [Number(r.attachment_id)])))]);
  return { lastMessages, readers };
}

/**
 * The user's uploads, the next `limit` after attachment id `after`: each taken off every message still carrying it
 * (all blanked by now, or never sent) and deleted, its file queued for deletion. Returns the last id handled.
 */
export async function deleteUploads(db: DB, userId: number, after: number, limit: number): Promise<number | null> {
  const rows = await db.selectFrom('attachments').select('id').where('uploader_id', '=', userId).where('id', '>', after).orderBy('id').limit(limit).execute();
  const ids = rows.map((r) => Number(r.id));
  if (ids.length === 0) return null;
  await db.updateTable('messages').set({ attachment_id: null }).where('attachment_id', 'in', ids).execute();
  await deleteUnusedAttachments(db, ids);
  return ids.at(-1)!;
}

/** The next `limit` change feed rows after (tx, seq) that name the user (an `id` equal to theirs anywhere in them). */
export async function feedRowsNaming(db: DB, userId: number, after: { tx: number; seq: number }, limit: number) {
  const { rows } = await sql<{ tx: string; seq: string; data: string | null; named: boolean }>`
    select tx, seq, data::text as data,
      -- The text is searched first (json is stored as written): most rows are never parsed.
      data is not null and strpos(data::text, ${String(userId)}) > 0
        and jsonb_path_exists(data::jsonb, 'strict $.** ? (@.id == $u)', jsonb_build_object('u', ${userId}::bigint)) as named
    from sync_changes where (tx, seq) > (${after.tx}, ${after.seq}) order by tx, seq limit ${limit}`.execute(db);
  return rows.map((r) => ({ tx: Number(r.tx), seq: Number(r.seq), data: r.named ? r.data : null }));
}

export async function rewriteFeedRow(db: DB, row: { tx: number; seq: number }, data: string): Promise<void> {
  await sql`update sync_changes set data = ${data}::json where tx = ${row.tx} and seq = ${row.seq}`.execute(db);
}

/** The next `limit` outbox rows after id `after`, with the payload of those that name the user. */
export async function outboxRowsNaming(db: DB, userId: number, after: number, limit: number) {
  const { rows } = await sql<{ id: string; payload: unknown; named: boolean }>`
    select id, payload, jsonb_path_exists(payload, 'strict $.** ? (@.id == $u)', jsonb_build_object('u', ${userId}::bigint)) as named
    from outbox where id > ${after} order by id limit ${limit}`.execute(db);
  return rows.map((r) => ({ id: Number(r.id), payload: r.named ? r.payload : null }));
}

export async function rewriteOutboxRow(db: DB, id: number, payload: unknown): Promise<void> {
  await sql`update outbox set payload = ${JSON.stringify(payload)}::jsonb where id = ${id}`.execute(db);
}
