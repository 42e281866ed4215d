// Who may see and do what: each check is one query and one specific error.
import { sql } from 'kysely';
import type { DB } from '../store/database.js';
import type { Conversation, Participant, Role } from '../store/schema.js';
import { forbidden, notFound } from './errors.js';

export interface Membership {
  readonly conversation: Conversation;
  readonly participant: Participant;
}

function membershipQuery(db: DB, conversationId: number, userId: number) {
  return db
    .selectFrom('participants as p')
    .innerJoin('conversations as c', 'c.id', 'p.conversation_id')
    .selectAll('c')
    .select(['p.role', 'p.joined_at', 'p.last_read_message_id', 'p.last_read_at', 'p.unread_count'])
    .where('p.conversation_id', '=', conversationId)
    .where('p.user_id', '=', userId);
}

type MembershipRow = NonNullable<Awaited<ReturnType<ReturnType<typeof membershipQuery>['executeTakeFirst']>>>;

function membership(row: MembershipRow, conversationId: number, userId: number): Membership {
  const { role, joined_at, last_read_message_id, last_read_at, unread_count, ...conversation } = row;
  return {
    conversation,
    participant: { conversation_id: conversationId, user_id: userId, role, joined_at, last_read_message_id, last_read_at, unread_count },
  };
}

/** The conversation as seen by a participant; 404 for everyone else, so ids cannot be probed. */
export async function requireParticipant(db: DB, conversationId: number, userId: number): Promise<Membership> {
  const row = await membershipQuery(db, conversationId, userId).executeTakeFirst();
  if (!row) throw notFound('Conversation');
  return membership(row, conversationId, userId);
}

/**
 * A sender's checks in one query (a send's hot path): the membership as requireParticipant gives it (404 for
 * everyone else), and whether messaging is blocked: in a direct conversation, either side blocked the other.
 * `blocked` is returned, not thrown, so the caller keeps its order of errors (see refuseIfBlocked's error).
 */
export async function senderAccess(db: DB, conversationId: number, userId: number): Promise<Membership & { readonly blocked: boolean }> {
  const row = await membershipQuery(db, conversationId, userId)
    .select(
      sql<boolean>`c.type = 'direct' and exists (
        select 1 from participants o
        join blocks b on (b.blocker_id = p.user_id and b.blocked_id = o.user_id) or (b.blocker_id = o.user_id and b.blocked_id = p.user_id)
        where o.conversation_id = p.conversation_id and o.user_id <> p.user_id)`.as('blocked'),
    )
    .executeTakeFirst();
  if (!row) throw notFound('Conversation');
  const { blocked, ...rest } = row;
  return { ...membership(rest, conversationId, userId), blocked: blocked === true };
}

export async function requireGroup(db: DB, conversationId: number, userId: number, roles?: readonly Role[]): Promise<Membership> {
  const membership = await requireParticipant(db, conversationId, userId);
  if (membership.conversation.type !== 'group') throw notFound('Group');
  if (roles && !roles.includes(membership.participant.role)) {
    throw forbidden('forbidden_role', `Only a group ${roles.join(' or ')} may do this.`);
  }
  return membership;
}

/** The other participant of a direct conversation. */
export async function directPeer(db: DB, conversationId: number, userId: number): Promise<number | null> {
  const row = await db
    .selectFrom('participants')
    .select('user_id')
    .where('conversation_id', '=', conversationId)
    .where('user_id', '<>', userId)
    .executeTakeFirst();
  return row?.user_id ?? null;
}

export async function isBlockedEitherWay(db: DB, a: number, b: number): Promise<boolean> {
  const row = await db
    .selectFrom('blocks')
    .select('blocker_id')
    .where((eb) =>
      eb.or([
        eb.and([eb('blocker_id', '=', a), eb('blocked_id', '=', b)]),
        eb.and([eb('blocker_id', '=', b), eb('blocked_id', '=', a)]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

export const blockedError = () => forbidden('blocked', 'Messaging between these users is blocked.');

export async function refuseIfBlocked(db: DB, a: number, b: number): Promise<void> {
  if (await isBlockedEitherWay(db, a, b)) throw blockedError();
}

/** In a direct conversation, a send is refused when either side blocked the other. */
export async function refuseIfDirectBlocked(db: DB, membership: Membership, userId: number): Promise<void> {
  if (membership.conversation.type !== 'direct') return;
  const peer = await directPeer(db, membership.conversation.id, userId);
  if (peer !== null) await refuseIfBlocked(db, userId, peer);
}
