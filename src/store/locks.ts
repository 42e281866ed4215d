// Row locks, always taken in one order so that two use cases never wait on each other in a circle:
//
//   1. users        (ascending id)  block / unblock and find-or-create of a direct conversation; a send (and a
//                                   forward) share-locks its senders' rows, so a user's erasure (which takes the
//                                   row to mark it) either follows the send or is seen by it
//   2. conversations (ascending id) every use case that reads a rule from a conversation and then writes
//   3. participants   (one row)    a reader's own row, after its conversation's lock, when marking read
//   4. messages, blocks, other participants: written under the conversation's lock, never locked on their own
//
// A writer takes its rows FOR NO KEY UPDATE ('write'); a use case whose write must not interleave with a send or
// a delete but may run beside others like it (marking read, which recounts) takes FOR SHARE ('read'). Neither
// conflicts with the KEY SHARE locks of foreign-key checks, so inserting a message that references a user or a
// message never waits on them. The checks then run in the next statement, whose snapshot is taken after the
// lock is granted, so they see every change committed before it.
import type { DB } from './database.js';
import type { Conversation, Participant } from './schema.js';

export type LockMode = 'write' | 'read';

/** Locks the conversations that exist among ids (ascending id) and returns their rows. */
export async function lockConversations(db: DB, ids: readonly number[], mode: LockMode = 'write'): Promise<Map<number, Conversation>> {
  const unique = [...new Set(ids)].sort((a, b) => a - b);
  if (unique.length === 0) return new Map();
  const query = db.selectFrom('conversations').selectAll().where('id', 'in', unique).orderBy('id');
  const rows = await (mode === 'write' ? query.forNoKeyUpdate() : query.forShare()).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export async function lockConversation(db: DB, id: number, mode: LockMode = 'write'): Promise<Conversation | undefined> {
  return (await lockConversations(db, [id], mode)).get(id);
}

/** The conversation a message belongs to, locked (a message never moves between conversations). */
export async function lockConversationOfMessage(db: DB, messageId: number, mode: LockMode = 'write'): Promise<Conversation | undefined> {
  const row = await db.selectFrom('messages').select('conversation_id').where('id', '=', messageId).executeTakeFirst();
  return row ? lockConversation(db, row.conversation_id, mode) : undefined;
}

/** Locks the users among ids that exist (ascending id); returns the ids found. */
export async function lockUsers(db: DB, ids: readonly number[], mode: LockMode = 'write'): Promise<Set<number>> {
  const unique = [...new Set(ids)].sort((a, b) => a - b);
  const query = db.selectFrom('users').select('id').where('id', 'in', unique).orderBy('id');
  const rows = await (mode === 'write' ? query.forNoKeyUpdate() : query.forShare()).execute();
  return new Set(rows.map((r) => r.id));
}

/**
 * Locks one participant's row (FOR NO KEY UPDATE) and returns it, undefined when they are not a participant.
 * Taken after the conversation's lock: two read marks of the same reader then run one after the other, so the
 * second sees the position the first wrote and never moves it back.
 */
export async function lockParticipant(db: DB, conversationId: number, userId: number): Promise<Participant | undefined> {
  return db.selectFrom('participants').selectAll().where('conversation_id', '=', conversationId).where('user_id', '=', userId).forNoKeyUpdate().executeTakeFirst();
}
