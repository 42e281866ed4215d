// Threads (v1.2): each root's counts and who takes part, written under the conversation's lock by the sends of
// replies (the send function keeps them: store/functions/send.ts) and their deletes (recountThread, here), and the
// reads of GET /threads and GET /messages/{id}/thread.
import { sql } from 'kysely';
import { isoOrNull } from '../contract/resources.js';
import type { ThreadSummary } from '../contract/resources.js';
import type { DB } from './database.js';
import { ownMessageFilter } from './own-state.js';

/** How many of the latest distinct repliers a thread keeps (the API shows them with the root's sender). */
export const THREAD_REPLIERS = 10;

export interface ThreadRow {
  readonly root_id: number;
  readonly conversation_id: number;
  readonly reply_count: number;
  readonly last_reply_at: Date | null;
  /** Latest distinct repliers, newest first. */
  readonly repliers: readonly number[];
  /** The root's sender. */
  readonly root_sender_id: number;
}

/** A thread as history items and ThreadUpdated show it: participant_ids are the root's sender and the latest repliers, ascending. */
export function threadSummary(row: ThreadRow): ThreadSummary {
  return {
    reply_count: row.reply_count,
    last_reply_at: isoOrNull(row.last_reply_at),
    participant_ids: [...new Set([row.root_sender_id, ...row.repliers])].sort((a, b) => a - b),
  };
}

/** A thread recounted from its visible replies (after a reply's deletion); null when it has no row. */
export async function recountThread(db: DB, rootId: number): Promise<ThreadRow | null> {
  const { rows } = await sql<{ root_id: string; conversation_id: string; reply_count: number; last_reply_at: Date | null; repliers: string[] | null; root_sender_id: string }>`
    update threads t set
      reply_count = (select count(*) from messages r where r.thread_id = t.root_id and r.deleted_at is null),
      last_reply_at = (select max(r.created_at) from messages r where r.thread_id = t.root_id and r.deleted_at is null),
      repliers = coalesce((select array_agg(sender_id order by latest desc) from (
        select r.sender_id, max(r.id) as latest from messages r where r.thread_id = t.root_id and r.deleted_at is null
        group by r.sender_id order by latest desc limit ${THREAD_REPLIERS}) l), '{}')
    from messages root
    where t.root_id = ${rootId} and root.id = t.root_id
    returning t.root_id, t.conversation_id, t.reply_count, t.last_reply_at, t.repliers, root.sender_id as root_sender_id`.execute(db);
  const r = rows[0];
  if (!r) return null;
  return { root_id: Number(r.root_id), conversation_id: Number(r.conversation_id), reply_count: r.reply_count, last_reply_at: r.last_reply_at, repliers: (r.repliers ?? []).map(Number), root_sender_id: Number(r.root_sender_id) };
}

/** One of a user's threads for GET /threads. */
export interface UserThreadRow {
  readonly root_id: number;
  readonly reply_count: number;
  readonly last_reply_at: Date;
  readonly unread_reply_count: number;
}

/**
 * The threads a user takes part in, in conversations they are still in, most recent reply first (then root id),
 * after a (last reply time, root id) position; each with the replies by others after the user's read position.
 */
export async function userThreads(db: DB, userId: number, options: { after?: { at: Date; rootId: number }; limit: number }): Promise<UserThreadRow[]> {
  const after = options.after ? sql`and (t.last_reply_at, t.root_id) < (${options.after.at}, ${options.after.rootId})` : sql``;
  const { rows } = await sql<{ root_id: string; reply_count: number; last_reply_at: Date; unread_reply_count: string }>`
    select t.root_id, t.reply_count, t.last_reply_at,
      (select count(*) from messages r
        where r.thread_id = t.root_id and r.id > tm.last_read_reply_id and r.sender_id <> ${userId} and r.deleted_at is null) as unread_reply_count
    from thread_members tm
    join threads t on t.root_id = tm.root_id
    join participants p on p.conversation_id = t.conversation_id and p.user_id = ${userId}
    join messages root on root.id = t.root_id
    where tm.user_id = ${userId} and t.reply_count > 0 and t.last_reply_at is not null and ${ownMessageFilter(userId, 'root')} ${after}
    order by t.last_reply_at desc, t.root_id desc
    limit ${options.limit}`.execute(db);
  return rows.map((r) => ({ root_id: Number(r.root_id), reply_count: r.reply_count, last_reply_at: new Date(r.last_reply_at), unread_reply_count: Number(r.unread_reply_count) }));
}

/** Marks a thread read by a user up to its newest reply (never backwards); returns that reply's id (0: none). */
export async function readThread(db: DB, rootId: number, userId: number, at: Date): Promise<number> {
  const { rows } = await sql<{ last_read_reply_id: string }>`
    insert into thread_members (root_id, user_id, last_read_reply_id, last_read_at)
    values (${rootId}, ${userId}, coalesce((select max(id) from messages where thread_id = ${rootId}), 0), ${at})
    on conflict (root_id, user_id) do update set
      last_read_reply_id = greatest(thread_members.last_read_reply_id, excluded.last_read_reply_id),
      last_read_at = excluded.last_read_at
    returning last_read_reply_id`.execute(db);
  return Number(rows[0]!.last_read_reply_id);
}
