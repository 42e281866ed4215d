// Blocking: either side's block stops direct messaging between the two.
import { event } from '../events/catalog.js';
import type { DB } from '../store/database.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from './errors.js';
import type { UserResource } from './resources.js';
import { userResource } from './views.js';

/** Everyone the user has blocked or is blocked by: the users it cannot message directly. */
export async function messagingBlockedUserIds(db: DB, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('blocks')
    .select('blocked_id as id')
    .where('blocker_id', '=', userId)
    .union(db.selectFrom('blocks').select('blocker_id as id').where('blocked_id', '=', userId))
    .execute();
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

export async function listBlocks(ctx: ChatContext, actor: Actor): Promise<{ data: UserResource[]; messaging_blocked_user_ids: number[] }> {
  const [blocked, ids] = await Promise.all([
    ctx.db
      .selectFrom('blocks')
      .innerJoin('users', 'users.id', 'blocks.blocked_id')
      .select(['users.id', 'users.name', 'users.avatar_url'])
      .where('blocks.blocker_id', '=', actor.userId)
      .orderBy('blocks.created_at', 'desc')
      .execute(),
    messagingBlockedUserIds(ctx.db, actor.userId),
  ]);
  return { data: blocked.map(userResource), messaging_blocked_user_ids: ids };
}

async function announce(ctx: ChatContext, actor: Actor, blockedUserId: number, blocked: boolean): Promise<number[]> {
  const [mine, theirs] = await Promise.all([
    messagingBlockedUserIds(ctx.db, actor.userId),
    messagingBlockedUserIds(ctx.db, blockedUserId),
  ]);
  const base = { blocker_id: actor.userId, blocked_user_id: blockedUserId, blocked };
  await ctx.broadcaster.dispatch(
    [
      event('UserBlockChanged', actor.userId, { ...base, messaging_blocked_user_ids: mine }),
      event('UserBlockChanged', blockedUserId, { ...base, messaging_blocked_user_ids: theirs }),
    ],
    actor.socketId,
  );
  return mine;
}

export async function blockUser(ctx: ChatContext, actor: Actor, userId: number): Promise<{ messaging_blocked_user_ids: number[] }> {
  if (userId === actor.userId) throw invalid('user_id', 'You cannot block yourself.');
  const user = await ctx.db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  if (!user) throw notFound('User');
  await ctx.db
    .insertInto('blocks')
    .values({ blocker_id: actor.userId, blocked_id: userId, created_at: new Date() })
    .onConflict((oc) => oc.columns(['blocker_id', 'blocked_id']).doNothing())
    .execute();
  return { messaging_blocked_user_ids: await announce(ctx, actor, userId, true) };
}

export async function unblockUser(ctx: ChatContext, actor: Actor, userId: number): Promise<{ messaging_blocked_user_ids: number[] }> {
  const removed = await ctx.db
    .deleteFrom('blocks')
    .where('blocker_id', '=', actor.userId)
    .where('blocked_id', '=', userId)
    .returning('blocked_id')
    .executeTakeFirst();
  if (!removed) throw notFound('Block');
  return { messaging_blocked_user_ids: await announce(ctx, actor, userId, false) };
}
