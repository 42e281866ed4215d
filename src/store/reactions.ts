// Reactions to messages: one row per (message, user, emoji), summarized per message for history items and
// the MessageReactionsUpdated event.
import { sql } from 'kysely';
import type { ReactionSummary } from '../contract/resources.js';
import type { DB } from './database.js';

/** How many of the users who reacted with one emoji a summary names (the latest first). */
export const REACTION_USERS_SHOWN = 10;

/**
 * Each message's reactions: one entry per emoji, in the order the emoji were first used on the message, with
 * how many users reacted with it and the latest REACTION_USERS_SHOWN of them. Messages without any are absent.
 */
export async function reactionSummaries(db: DB, messageIds: readonly number[]): Promise<Map<number, ReactionSummary[]>> {
  const result = new Map<number, ReactionSummary[]>();
  if (messageIds.length === 0) return result;
  const { rows } = await sql<{ message_id: number; emoji: string; count: number; user_ids: number[] }>`
    select r.message_id, r.emoji, count(*)::int as count,
      (select json_agg(latest.user_id) from (
         select r2.user_id from message_reactions r2
         where r2.message_id = r.message_id and r2.emoji = r.emoji
         order by r2.created_at desc, r2.user_id desc
         limit ${sql.lit(REACTION_USERS_SHOWN)}
       ) latest) as user_ids
    from message_reactions r
    where r.message_id = any (${`{${messageIds.join(',')}}`}::bigint[])
    group by r.message_id, r.emoji
    order by r.message_id, min(r.created_at), r.emoji`.execute(db);
  for (const row of rows) {
    let list = result.get(row.message_id);
    if (list === undefined) result.set(row.message_id, (list = []));
    list.push({ emoji: row.emoji, count: row.count, user_ids: row.user_ids });
  }
  return result;
}

/** The users each message mentions, ascending. Messages without mentions are absent. */
export async function mentionedUsers(db: DB, messageIds: readonly number[]): Promise<Map<number, number[]>> {
  const result = new Map<number, number[]>();
  if (messageIds.length === 0) return result;
  const rows = await db
    .selectFrom('message_mentions')
    .select(['message_id', 'user_id'])
    .where('message_id', 'in', messageIds)
    .orderBy('message_id')
    .orderBy('user_id')
    .execute();
  for (const row of rows) result.set(row.message_id, [...(result.get(row.message_id) ?? []), row.user_id]);
  return result;
}

/** What adding a reaction did: added it, found the user's reaction there already, or refused a new emoji over the limit. */
export type AddReactionOutcome = 'added' | 'present' | 'too_many_emoji';

/**
 * Adds userId's reaction with emoji to a message, unless the user has it already (nothing changes) or the emoji
 * is new to the message and the message has maxEmoji distinct emoji already. One statement; call it under the
 * conversation's write lock (locks.ts), so the count it checks cannot change before it commits.
 */
export async function addReaction(
  db: DB,
  reaction: { messageId: number; userId: number; emoji: string },
  maxEmoji: number,
  now: Date,
): Promise<AddReactionOutcome> {
  const { messageId, userId, emoji } = reaction;
  const { rows } = await sql<{ present: boolean; inserted: boolean }>`
    with here as (
      select count(distinct r.emoji)::int as emoji_count,
        coalesce(bool_or(r.emoji = ${emoji}::text), false) as emoji_used,
        coalesce(bool_or(r.emoji = ${emoji}::text and r.user_id = ${userId}::bigint), false) as present
      from message_reactions r
      where r.message_id = ${messageId}::bigint
    ),
    ins as (
      insert into message_reactions (message_id, user_id, emoji, created_at)
      select ${messageId}::bigint, ${userId}::bigint, ${emoji}::text, ${now}::timestamptz
      from here
      where not here.present and (here.emoji_used or here.emoji_count < ${maxEmoji}::int)
      on conflict do nothing
      returning 1
    )
    select here.present, exists (select 1 from ins) as inserted from here`.execute(db);
  const row = rows[0]!;
  if (row.inserted) return 'added';
  return row.present ? 'present' : 'too_many_emoji';
}

/** Removes userId's reaction with emoji from a message; false when the user had none. Under the conversation's write lock. */
export async function removeReaction(db: DB, reaction: { messageId: number; userId: number; emoji: string }): Promise<boolean> {
  const removed = await db
    .deleteFrom('message_reactions')
    .where('message_id', '=', reaction.messageId)
    .where('user_id', '=', reaction.userId)
    .where('emoji', '=', reaction.emoji)
    .returning('emoji')
    .executeTakeFirst();
  return removed !== undefined;
}
