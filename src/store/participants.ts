// Participants: memberships, roles and read positions. Written under the conversation's lock (see locks.ts).
import { sql } from 'kysely';
import { chunks, idIn, ROWS_PER_STATEMENT } from './bulk.js';
import type { DB } from './database.js';
import { entryKey, READER_COLUMNS, type Entry, type ReaderState } from './read-model.js';
import type { Conversation, Participant, Role } from './schema.js';

export interface Membership {
  readonly conversation: Conversation;
  readonly participant: Participant;
}

/** A participant's row with its conversation; undefined when the user is not a participant (or it is gone). */
export async function findMembership(db: DB, conversationId: number, userId: number): Promise<Membership | undefined> {
  const row = await db
    .selectFrom('participants as p')
    .innerJoin('conversations as c', 'c.id', 'p.conversation_id')
    .selectAll('c')
    .select(['p.role', 'p.joined_at', 'p.last_read_message_id', 'p.last_read_at', 'p.unread_count', 'p.unread_mention_count', 'p.muted', 'p.muted_until', 'p.archived_at', 'p.pinned_at', 'p.cleared_at', 'p.cleared_message_id', 'p.last_sent_at'])
    .where('p.conversation_id', '=', conversationId)
    .where('p.user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { role, joined_at, last_read_message_id, last_read_at, unread_count, unread_mention_count, muted, muted_until, archived_at, pinned_at, cleared_at, cleared_message_id, last_sent_at, ...conversation } = row;
  return {
    conversation,
    participant: {
      conversation_id: conversationId, user_id: userId, role, joined_at, last_read_message_id, last_read_at, unread_count,
      unread_mention_count, muted, muted_until, archived_at, pinned_at, cleared_at, cleared_message_id, last_sent_at,
    },
  };
}

export async function findParticipant(db: DB, conversationId: number, userId: number): Promise<Participant | undefined> {
  return db.selectFrom('participants').selectAll().where('conversation_id', '=', conversationId).where('user_id', '=', userId).executeTakeFirst();
}

export async function participantIds(db: DB, conversationId: number): Promise<number[]> {
  const rows = await db.selectFrom('participants').select('user_id').where('conversation_id', '=', conversationId).orderBy('user_id').execute();
  return rows.map((r) => r.user_id);
}

/** The other participant of a direct conversation. */
export async function directPeer(db: DB, conversationId: number, userId: number): Promise<number | null> {
  const row = await db
    .selectFrom('participants')
    .select('user_id')
    .where('conversation_id', '=', conversationId)
    .where('user_id', '<>', userId)
    .executeTakeFirst();
  return row?.user_id ?? null;
}

/** Adds the users who are not participants yet, as members who have read the history so far; returns them. */
export async function addMembers(db: DB, conversationId: number, userIds: readonly number[], lastReadMessageId: number, now: Date): Promise<number[]> {
  const rows: { user_id: number }[] = [];
  for (const [k, chunk] of [...chunks(userIds)].entries()) {
    const inserted = await db
      .insertInto('participants')
      .values(chunk.map((user_id, i) => ({
        conversation_id: conversationId,
        user_id,
        role: 'member' as Role,
        // Ranked join times keep the order given.
        joined_at: new Date(now.getTime() + k * ROWS_PER_STATEMENT + i),
        last_read_message_id: lastReadMessageId,
      })))
      .onConflict((oc) => oc.columns(['conversation_id', 'user_id']).doNothing())
      .returning('user_id')
      .execute();
    rows.push(...inserted);
  }
  const added = new Set(rows.map((r) => r.user_id));
  if (added.size > 0) {
    await db
      .updateTable('conversations')
      .set({ participant_count: sql`participant_count + ${added.size}`, updated_at: now })
      .where('id', '=', conversationId)
      .execute();
  }
  return userIds.filter((id) => added.has(id));
}

/** Removes a participant and keeps the count; false when the user was not one. */
export async function removeMember(db: DB, conversationId: number, userId: number, now: Date): Promise<boolean> {
  const removed = await db
    .deleteFrom('participants')
    .where('conversation_id', '=', conversationId)
    .where('user_id', '=', userId)
    .returning('user_id')
    .executeTakeFirst();
  if (!removed) return false;
  await db
    .updateTable('conversations')
    .set({ participant_count: sql`participant_count - 1`, updated_at: now })
    .where('id', '=', conversationId)
    .execute();
  return true;
}

export async function setRole(db: DB, conversationId: number, userId: number, role: Role): Promise<void> {
  await db.updateTable('participants').set({ role }).where('conversation_id', '=', conversationId).where('user_id', '=', userId).execute();
}

/** Who inherits a group from its leaving owner: the longest-standing admin, else the longest-standing member. */
export async function heirOf(db: DB, conversationId: number): Promise<number | null> {
  const row = await db
    .selectFrom('participants')
    .select('user_id')
    .where('conversation_id', '=', conversationId)
    .orderBy(sql`case role when 'owner' then 0 when 'admin' then 1 else 2 end`)
    .orderBy('joined_at')
    .orderBy('user_id')
    .executeTakeFirst();
  return row?.user_id ?? null;
}

/** Moves a reader's position and sets its recounted unread counts. */
export async function setReadPosition(
  db: DB,
  conversationId: number,
  userId: number,
  position: { messageId: number; at: Date; unreadCount: number; unreadMentionCount: number },
): Promise<ReaderState> {
  return db
    .updateTable('participants')
    .set({
      last_read_message_id: position.messageId,
      last_read_at: position.at,
      unread_count: position.unreadCount,
      unread_mention_count: position.unreadMentionCount,
    })
    .where('conversation_id', '=', conversationId)
    .where('user_id', '=', userId)
    .returning([...READER_COLUMNS])
    .executeTakeFirstOrThrow();
}

/** Sets a participant's mute: until `until`, until unmuted (null), or off. */
export async function setMute(db: DB, conversationId: number, userId: number, mute: { muted: boolean; until: Date | null }): Promise<void> {
  await db
    .updateTable('participants')
    .set({ muted: mute.muted, muted_until: mute.muted ? mute.until : null })
    .where('conversation_id', '=', conversationId)
    .where('user_id', '=', userId)
    .execute();
}

/**
 * The read states of (user, conversation) pairs, by entryKey: a pair whose user is not in the conversation is
 * absent. One query for pairs of many users and conversations (the syncs and channel authorizations of a moment
 * together: chat/inbox-entries.ts, chat/access.ts).
 */
export async function readerStatesOfEntries(db: DB, entries: readonly Entry[]): Promise<Map<string, ReaderState>> {
  const states = new Map<string, ReaderState>();
  if (entries.length === 0) return states;
  const wanted = new Set(entries.map(([userId, conversationId]) => entryKey(userId, conversationId)));
  const rows = await db
    .selectFrom('participants')
    .select(['conversation_id', ...READER_COLUMNS])
    .where(idIn('user_id', [...new Set(entries.map(([userId]) => userId))]))
    .where(idIn('conversation_id', [...new Set(entries.map(([, conversationId]) => conversationId))]))
    .execute();
  // Users and conversations are asked as two lists: a user may be in another asked conversation too.
  for (const { conversation_id, ...state } of rows) {
    const key = entryKey(state.user_id, conversation_id);
    if (wanted.has(key)) states.set(key, state);
  }
  return states;
}

/** Read states of a conversation's participants (all, or the given users). */
export async function readerStates(db: DB, conversationId: number, userIds?: readonly number[]): Promise<ReaderState[]> {
  let query = db
    .selectFrom('participants')
    .select([...READER_COLUMNS])
    .where('conversation_id', '=', conversationId);
  if (userIds) {
    if (userIds.length === 0) return [];
    query = query.where(idIn('user_id', userIds));
  }
  return query.execute();
}

/** Everyone who shares at least one conversation with the user (the user excluded). */
export async function contactsOf(db: DB, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('participants as mine')
    .innerJoin('participants as theirs', 'theirs.conversation_id', 'mine.conversation_id')
    .select('theirs.user_id')
    .distinct()
    .where('mine.user_id', '=', userId)
    .where('theirs.user_id', '<>', userId)
    .execute();
  return rows.map((r) => r.user_id);
}

/** A participant's read position, as GET /conversations/{id}/reads lists it. */
export interface ReadPositionRow {
  readonly user_id: number;
  readonly last_read_message_id: number;
  readonly last_read_at: Date | null;
}

/** A page of a conversation's read positions, by ascending user id after `afterUserId` (the primary key's order). */
export async function readPositions(db: DB, conversationId: number, page: { afterUserId?: number; limit: number }): Promise<ReadPositionRow[]> {
  let query = db
    .selectFrom('participants')
    .select(['user_id', 'last_read_message_id', 'last_read_at'])
    .where('conversation_id', '=', conversationId);
  if (page.afterUserId !== undefined) query = query.where('user_id', '>', page.afterUserId);
  return query.orderBy('user_id').limit(page.limit).execute();
}
