// What a user's export reads (GET /users/{id}/export, src/chat/export.ts): each part a keyset page at a time, so
// an export of any size holds one page in memory. Pages are ordered by their key and read after the last key of
// the page before.
import type { DB } from './database.js';

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

/** Ids of the visible messages the user sent (thread replies included), after message id `after`. */
export async function sentMessageIdsPage(db: DB, userId: number, after: number): Promise<number[]> {
  const rows = await db
    .selectFrom('messages')
    .select('id')
    .where('sender_id', '=', userId)
    .where('deleted_at', 'is', null)
    .where('id', '>', after)
    .orderBy('id')
    .limit(EXPORT_PAGE)
    .execute();
  return rows.map((r) => Number(r.id));
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
