// Group bans (v1.2): an owner or admin bans a user from a group; a member is removed at once, and nobody adds
// them back until the ban is lifted or its `until` passes (groups.ts, addParticipants). Each is a unit of work
// under the group's write lock, so a ban, the banned user's sends and an add of them are ordered: once the ban
// commits, none of those that follow passes.
import { event } from '../events/catalog.js';
import { recordAudit } from '../store/audit.js';
import { activeGroupBans, deleteGroupBan, upsertGroupBan, type GroupBan } from '../store/group-bans.js';
import { findParticipant, removeMember } from '../store/participants.js';
import { missingUsers } from '../store/users.js';
import { requireGroup } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { forbidden, invalid, notFound } from '../contract/api-errors.js';
import { lockGroup, participantsChanged } from './groups.js';
import { iso, isoOrNull } from '../contract/resources.js';
import { unitOfWork } from './unit-of-work.js';

export interface GroupBanView {
  readonly user_id: number;
  readonly reason: string | null;
  readonly until: string | null;
  readonly created_at: string;
}

const view = (ban: GroupBan): GroupBanView => ({ user_id: ban.user_id, reason: ban.reason, until: isoOrNull(ban.until), created_at: iso(ban.created_at) });

/** An `until` given: a time still to come (a ban that is already over would ban nobody). */
export function futureUntil(until: string | null | undefined, now: Date): Date | null {
  if (until === undefined || until === null) return null;
  const at = new Date(until);
  if (Number.isNaN(at.getTime())) throw invalid('until', 'until must be a date and time (ISO 8601).');
  if (at <= now) throw invalid('until', 'until must be in the future.');
  return at;
}

export async function banFromGroup(
  ctx: ChatContext,
  actor: Actor,
  groupId: number,
  input: { user_id: number; reason?: string | null; until?: string | null },
): Promise<GroupBanView> {
  const now = new Date();
  const until = futureUntil(input.until, now);
  const userId = input.user_id;
  if ((await missingUsers(ctx.db, [userId])).length > 0) throw invalid('user_id', `Unknown user: ${userId}.`);
  return unitOfWork(ctx, actor, async ({ trx, emit, revoke }) => {
    const { participant } = await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    const target = await findParticipant(trx, groupId, userId);
    if (target?.role === 'owner') throw forbidden('forbidden_role', 'Nobody may ban the owner of a group.');
    if (participant.role === 'admin' && target !== undefined && target.role !== 'member') throw forbidden('forbidden_role', 'An admin may ban members only.');
    const ban = await upsertGroupBan(trx, { conversation_id: groupId, user_id: userId, banned_by: actor.userId, reason: input.reason ?? null, until }, now);
    await recordAudit(trx, { actor_id: actor.userId, action: 'group_ban', conversation_id: groupId, target_user_id: userId, details: { reason: ban.reason, until: isoOrNull(until) } });
    if (target !== undefined) {
      await removeMember(trx, groupId, userId, now);
      emit(
        await participantsChanged(trx, groupId, 'removed', actor.userId, [userId]),
        event('GroupMembershipRevoked', userId, { conversation_id: groupId, user_id: userId, reason: 'banned' }),
      );
      revoke(groupId, userId, 'banned');
    }
    return view(ban);
  });
}

export async function unbanFromGroup(ctx: ChatContext, actor: Actor, groupId: number, userId: number): Promise<void> {
  await unitOfWork(ctx, actor, async ({ trx }) => {
    await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    if (!(await deleteGroupBan(trx, groupId, userId, new Date()))) throw notFound('Ban');
    await recordAudit(trx, { actor_id: actor.userId, action: 'group_unban', conversation_id: groupId, target_user_id: userId });
  });
}

/** The group's bans in force, most recent first (owner and admins). */
export async function listGroupBans(ctx: ChatContext, actor: Actor, groupId: number): Promise<GroupBanView[]> {
  await requireGroup(ctx.db, groupId, actor.userId, ['owner', 'admin']);
  return (await activeGroupBans(ctx.db, groupId, new Date())).map(view);
}
