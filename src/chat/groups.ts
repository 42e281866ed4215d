// Groups: creation, settings, participants and roles, leaving and deletion.
import { sql } from 'kysely';
import { conversationChannel, event, type ChangeType, type DomainEvent } from '../events/catalog.js';
import type { Role } from '../store/schema.js';
import { requireGroup } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { ChatError, forbidden, invalid, notFound } from './errors.js';
import { inboxEvents } from './inbox.js';
import type { ConversationResource } from './resources.js';
import { usersExist } from './users.js';
import { loadPreviews } from './views.js';

export interface GroupInput {
  readonly name?: string;
  readonly avatar_url?: string | null;
}

function groupName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalid('name', 'The group name may not be empty.');
  return trimmed;
}

async function requireUsers(ctx: ChatContext, ids: readonly number[]): Promise<void> {
  const missing = await usersExist(ctx.db, ids);
  if (missing.length > 0) throw invalid('user_ids', `Unknown users: ${missing.join(', ')}.`);
}

function checkSize(ctx: ChatContext, count: number): void {
  if (count > ctx.limits.groupMaxParticipants) {
    throw invalid('user_ids', `A group may have at most ${ctx.limits.groupMaxParticipants} participants.`);
  }
}

async function participantsChanged(
  ctx: ChatContext,
  conversationId: number,
  changeType: ChangeType,
  actorUserId: number,
  targetUserIds: number[],
): Promise<DomainEvent> {
  const [conversation, previews] = await Promise.all([
    ctx.db.selectFrom('conversations').select('participant_count').where('id', '=', conversationId).executeTakeFirstOrThrow(),
    loadPreviews(ctx.db, [conversationId]),
  ]);
  return event('GroupParticipantsChanged', conversationId, {
    conversation_id: conversationId,
    change_type: changeType,
    actor_user_id: actorUserId,
    target_user_ids: targetUserIds,
    participant_count: conversation.participant_count,
    participants_preview: previews.get(conversationId) ?? [],
  });
}

const ownView = (events: DomainEvent[], userId: number): ConversationResource =>
  events.find((e) => e.name === 'ConversationInboxUpdated' && e.to[0] === userId)!.payload as ConversationResource;

export async function createGroup(
  ctx: ChatContext,
  actor: Actor,
  input: { name: string; user_ids: readonly number[]; avatar_url?: string | null },
): Promise<ConversationResource> {
  const name = groupName(input.name);
  const others = [...new Set(input.user_ids)].filter((id) => id !== actor.userId);
  checkSize(ctx, others.length + 1);
  await requireUsers(ctx, others);
  const now = new Date();
  const id = await ctx.db.transaction().execute(async (trx) => {
    const group = await trx
      .insertInto('conversations')
      .values({
        type: 'group',
        name,
        avatar_url: input.avatar_url ?? null,
        participant_count: others.length + 1,
        last_activity_at: now,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    // Ranked join times keep the creator first and the others in the order given.
    const rows = [actor.userId, ...others].map((user_id, i) => ({
      conversation_id: group.id,
      user_id,
      role: (i === 0 ? 'owner' : 'member') as Role,
      joined_at: new Date(now.getTime() + i),
    }));
    for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('participants').values(rows.slice(i, i + 1000)).execute();
    return group.id;
  });
  const events = await inboxEvents(ctx.db, id);
  await ctx.broadcaster.dispatch(events, actor.socketId);
  return ownView(events, actor.userId);
}

export async function updateGroup(ctx: ChatContext, actor: Actor, groupId: number, input: GroupInput): Promise<ConversationResource> {
  await requireGroup(ctx.db, groupId, actor.userId, ['owner', 'admin']);
  const changes: { name?: string; avatar_url?: string | null } = {};
  if (input.name !== undefined) changes.name = groupName(input.name);
  if (input.avatar_url !== undefined) changes.avatar_url = input.avatar_url;
  await ctx.db.updateTable('conversations').set({ ...changes, updated_at: new Date() }).where('id', '=', groupId).execute();
  const events = await inboxEvents(ctx.db, groupId);
  await ctx.broadcaster.dispatch(events, actor.socketId);
  return ownView(events, actor.userId);
}

export async function addParticipants(ctx: ChatContext, actor: Actor, groupId: number, userIds: readonly number[]): Promise<ConversationResource> {
  const { conversation } = await requireGroup(ctx.db, groupId, actor.userId, ['owner', 'admin']);
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) throw invalid('user_ids', 'Name at least one user.');
  await requireUsers(ctx, wanted);
  const now = new Date();
  const added = await ctx.db.transaction().execute(async (trx) => {
    const present = await trx
      .selectFrom('participants')
      .select('user_id')
      .where('conversation_id', '=', groupId)
      .where('user_id', 'in', wanted)
      .execute();
    const presentIds = new Set(present.map((p) => p.user_id));
    const fresh = wanted.filter((id) => !presentIds.has(id));
    if (fresh.length === 0) return [];
    checkSize(ctx, conversation.participant_count + fresh.length);
    // Newcomers start with the history read: they were not there for it.
    const latest = await trx
      .selectFrom('messages')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('conversation_id', '=', groupId)
      .executeTakeFirst();
    await trx
      .insertInto('participants')
      .values(fresh.map((user_id, i) => ({ conversation_id: groupId, user_id, role: 'member' as Role, joined_at: new Date(now.getTime() + i), last_read_message_id: latest?.id ?? 0 })))
      .execute();
    await trx
      .updateTable('conversations')
      .set({ participant_count: sql`participant_count + ${fresh.length}`, updated_at: now })
      .where('id', '=', groupId)
      .execute();
    return fresh;
  });
  const inbox = await inboxEvents(ctx.db, groupId);
  if (added.length > 0) {
    await ctx.broadcaster.dispatch([await participantsChanged(ctx, groupId, 'added', actor.userId, added), ...inbox], actor.socketId);
  }
  return ownView(inbox, actor.userId);
}

/** Deletes a membership and keeps the count; true when the user was a participant. */
async function deleteParticipant(ctx: ChatContext, groupId: number, userId: number): Promise<boolean> {
  return ctx.db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom('participants')
      .where('conversation_id', '=', groupId)
      .where('user_id', '=', userId)
      .returning('user_id')
      .executeTakeFirst();
    if (!removed) return false;
    await trx
      .updateTable('conversations')
      .set({ participant_count: sql`participant_count - 1`, updated_at: new Date() })
      .where('id', '=', groupId)
      .execute();
    return true;
  });
}

async function roleOf(ctx: ChatContext, groupId: number, userId: number): Promise<Role> {
  const row = await ctx.db
    .selectFrom('participants')
    .select('role')
    .where('conversation_id', '=', groupId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) throw notFound('Participant');
  return row.role;
}

export async function removeParticipant(ctx: ChatContext, actor: Actor, groupId: number, userId: number): Promise<void> {
  const { participant } = await requireGroup(ctx.db, groupId, actor.userId, ['owner', 'admin']);
  if (userId === actor.userId) throw new ChatError('conflict', 'Use leave to leave a group yourself.');
  const targetRole = await roleOf(ctx, groupId, userId);
  if (participant.role === 'admin' && targetRole !== 'member') {
    throw forbidden('forbidden_role', 'An admin may remove members only.');
  }
  if (!(await deleteParticipant(ctx, groupId, userId))) throw notFound('Participant');
  // Their sockets stop receiving the conversation before anything else is said on it.
  await ctx.broadcaster.unsubscribeUser(conversationChannel(groupId), userId, 'removed');
  await ctx.broadcaster.dispatch(
    [
      await participantsChanged(ctx, groupId, 'removed', actor.userId, [userId]),
      event('GroupMembershipRevoked', userId, { conversation_id: groupId, user_id: userId, reason: 'removed' }),
    ],
    actor.socketId,
  );
}

export async function changeRole(ctx: ChatContext, actor: Actor, groupId: number, userId: number, role: Role): Promise<void> {
  await requireGroup(ctx.db, groupId, actor.userId, ['owner']);
  if (userId === actor.userId) throw new ChatError('conflict', 'The owner cannot change their own role; hand ownership to someone else.');
  const current = await roleOf(ctx, groupId, userId);
  if (current === role) return;
  const targets = [userId];
  await ctx.db.transaction().execute(async (trx) => {
    await trx.updateTable('participants').set({ role }).where('conversation_id', '=', groupId).where('user_id', '=', userId).execute();
    if (role === 'owner') {
      // One owner per group: handing it over makes the previous owner an admin.
      await trx.updateTable('participants').set({ role: 'admin' }).where('conversation_id', '=', groupId).where('user_id', '=', actor.userId).execute();
      targets.push(actor.userId);
    }
  });
  await ctx.broadcaster.dispatch([await participantsChanged(ctx, groupId, 'role_changed', actor.userId, targets)], actor.socketId);
}

export async function leaveGroup(ctx: ChatContext, actor: Actor, groupId: number): Promise<void> {
  const { participant } = await requireGroup(ctx.db, groupId, actor.userId);
  if (!(await deleteParticipant(ctx, groupId, actor.userId))) throw notFound('Group');
  await ctx.broadcaster.unsubscribeUser(conversationChannel(groupId), actor.userId, 'left');
  const events: DomainEvent[] = [];
  const remaining = await ctx.db.selectFrom('conversations').select('participant_count').where('id', '=', groupId).executeTakeFirstOrThrow();
  if (remaining.participant_count === 0) {
    // Nobody is left to see it.
    await ctx.db.deleteFrom('conversations').where('id', '=', groupId).execute();
  } else {
    let heir: number | null = null;
    if (participant.role === 'owner') {
      const next = await ctx.db
        .selectFrom('participants')
        .select('user_id')
        .where('conversation_id', '=', groupId)
        .orderBy(sql`case role when 'admin' then 0 else 1 end`)
        .orderBy('joined_at')
        .orderBy('user_id')
        .executeTakeFirstOrThrow();
      heir = next.user_id;
      await ctx.db.updateTable('participants').set({ role: 'owner' }).where('conversation_id', '=', groupId).where('user_id', '=', heir).execute();
    }
    events.push(await participantsChanged(ctx, groupId, 'removed', actor.userId, [actor.userId]));
    if (heir !== null) events.push(await participantsChanged(ctx, groupId, 'role_changed', actor.userId, [heir]));
  }
  events.push(event('GroupMembershipRevoked', actor.userId, { conversation_id: groupId, user_id: actor.userId, reason: 'left' }));
  await ctx.broadcaster.dispatch(events, actor.socketId);
}

export async function deleteGroup(ctx: ChatContext, actor: Actor, groupId: number): Promise<void> {
  await requireGroup(ctx.db, groupId, actor.userId, ['owner']);
  const participants = await ctx.db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('participants').select('user_id').where('conversation_id', '=', groupId).execute();
    await trx.deleteFrom('conversations').where('id', '=', groupId).execute();
    return rows.map((r) => r.user_id);
  });
  for (const userId of participants) await ctx.broadcaster.unsubscribeUser(conversationChannel(groupId), userId, 'group_deleted');
  await ctx.broadcaster.dispatch(
    participants.map((userId) => event('GroupMembershipRevoked', userId, { conversation_id: groupId, user_id: userId, reason: 'group_deleted' })),
    actor.socketId,
  );
}
