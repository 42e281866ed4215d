// Reactions to messages: one row per (message, user, emoji), summarized per message for history items and
// the MessageReactionsUpdated event.
import { sql, type RawBuilder } from 'kysely';
import type { ReactionSummary } from '../contract/resources.js';
import type { DB } from './database.js';

/** How many of the users who reacted with one emoji a summary names (the latest first). */
export const REACTION_USERS_SHOWN = 10;

/**
 * Each message's reactions: one entry per emoji, in the order the emoji were first used on the message, with
 * how many users reacted with it and the latest REACTION_USERS_SHOWN of them. Messages without any are absent.
 */
export async function reactionSummaries(db: DB, messageIds: readonly number[]): Promise<Map<number, ReactionSummary[]>> {
  if (messageIds.length === 0) return new Map();
  const { rows } = await sql<{ id: number; reactions: ReactionSummary[] | null }>`
    select id, ${reactionSummaryJson(sql.ref('id'))} as reactions from parley_ids(${messageIds.map(String)}::bigint[]) as id`.execute(db);
  return new Map(rows.flatMap((r) => (r.reactions === null ? [] : [[Number(r.id), r.reactions]])));
}

/** The summaries of reactionSummaries for the message whose id is `messageId`, as a json array (null: none); the one home of their SQL. */
export function reactionSummaryJson(messageId: RawBuilder<unknown>): RawBuilder<ReactionSummary[] | null> {
  return sql`(select json_agg(json_build_object('emoji', x.emoji, 'count', x.count, 'user_ids', x.user_ids) order by x.first_at, x.emoji)
    from (select r.emoji, count(*)::int as count, min(r.created_at) as first_at,
            (select json_agg(latest.user_id) from (
               select r2.user_id from message_reactions r2
               where r2.message_id = r.message_id and r2.emoji = r.emoji
               order by r2.created_at desc, r2.user_id desc
               limit ${sql.lit(REACTION_USERS_SHOWN)}
             ) latest) as user_ids
          from message_reactions r where r.message_id = ${messageId}
          group by r.message_id, r.emoji) x)`;
}

/** The users the message whose id is `messageId` mentions, ascending, as a json array (null: none). */
export function mentionedUserIdsJson(messageId: RawBuilder<unknown>): RawBuilder<number[] | null> {
  return sql`(select json_agg(mm.user_id order by mm.user_id) from message_mentions mm where mm.message_id = ${messageId})`;
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
