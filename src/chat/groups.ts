// Groups: creation, settings, participants and roles, leaving and deletion. Each change is a unit of work: lock
// the group → check the actor's current role → write → emit, so two changes never both pass a stale check.
import type { ChangeType } from '../contract/events.js';
import { event, type DomainEvent } from '../events/catalog.js';
import { messagingBlockedUserIds } from '../store/blocks.js';
import { deleteConversation, insertGroup, participantCount, updateSettings, type GroupSettings } from '../store/conversations.js';
import type { DB } from '../store/database.js';
import { lockConversation } from '../store/locks.js';
import { latestMessageId } from '../store/messages.js';
import { addMembers, findParticipant, heirOf, participantIds, removeMember, setRole } from '../store/participants.js';
import { loadPreviews } from '../store/read-model.js';
import type { Role } from '../store/schema.js';
import { missingUsers } from '../store/users.js';
import { recordAudit } from '../store/audit.js';
import { bannedFromGroup } from '../store/group-bans.js';
import { requireGroup } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { ChatError, forbidden, invalid, notFound } from '../contract/api-errors.js';
import { unitOfWork } from './unit-of-work.js';
import { getConversation } from './conversations.js';
import type { ConversationView } from '../contract/resources.js';

export interface GroupInput {
  readonly name?: string;
  readonly avatar_url?: string | null;
  /** v1.2: a member may send once per this many seconds (0 to 3600; 0: off). */
  readonly slow_mode_s?: number;
  /** v1.2: only the owner and admins may send. */
  readonly frozen?: boolean;
}

/** The longest slow mode window, in seconds. */
export const MAX_SLOW_MODE_S = 3600;

function groupName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalid('name', 'The group name may not be empty.');
  return trimmed;
}

async function requireUsers(db: DB, ids: readonly number[]): Promise<void> {
  const missing = await missingUsers(db, ids);
  if (missing.length > 0) throw invalid('user_ids', `Unknown users: ${missing.join(', ')}.`);
}

/**
 * A block between the actor and a user, either way, stops the actor putting them in a group (as it stops direct
 * messages): nobody is made a member, and so shown presence and messages, by someone they blocked.
 */
async function refuseBlocked(db: DB, actorId: number, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const blocked = new Set(await messagingBlockedUserIds(db, actorId));
  const refused = ids.filter((id) => blocked.has(id));
  if (refused.length > 0) throw forbidden('blocked', `You cannot add users ${refused.join(', ')} to a group: one of you blocked the other.`);
}

/** A user banned from the group (group-bans.ts) is not added back until the ban is lifted or runs out. */
async function refuseBanned(db: DB, groupId: number, ids: readonly number[]): Promise<void> {
  const banned = await bannedFromGroup(db, groupId, ids, new Date());
  if (banned.length > 0) throw forbidden('banned', `Users ${banned.join(', ')} are banned from this group.`);
}

function checkSize(ctx: ChatContext, count: number): void {
  if (count > ctx.limits.groupMaxParticipants) {
    throw invalid('user_ids', `A group may have at most ${ctx.limits.groupMaxParticipants} participants.`);
  }
}

/** Locks a group and checks that the actor is in it with one of `roles` (any role when none are given). */
export async function lockGroup(trx: DB, groupId: number, actorId: number, roles?: readonly Role[]) {
  await lockConversation(trx, groupId);
  return requireGroup(trx, groupId, actorId, roles);
}

export async function participantsChanged(
  db: DB,
  conversationId: number,
  changeType: ChangeType,
  actorUserId: number,
  targetUserIds: number[],
): Promise<DomainEvent> {
  // One after the other: it runs inside transactions too (a transaction's connection takes one query at a time).
  const count = await participantCount(db, conversationId);
  const previews = await loadPreviews(db, [conversationId]);
  return event('GroupParticipantsChanged', conversationId, {
    conversation_id: conversationId,
    change_type: changeType,
    actor_user_id: actorUserId,
    target_user_ids: targetUserIds,
    participant_count: count,
    participants_preview: previews.get(conversationId) ?? [],
  });
}


export async function createGroup(
  ctx: ChatContext,
  actor: Actor,
  input: { name: string; user_ids: readonly number[]; avatar_url?: string | null },
): Promise<ConversationView> {
  const name = groupName(input.name);
  const others = [...new Set(input.user_ids)].filter((id) => id !== actor.userId);
  checkSize(ctx, others.length + 1);
  await requireUsers(ctx.db, others);
  await refuseBlocked(ctx.db, actor.userId, others);
  await ctx.rateLimiter.consume('group_create', actor.userId); // CHAT_RATE_GROUPS_PER_HOUR
  const id = await unitOfWork(ctx, actor, async (work) => {
    const id = await insertGroup(work.trx, { name, avatar_url: input.avatar_url ?? null, ownerId: actor.userId, memberIds: others }, new Date());
    work.inboxChanged(id);
    return id;
  });
  return getConversation(ctx, actor, id);
}

export async function updateGroup(ctx: ChatContext, actor: Actor, groupId: number, input: GroupInput): Promise<ConversationView> {
  const changes: GroupSettings = {};
  if (input.name !== undefined) changes.name = groupName(input.name);
  if (input.avatar_url !== undefined) changes.avatar_url = input.avatar_url;
  // 0 to MAX_SLOW_MODE_S: the route's schema (and the column's check) hold it.
  if (input.slow_mode_s !== undefined) changes.slow_mode_s = input.slow_mode_s;
  if (input.frozen !== undefined) changes.frozen = input.frozen;
  await unitOfWork(ctx, actor, async ({ trx, inboxChanged }) => {
    const { conversation } = await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    await updateSettings(trx, groupId, changes, new Date());
    const audit = { actor_id: actor.userId, conversation_id: groupId } as const;
    if (changes.slow_mode_s !== undefined && changes.slow_mode_s !== conversation.slow_mode_s) {
      await recordAudit(trx, { ...audit, action: 'slow_mode_changed', details: { from: conversation.slow_mode_s, to: changes.slow_mode_s } });
    }
    if (changes.frozen !== undefined && changes.frozen !== conversation.frozen) {
      await recordAudit(trx, { ...audit, action: changes.frozen ? 'group_frozen' : 'group_unfrozen' });
    }
    inboxChanged(groupId);
  });
  return getConversation(ctx, actor, groupId);
}

export async function addParticipants(ctx: ChatContext, actor: Actor, groupId: number, userIds: readonly number[]): Promise<ConversationView> {
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) throw invalid('user_ids', 'Name at least one user.');
  await requireUsers(ctx.db, wanted);
  await unitOfWork(ctx, actor, async ({ trx, emit, inboxChanged }) => {
    const { conversation } = await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    const present = new Set(await participantIds(trx, groupId));
    const fresh = wanted.filter((id) => !present.has(id));
    if (fresh.length === 0) return;
    checkSize(ctx, conversation.participant_count + fresh.length);
    await refuseBlocked(trx, actor.userId, fresh);
    await refuseBanned(trx, groupId, fresh);
    // Newcomers start with the history read: they were not there for it.
    const added = await addMembers(trx, groupId, fresh, await latestMessageId(trx, groupId), new Date());
    if (added.length === 0) return;
    emit(await participantsChanged(trx, groupId, 'added', actor.userId, added));
    inboxChanged(groupId);
  });
  return getConversation(ctx, actor, groupId);
}

export async function removeParticipant(ctx: ChatContext, actor: Actor, groupId: number, userId: number): Promise<void> {
  await unitOfWork(ctx, actor, async ({ trx, emit, revoke }) => {
    const { participant } = await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    if (userId === actor.userId) throw new ChatError('conflict', 'Use leave to leave a group yourself.');
    const target = await findParticipant(trx, groupId, userId);
    if (!target) throw notFound('Participant');
    if (participant.role === 'admin' && target.role !== 'member') throw forbidden('forbidden_role', 'An admin may remove members only.');
    await removeMember(trx, groupId, userId, new Date());
    await recordAudit(trx, { actor_id: actor.userId, action: 'participant_removed', conversation_id: groupId, target_user_id: userId });
    emit(
      await participantsChanged(trx, groupId, 'removed', actor.userId, [userId]),
      event('GroupMembershipRevoked', userId, { conversation_id: groupId, user_id: userId, reason: 'removed' }),
    );
    revoke(groupId, userId, 'removed');
  });
}

export async function changeRole(ctx: ChatContext, actor: Actor, groupId: number, userId: number, role: Role): Promise<void> {
  await unitOfWork(ctx, actor, async ({ trx, emit }) => {
    // The actor's role as it is now: of two hand-overs at once, the second finds its actor an admin.
    await lockGroup(trx, groupId, actor.userId, ['owner']);
    if (userId === actor.userId) throw new ChatError('conflict', 'The owner cannot change their own role; hand ownership to someone else.');
    const target = await findParticipant(trx, groupId, userId);
    if (!target) throw notFound('Participant');
    if (target.role === role) return;
    await setRole(trx, groupId, userId, role);
    // One owner per group: handing it over makes the previous owner an admin.
    if (role === 'owner') await setRole(trx, groupId, actor.userId, 'admin');
    await recordAudit(trx, { actor_id: actor.userId, action: 'role_changed', conversation_id: groupId, target_user_id: userId, details: { from: target.role, to: role } });
    emit(await participantsChanged(trx, groupId, 'role_changed', actor.userId, role === 'owner' ? [userId, actor.userId] : [userId]));
  });
}

export async function leaveGroup(ctx: ChatContext, actor: Actor, groupId: number): Promise<void> {
  await unitOfWork(ctx, actor, async ({ trx, emit, revoke }) => {
    const { participant, conversation } = await lockGroup(trx, groupId, actor.userId);
    await removeMember(trx, groupId, actor.userId, new Date());
    if (conversation.participant_count <= 1) {
      // Nobody is left to see it.
      await deleteConversation(trx, groupId);
    } else {
      // An owner's leaving hands the group to the longest-standing admin, else member.
      const heir = participant.role === 'owner' ? await heirOf(trx, groupId) : null;
      if (heir !== null) await setRole(trx, groupId, heir, 'owner');
      emit(await participantsChanged(trx, groupId, 'removed', actor.userId, [actor.userId]));
      if (heir !== null) emit(await participantsChanged(trx, groupId, 'role_changed', actor.userId, [heir]));
    }
    emit(event('GroupMembershipRevoked', actor.userId, { conversation_id: groupId, user_id: actor.userId, reason: 'left' }));
    revoke(groupId, actor.userId, 'left');
  });
}

export async function deleteGroup(ctx: ChatContext, actor: Actor, groupId: number): Promise<void> {
  await unitOfWork(ctx, actor, async ({ trx, emit, revoke }) => {
    await lockGroup(trx, groupId, actor.userId, ['owner']);
    const ids = await participantIds(trx, groupId);
    await deleteConversation(trx, groupId);
    await recordAudit(trx, { actor_id: actor.userId, action: 'group_deleted', conversation_id: groupId });
    // Each member's own membership ends.
    for (const userId of ids) {
      emit(event('GroupMembershipRevoked', userId, { conversation_id: groupId, user_id: userId, reason: 'group_deleted' }));
      revoke(groupId, userId, 'group_deleted');
    }
  });
}
