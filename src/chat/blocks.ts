// Blocking: either side's block stops direct messaging between the two. A block takes the pair's user rows
// and then their direct conversation (see store/locks.ts), so a send into that conversation lands wholly
// before the block or is refused after it.
import { event } from '../events/catalog.js';
import { blockedUsers, deleteBlock, insertBlock, messagingBlockedUserIds } from '../store/blocks.js';
import { findDirect } from '../store/conversations.js';
import type { DB } from '../store/database.js';
import { lockConversation, lockUsers } from '../store/locks.js';
import { unitOfWork, type Work } from './unit-of-work.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from '../contract/api-errors.js';
import type { UserResource } from '../contract/resources.js';
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

/**
 * UserBlockChanged to both users, each with their own list; the webhook tells it once, as the blocker receives it.
 */
function announce(work: Work, actor: Actor, otherId: number, blocked: boolean, ids: { mine: number[]; theirs: number[] }): void {
  const base = { blocker_id: actor.userId, blocked_user_id: otherId, blocked };
  work.emit(event('UserBlockChanged', actor.userId, { ...base, messaging_blocked_user_ids: ids.mine }));
  work.emitWithoutWebhook(event('UserBlockChanged', otherId, { ...base, messaging_blocked_user_ids: ids.theirs }));
}

/** In the transaction, one query after the other (a transaction's connection runs one at a time). */
async function blockedIdsOfPair(trx: DB, userId: number, otherId: number) {
  const mine = await messagingBlockedUserIds(trx, userId);
  return { mine, theirs: await messagingBlockedUserIds(trx, otherId) };
}

export async function blockUser(ctx: ChatContext, actor: Actor, userId: number): Promise<{ messaging_blocked_user_ids: number[] }> {
  if (userId === actor.userId) throw invalid('user_id', 'You cannot block yourself.');
  const ids = await unitOfWork(ctx, actor, async (work) => {
    if (!(await lockPair(work.trx, actor.userId, userId))) throw notFound('User');
    await insertBlock(work.trx, actor.userId, userId, new Date());
    const ids = await blockedIdsOfPair(work.trx, actor.userId, userId);
    announce(work, actor, userId, true, ids);
    return ids;
  });
  return { messaging_blocked_user_ids: ids.mine };
}

export async function unblockUser(ctx: ChatContext, actor: Actor, userId: number): Promise<{ messaging_blocked_user_ids: number[] }> {
  const ids = await unitOfWork(ctx, actor, async (work) => {
    if (!(await lockPair(work.trx, actor.userId, userId)) || !(await deleteBlock(work.trx, actor.userId, userId))) throw notFound('Block');
    const ids = await blockedIdsOfPair(work.trx, actor.userId, userId);
    announce(work, actor, userId, false, ids);
    return ids;
  });
  return { messaging_blocked_user_ids: ids.mine };
}
