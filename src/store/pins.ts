// Pinned messages (v1.2): written under the conversation's write lock (see locks.ts), so the count checked
// against the limit is the count written against.
import { sql } from 'kysely';
import type { DB } from './database.js';

/** How many messages a conversation's pins hold at most. */
export const MAX_PINS = 50;

export async function pinnedCount(db: DB, conversationId: number): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('conversation_id', '=', conversationId)
    .where('pinned_at', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Pins a visible message (pinned: true) or unpins it; false when nothing changed (already so, or gone). */
export async function setPinned(db: DB, messageId: number, pin: { by: number; at: Date } | null): Promise<boolean> {
  const row = await db
    .updateTable('messages')
    .set(pin ? { pinned_at: pin.at, pinned_by: pin.by } : { pinned_at: null, pinned_by: null })
    .where('id', '=', messageId)
    .where('deleted_at', 'is', null)
    .where('pinned_at', pin ? 'is' : 'is not', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** A page of a conversation's pinned message ids, most recently pinned first, after a (pinned_at, id) position. */
export async function pinnedIds(db: DB, conversationId: number, options: { after?: { at: Date; id: number }; limit: number }): Promise<{ id: number; pinned_at: Date }[]> {
  let query = db
    .selectFrom('messages')
    .select(['id', 'pinned_at'])
    .where('conversation_id', '=', conversationId)
    .where('pinned_at', 'is not', null)
    .where('deleted_at', 'is', null)
    .orderBy('pinned_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit);
  if (options.after) query = query.where(sql<boolean>`(pinned_at, id) < (${options.after.at}, ${options.after.id})`);
  return (await query.execute()).map((r) => ({ id: Number(r.id), pinned_at: r.pinned_at! }));
}
