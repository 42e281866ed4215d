// Service-wide user bans (v1.2, the host app's backend): a banned user's tokens are refused (http/auth.ts), their
// sockets close on every node at the ban's commit, and nobody may message them (the send function refuses a
// direct message to them, and any message of theirs). Lifted by unbanning or when `until` passes.
import { recordAudit } from '../store/audit.js';
import { deleteUserBan, upsertUserBan, type UserBan } from '../store/user-bans.js';
import { lockUsers } from '../store/locks.js';
import { SERVER, type ChatContext } from './context.js';
import { ChatError, notFound } from '../contract/api-errors.js';
import { futureUntil } from './group-bans.js';
import { isoOrNull } from '../contract/resources.js';
import { unitOfWork, type Work } from './unit-of-work.js';

export interface UserBanView {
  readonly user_id: number;
  readonly reason: string | null;
  readonly until: string | null;
}

export const userBannedError = (): ChatError => new ChatError('user_banned', 'This user is banned from the service.');

/**
 * Bans a user inside a unit of work: the ban, its audit entry (actor_id null: the server key), their sockets closed
 * after the commit. It takes the user's row first (store/locks.ts: a caller that locks a conversation too takes this
 * row before it): each send share-locks its sender's row, so the sends under way commit before the ban, and those
 * that follow see it. 404 for a user never seen.
 */
export async function banUserIn(work: Work, ban: UserBan, now: Date): Promise<UserBanView> {
  if (!(await lockUsers(work.trx, [ban.user_id])).has(ban.user_id)) throw notFound('User');
  const saved = await upsertUserBan(work.trx, ban, now);
  await recordAudit(work.trx, { actor_id: null, action: 'user_banned', target_user_id: ban.user_id, details: { reason: saved.reason, until: isoOrNull(saved.until) } });
  work.disconnect(ban.user_id);
  return { user_id: saved.user_id, reason: saved.reason, until: isoOrNull(saved.until) };
}

export async function banUser(ctx: ChatContext, userId: number, input: { reason?: string | null; until?: string | null }): Promise<UserBanView> {
  const now = new Date();
  const until = futureUntil(input.until, now);
  return unitOfWork(ctx, SERVER, (work) => banUserIn(work, { user_id: userId, reason: input.reason ?? null, until }, now));
}

export async function unbanUser(ctx: ChatContext, userId: number): Promise<void> {
  await unitOfWork(ctx, SERVER, async ({ trx }) => {
    if (!(await deleteUserBan(trx, userId, new Date()))) throw notFound('Ban');
    await recordAudit(trx, { actor_id: null, action: 'user_unbanned', target_user_id: userId });
  });
}
