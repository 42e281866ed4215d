// Groups: creation, settings, participants and roles, leaving and deletion. Each change: lock the group →
// check the actor's current role → write → commit → events, so two changes never both pass a stale check.
import { conversationChannel, event, type ChangeType, type DomainEvent } from '../events/catalog.js';
import { deleteConversation, insertGroup, participantCount, updateSettings } from '../store/conversations.js';
import type { DB } from '../store/database.js';
import { lockConversation } from '../store/locks.js';
import { latestMessageId } from '../store/messages.js';
import { addMembers, findParticipant, heirOf, participantIds, removeMember, setRole } from '../store/participants.js';
import { loadPreviews } from '../store/read-model.js';
import type { Role } from '../store/schema.js';
import { inTransaction } from '../store/transaction.js';
import { missingUsers } from '../store/users.js';
import { requireGroup } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { ChatError, forbidden, invalid, notFound } from './errors.js';
import { inboxEvents } from './inbox.js';
import { getConversation } from './conversations.js';
import type { ConversationView } from './resources.js';

export interface GroupInput {
  readonly name?: string;
  readonly avatar_url?: string | null;
}

function groupName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalid('name', 'The group name may not be empty.');
  return trimmed;
}

async function requireUsers(db: DB, ids: readonly number[]): Promise<void> {
  const missing = await missingUsers(db, ids);
  if (missing.length > 0) throw invalid('user_ids', `Unknown users: ${missing.join(', ')}.`);
}

function checkSize(ctx: ChatContext, count: number): void {
  if (count > ctx.limits.groupMaxParticipants) {
    throw invalid('user_ids', `A group may have at most ${ctx.limits.groupMaxParticipants} participants.`);
  }
}

/** Locks a group and checks that the actor is in it with one of `roles` (any role when none are given). */
async function lockGroup(trx: DB, groupId: number, actorId: number, roles?: readonly Role[]) {
  await lockConversation(trx, groupId);
  return requireGroup(trx, groupId, actorId, roles);
}

async function participantsChanged(
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
  const id = await inTransaction(ctx.db, (trx) =>
    insertGroup(trx, { name, avatar_url: input.avatar_url ?? null, ownerId: actor.userId, memberIds: others }, new Date()),
  );
  await ctx.broadcaster.dispatch(await inboxEvents(ctx.db, id), actor.socketId);
  return getConversation(ctx, actor, id);
}

export async function updateGroup(ctx: ChatContext, actor: Actor, groupId: number, input: GroupInput): Promise<ConversationView> {
  const changes: { name?: string; avatar_url?: string | null } = {};
  if (input.name !== undefined) changes.name = groupName(input.name);
  if (input.avatar_url !== undefined) changes.avatar_url = input.avatar_url;
  await inTransaction(ctx.db, async (trx) => {
    await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    await updateSettings(trx, groupId, changes, new Date());
  });
  await ctx.broadcaster.dispatch(await inboxEvents(ctx.db, groupId), actor.socketId);
  return getConversation(ctx, actor, groupId);
}

export async function addParticipants(ctx: ChatContext, actor: Actor, groupId: number, userIds: readonly number[]): Promise<ConversationView> {
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) throw invalid('user_ids', 'Name at least one user.');
  await requireUsers(ctx.db, wanted);
  const added = await inTransaction(ctx.db, async (trx) => {
    const { conversation } = await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    const present = new Set(await participantIds(trx, groupId));
    const fresh = wanted.filter((id) => !present.has(id));
    if (fresh.length === 0) return [];
    checkSize(ctx, conversation.participant_count + fresh.length);
    // Newcomers start with the history read: they were not there for it.
    const added = await addMembers(trx, groupId, fresh, await latestMessageId(trx, groupId), new Date());
    if (added.length === 0) return [];
    // Built in the transaction: the outbox row (webhook) holds what is broadcast.
    const changed = await participantsChanged(trx, groupId, 'added', actor.userId, added);
    await ctx.notifications?.write(trx, [changed]);
    return { added, changed };
  });
  ctx.notifications?.committed();
  const inbox = await inboxEvents(ctx.db, groupId);
  if (!Array.isArray(added)) {
    await ctx.broadcaster.dispatch([added.changed, ...inbox], actor.socketId);
  }
  return getConversation(ctx, actor, groupId);
}

export async function removeParticipant(ctx: ChatContext, actor: Actor, groupId: number, userId: number): Promise<void> {
  const events = await inTransaction(ctx.db, async (trx) => {
    const { participant } = await lockGroup(trx, groupId, actor.userId, ['owner', 'admin']);
    if (userId === actor.userId) throw new ChatError('conflict', 'Use leave to leave a group yourself.');
    const target = await findParticipant(trx, groupId, userId);
    if (!target) throw notFound('Participant');
    if (participant.role === 'admin' && target.role !== 'member') throw forbidden('forbidden_role', 'An admin may remove members only.');
    await removeMember(trx, groupId, userId, new Date());
    const events = [
      await participantsChanged(trx, groupId, 'removed', actor.userId, [userId]),
      event('GroupMembershipRevoked', userId, { conversation_id: groupId, user_id: userId, reason: 'removed' }),
    ];
    await ctx.notifications?.write(trx, events);
    return events;
  });
  ctx.notifications?.committed();
  // Their sockets stop receiving the conversation before anything else is said on it.
  await ctx.broadcaster.unsubscribeUser(conversationChannel(groupId), userId, 'removed');
  await ctx.broadcaster.dispatch(events, actor.socketId);
}

export async function changeRole(ctx: ChatContext, actor: Actor, groupId: number, userId: number, role: Role): Promise<void> {
  const targets = await inTransaction(ctx.db, async (trx) => {
    // The actor's role as it is now: of two hand-overs at once, the second finds its actor an admin.
    await lockGroup(trx, groupId, actor.userId, ['owner']);
    if (userId === actor.userId) throw new ChatError('conflict', 'The owner cannot change their own role; hand ownership to someone else.');
    const target = await findParticipant(trx, groupId, userId);
    if (!target) throw notFound('Participant');
    if (target.role === role) return null;
    await setRole(trx, groupId, userId, role);
    // One owner per group: handing it over makes the previous owner an admin.
    if (role === 'owner') await setRole(trx, groupId, actor.userId, 'admin');
    const changed = await participantsChanged(trx, groupId, 'role_changed', actor.userId, role === 'owner' ? [userId, actor.userId] : [userId]);
    await ctx.notifications?.write(trx, [changed]);
    return changed;
  });
  if (targets === null) return;
  ctx.notifications?.committed();
  await ctx.broadcaster.dispatch([targets], actor.socketId);
}

export async function leaveGroup(ctx: ChatContext, actor: Actor, groupId: number): Promise<void> {
  const outcome = await inTransaction(ctx.db, async (trx) => {
    const { participant, conversation } = await lockGroup(trx, groupId, actor.userId);
    await removeMember(trx, groupId, actor.userId, new Date());
    const events: DomainEvent[] = [];
    if (conversation.participant_count <= 1) {
      // Nobody is left to see it.
      await deleteConversation(trx, groupId);
    } else {
      // An owner's leaving hands the group to the longest-standing admin, else member.
      const heir = participant.role === 'owner' ? await heirOf(trx, groupId) : null;
      if (heir !== null) await setRole(trx, groupId, heir, 'owner');
      events.push(await participantsChanged(trx, groupId, 'removed', actor.userId, [actor.userId]));
      if (heir !== null) events.push(await participantsChanged(trx, groupId, 'role_changed', actor.userId, [heir]));
    }
    events.push(event('GroupMembershipRevoked', actor.userId, { conversation_id: groupId, user_id: actor.userId, reason: 'left' }));
    await ctx.notifications?.write(trx, events);
    return events;
  });
  ctx.notifications?.committed();
  await ctx.broadcaster.unsubscribeUser(conversationChannel(groupId), actor.userId, 'left');
  await ctx.broadcaster.dispatch(outcome, actor.socketId);
}

export async function deleteGroup(ctx: ChatContext, actor: Actor, groupId: number): Promise<void> {
  const participants = await inTransaction(ctx.db, async (trx) => {
    await lockGroup(trx, groupId, actor.userId, ['owner']);
    const ids = await participantIds(trx, groupId);
    await deleteConversation(trx, groupId);
    await ctx.notifications?.write(trx, revokedAll(groupId, ids));
    return ids;
  });
  ctx.notifications?.committed();
  for (const userId of participants) await ctx.broadcaster.unsubscribeUser(conversationChannel(groupId), userId, 'group_deleted');
  await ctx.broadcaster.dispatch(revokedAll(groupId, participants), actor.socketId);
}

/** A deleted group's GroupMembershipRevoked, one per member (each member's own membership ends). */
function revokedAll(groupId: number, participants: readonly number[]): DomainEvent[] {
  return participants.map((userId) => event('GroupMembershipRevoked', userId, { conversation_id: groupId, user_id: userId, reason: 'group_deleted' }));
}
