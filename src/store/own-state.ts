// Each user's own state of their conversations (v1.2): archived, pinned, cleared, and messages hidden for them
// alone. The participant's row holds the first three; hidden_messages the last. Reads that list messages for a
// user leave out what they cleared or hid (ownMessageFilter).
import { sql, type RawBuilder } from 'kysely';
import { idIn } from './bulk.js';
import type { DB } from './database.js';
import { entryKey, loadMessages, type Entry } from './read-model.js';
import type { MessageResource } from '../contract/resources.js';

/** The most conversations one user may pin. */
export const MAX_PINNED_CONVERSATIONS = 10;

export type OwnChange = { archived_at: Date | null } | { pinned_at: Date | null };

export async function setOwnState(db: DB, conversationId: number, userId: number, change: OwnChange): Promise<void> {
  await db.updateTable('participants').set(change).where('conversation_id', '=', conversationId).where('user_id', '=', userId).execute();
}

/** How many conversations a user has pinned (counted under their user row's lock). */
export async function pinnedConversationCount(db: DB, userId: number): Promise<number> {
  const row = await db
    .selectFrom('participants')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('pinned_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Clears the conversation's history for one user: every message so far (thread replies included) hidden for
 * them, read, and nothing unread.
 */
export async function clearHistory(db: DB, conversationId: number, userId: number, at: Date): Promise<void> {
  await sql`
    update participants p set
      cleared_at = ${at},
      cleared_message_id = greatest(p.cleared_message_id, coalesce((select max(id) from messages where conversation_id = ${conversationId}), 0)),
      last_read_message_id = greatest(p.last_read_message_id, coalesce((select max(id) from messages where conversation_id = ${conversationId} and thread_id is null), 0)),
      last_read_at = ${at},
      unread_count = 0,
      unread_mention_count = 0
    where p.conversation_id = ${conversationId} and p.user_id = ${userId}`.execute(db);
}

/**
 * Hides a message for one user; when it was unread for them (a message of the conversation, by someone else,
 * after their read position) it no longer counts. False when it was hidden already.
 */
export async function hideMessage(db: DB, message: { id: number; conversation_id: number; sender_id: number; thread_id: number | null }, userId: number): Promise<boolean> {
  const inserted = await db
    .insertInto('hidden_messages')
    .values({ user_id: userId, message_id: message.id, conversation_id: message.conversation_id })
    .onConflict((oc) => oc.columns(['user_id', 'message_id']).doNothing())
    .returning('message_id')
    .executeTakeFirst();
  if (!inserted) return false;
  if (message.thread_id === null && message.sender_id !== userId) {
    await db
      .updateTable('participants')
      .set({
        unread_count: sql`greatest(unread_count - 1, 0)`,
        unread_mention_count: sql`greatest(unread_mention_count - case when exists (
          select 1 from message_mentions mm where mm.message_id = ${message.id} and mm.user_id = ${userId}) then 1 else 0 end, 0)`,
      })
      .where('conversation_id', '=', message.conversation_id)
      .where('user_id', '=', userId)
      .where('last_read_message_id', '<', message.id)
      .execute();
  }
  return true;
}

/**
 * The condition "a message the user may see" for a query over `messages as <alias>`: not cleared by them (its
 * id above their cleared_message_id in its conversation) and not hidden by them.
 */
export function ownMessageFilter(userId: number, alias = 'messages'): RawBuilder<boolean> {
  const m = sql.ref(alias);
  return sql<boolean>`not exists (select 1 from hidden_messages h where h.user_id = ${userId} and h.message_id = ${m}.id)
    and ${m}.id > coalesce((select cp.cleared_message_id from participants cp where cp.conversation_id = ${m}.conversation_id and cp.user_id = ${userId}), 0)`;
}

/**
 * The last message as a user sees it, for the conversations whose shared last message they hid: the newest
 * message of the conversation they may still see (null: none). Conversations not listed need nothing of this.
 */
export async function ownLastMessages(db: DB, userId: number, lastIds: ReadonlyMap<number, number>): Promise<Map<number, MessageResource | null>> {
  const result = new Map<number, MessageResource | null>();
  const ids = [...lastIds.values()];
  if (ids.length === 0) return result;
  const hidden = await db.selectFrom('hidden_messages').select(['conversation_id']).where('user_id', '=', userId).where(idIn('message_id', ids)).execute();
  return fallbackLastMessages(db, userId, hidden.map((h) => Number(h.conversation_id)));
}

/**
 * The last message as each user sees it where it is not the shared one (an InboxUpdated or a synced entry): for
 * each of these (user, conversation) entries (`lastIds`: each conversation's shared last message; an entry of a
 * conversation without one is left out) whose user cleared the history past that message (null) or hid it (the
 * newest message they may still see, or null), by entryKey. The other entries, nearly always all of them, see the
 * shared last message: one query finds that. The ids come through parley_ids (a fixed estimate), so the query keeps
 * one plan per connection: with unnest, every call was planned anew (0.13 ms of planning for 0.02 ms of reading in
 * a reconnect storm's syncs).
 */
export async function lastMessagesAsSeen(db: DB, entries: readonly Entry[], lastIds: ReadonlyMap<number, number>): Promise<Map<string, MessageResource | null>> {
  const seen = new Map<string, MessageResource | null>();
  const asked = entries.filter(([, conversationId]) => lastIds.has(conversationId));
  if (asked.length === 0) return seen;
  const list = (ids: Iterable<number>) => `{${[...ids].join(',')}}`;
  // The n-th user with the n-th conversation and its last message.
  const { rows } = await sql<{ user_id: string; conversation_id: string; cleared: boolean }>`
    select p.user_id, p.conversation_id, p.cleared_message_id >= l.last_id as cleared
    from (select u.id as user_id, (${list(asked.map(([, c]) => c))}::bigint[])[u.n] as conversation_id,
        (${list(asked.map(([, c]) => lastIds.get(c)!))}::bigint[])[u.n] as last_id
      from parley_ids(${list(asked.map(([u]) => u))}::bigint[]) with ordinality u(id, n)) l
    join participants p on p.conversation_id = l.conversation_id and p.user_id = l.user_id
    where p.cleared_message_id >= l.last_id
      or exists (select 1 from hidden_messages h where h.user_id = p.user_id and h.message_id = l.last_id)`.execute(db);
  for (const r of rows) {
    const userId = Number(r.user_id);
    const conversationId = Number(r.conversation_id);
    const own = r.cleared ? null : ((await fallbackLastMessages(db, userId, [conversationId])).get(conversationId) ?? null);
    seen.set(entryKey(userId, conversationId), own);
  }
  return seen;
}

/** The newest message of each conversation that the user may still see (null: none). */
async function fallbackLastMessages(db: DB, userId: number, conversationIds: readonly number[]): Promise<Map<number, MessageResource | null>> {
  const result = new Map<number, MessageResource | null>();
  if (conversationIds.length === 0) return result;
  const fallbacks = new Map<number, number | null>();
  for (const conversation_id of conversationIds) {
    const row = await db
      .selectFrom('messages')
      .select('id')
      .where('conversation_id', '=', Number(conversation_id))
      .where('thread_id', 'is', null)
      .where('deleted_at', 'is', null)
      .where(ownMessageFilter(userId))
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    fallbacks.set(Number(conversation_id), row ? Number(row.id) : null);
  }
  const loaded = await loadMessages(db, [...fallbacks.values()].filter((id): id is number => id !== null));
  for (const [conversationId, id] of fallbacks) result.set(conversationId, id === null ? null : (loaded.get(id) ?? null));
  return result;
}
