// What a user's export reads (GET /users/{id}/export, src/chat/export.ts): each part a keyset page at a time, so
// an export of any size holds one page in memory. Pages are ordered by their key and read after the last key of
// the page before.
import { sql, type RawBuilder } from 'kysely';
import type { DB } from './database.js';
import { historyItemJsonRows, type IdSource } from './read-model.js';

/** Rows per page of an export's parts. */
export const EXPORT_PAGE = 1000;

export interface ExportedConversation {
  readonly id: number;
  readonly type: 'direct' | 'group';
  readonly name: string | null;
  readonly role: string;
  readonly joined_at: Date;
}

/** The user's conversations (as a participant now), after conversation id `after`. */
export async function conversationsPage(db: DB, userId: number, after: number): Promise<ExportedConversation[]> {
  return db
    .selectFrom('participants as p')
    .innerJoin('conversations as c', 'c.id', 'p.conversation_id')
    .select(['c.id', 'c.type', 'c.name', 'p.role', 'p.joined_at'])
    .where('p.user_id', '=', userId)
    .where('c.id', '>', after)
    .orderBy('c.id')
    .limit(EXPORT_PAGE)
    .execute();
}

// The messages the user sent are most of an export, so they never become rows and objects here: PostgreSQL writes
// each as its history item's JSON text (historyItemJsonRows), EXPORT_PIECE of them joined into one piece of text.

/** Messages per piece of the export's "messages" array. */
export const EXPORT_PIECE = 100;

/** The visible messages the user sent (thread replies included) after message id `after`, oldest first, n from 1. */
const sentMessages = (userId: number, after: number, limit: number | null): IdSource => sql`
  select id, row_number() over (order by id) as n from (
    select id from messages where sender_id = ${sql.lit(userId)} and deleted_at is null and id > ${sql.lit(after)}
    order by id ${limit === null ? sql`` : sql`limit ${sql.lit(limit)}`}) s`;

/**
 * The content of the export's "messages" array (the user's sent messages as history items, oldest first) as a
 * COPY ... TO STDOUT statement, for Database.copyOut: one line per piece of up to EXPORT_PIECE items, each piece
 * after the first starting with a comma. CSV whose delimiter and quote are control characters, which JSON text
 * never holds unescaped: each line is the piece as it is, then a newline (whitespace between JSON values).
 */
export function sentMessagesCopy(userId: number): RawBuilder<unknown> {
  if (!Number.isSafeInteger(userId)) throw new Error(`not a user id: ${userId}`);
  return sql`copy (
      select case when g = 0 then '' else ',' end || string_agg(item, ',' order by n)
      from (select item, n, (n - 1) / ${sql.lit(EXPORT_PIECE)} as g from (${historyItemJsonRows(sentMessages(userId, 0, null))}) j) k
      group by g order by g
    ) to stdout with (format csv, delimiter E'\\x01', quote E'\\x02')`;
}

/** The same content without COPY (the embedded database): the piece of up to EXPORT_PIECE items after message id `after` (no comma before it), and its last id; null when none are left. */
export async function sentMessagesPiece(db: DB, userId: number, after: number): Promise<{ text: string; last: number } | null> {
  const { rows } = await sql<{ text: string | null; last: number | null }>`
    select string_agg(item, ',' order by n) as text, max(id) as last
    from (${historyItemJsonRows(sentMessages(userId, after, EXPORT_PIECE))}) j`.execute(db);
  const piece = rows[0];
  return piece?.text == null || piece.last == null ? null : { text: piece.text, last: Number(piece.last) };
}

/** The user's reactions, after (message id, emoji) `after`. */
export async function reactionsPage(db: DB, userId: number, after: { message_id: number; emoji: string } | null) {
  let query = db
    .selectFrom('message_reactions')
    .select(['message_id', 'emoji', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('message_id')
    .orderBy('emoji')
    .limit(EXPORT_PAGE);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('message_id', '>', after.message_id), eb.and([eb('message_id', '=', after.message_id), eb('emoji', '>', after.emoji)])]),
    );
  }
  return query.execute();
}

/** The user's own state in each conversation they are in (read position, mute, inbox pin), after conversation id `after`. */
export async function participationsPage(db: DB, userId: number, after: number) {
  return db
    .selectFrom('participants')
    .select(['conversation_id', 'last_read_message_id', 'last_read_at', 'muted', 'muted_until', 'pinned_at'])
    .where('user_id', '=', userId)
    .where('conversation_id', '>', after)
    .orderBy('conversation_id')
    .limit(EXPORT_PAGE)
    .execute();
}

/** The users the user blocked, after blocked user id `after`. */
export async function blocksPage(db: DB, userId: number, after: number) {
  return db
    .selectFrom('blocks')
    .select(['blocked_id as user_id', 'created_at'])
    .where('blocker_id', '=', userId)
    .where('blocked_id', '>', after)
    .orderBy('blocked_id')
    .limit(EXPORT_PAGE)
    .execute();
}

/** The messages the user pinned (still pinned), after message id `after`. */
export async function pinnedMessagesPage(db: DB, userId: number, after: number) {
  return db
    .selectFrom('messages')
    .select(['conversation_id', 'id as message_id', 'pinned_at'])
    .where('pinned_by', '=', userId)
    .where('pinned_at', 'is not', null)
    .where('id', '>', after)
    .orderBy('id')
    .limit(EXPORT_PAGE)
    .execute();
}

/** The user's push subscriptions (never their keys), after subscription id `after`. */
export async function pushSubscriptionsPage(db: DB, userId: number, after: number) {
  return db
    .selectFrom('push_subscriptions')
    .select(['id', 'endpoint', 'created_at'])
    .where('user_id', '=', userId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(EXPORT_PAGE)
    .execute();
}
