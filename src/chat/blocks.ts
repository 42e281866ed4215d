// Blocking: either side's block stops direct messaging between the two. A block takes the pair's user rows
// and then their direct conversation (see store/locks.ts), so a send into that conversation lands wholly
// before the block or is refused after it.
import { event } from '../events/catalog.js';
import { blockedUsers, deleteBlock, insertBlock, messagingBlockedUserIds } from '../store/blocks.js';
import { findDirect } from '../store/conversations.js';
import type { DB } from '../store/database.js';
import { lockConversation, lockUsers } from '../store/locks.js';
import { inTransaction, type Tx } from '../store/transaction.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from './errors.js';
import type { UserResource } from './resources.js';
import { userResource } from '../store/read-model.js';

export async function listBlocks(ctx: ChatContext, actor: Actor): Promise<{ data: UserResource[]; messaging_blocked_user_ids: number[] }> {
  const [blocked, ids] = await Promise.all([blockedUsers(ctx.db, actor.userId), messagingBlockedUserIds(ctx.db, actor.userId)]);
  return { data: blocked.map(userResource), messaging_blocked_user_ids: ids };
}

/** Locks the pair and their direct conversation, if any; false when the other user does not exist. */
async function lockPair(trx: DB, userId: number, otherId: number): Promise<boolean> {
  const found = await lockUsers(trx, [userId, otherId]);
  if (!found.has(otherId)) return false;
  const direct = await findDirect(trx, userId, otherId);
  if (direct !== null) await lockConversation(trx, direct);
  return true;
}

/** The webhook of a block or unblock: once (not per recipient), the event as the blocker receives it. */
async function writeBlockRow(ctx: ChatContext, trx: Tx, actor: Actor, otherId: number, blocked: boolean, ids: { mine: number[] }): Promise<void> {
  const base = { blocker_id: actor.userId, blocked_user_id: otherId, blocked };
  await ctx.notifications?.write(trx, [event('UserBlockChanged', actor.userId, { ...base, messaging_blocked_user_ids: ids.mine })]);
}

async function announce(ctx: ChatContext, actor: Actor, otherId: number, blocked: boolean, ids: { mine: number[]; theirs: number[] }): Promise<void> {
  const base = { blocker_id: actor.userId, blocked_user_id: otherId, blocked };
  await ctx.broadcaster.dispatch(
    [
      event('UserBlockChanged', actor.userId, { ...base, messaging_blocked_user_ids: ids.mine }),
      event('UserBlockChanged', otherId, { ...base, messaging_blocked_user_ids: ids.theirs }),
    ],
    actor.socketId,
  );
}

/** In the transaction, one query after the other (a transaction's connection runs one at a time). */
async function blockedIdsOfPair(trx: DB, userId: number, otherId: number) {
  const mine = await messagingBlockedUserIds(trx, userId);
  return { mine, theirs: await messagingBlockedUserIds(trx, otherId) };
}

export async function blockUser(ctx: ChatContext, actor: Actor, userId: number): Promise<{ messaging_blocked_user_ids: number[] }> {
  if (userId === actor.userId) throw invalid('user_id', 'You cannot block yourself.');
  const ids = await inTransaction(ctx.db, async (trx) => {
    if (!(await lockPair(trx, actor.userId, userId))) throw notFound('User');
    await insertBlock(trx, actor.userId, userId, new Date());
    const ids = await blockedIdsOfPair(trx, actor.userId, userId);
    await writeBlockRow(ctx, trx, actor, userId, true, ids);
    return ids;
  });
  ctx.notifications?.committed();
  await announce(ctx, actor, userId, true, ids);
  return { messaging_blocked_user_ids: ids.mine };
}

export async function unblockUser(ctx: ChatContext, actor: Actor, userId: number): Promise<{ messaging_blocked_user_ids: number[] }> {
  const ids = await inTransaction(ctx.db, async (trx) => {
    if (!(await lockPair(trx, actor.userId, userId)) || !(await deleteBlock(trx, actor.userId, userId))) throw notFound('Block');
    const ids = await blockedIdsOfPair(trx, actor.userId, userId);
    await writeBlockRow(ctx, trx, actor, userId, false, ids);
    return ids;
  });
  ctx.notifications?.committed();
  await announce(ctx, actor, userId, false, ids);
  return { messaging_blocked_user_ids: ids.mine };
}
