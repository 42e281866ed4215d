// Who may see and do what: each check is one query and one specific error.
import type { DB } from '../store/database.js';
import type { Conversation, Participant, Role } from '../store/schema.js';
import { forbidden, notFound } from './errors.js';

export interface Membership {
  readonly conversation: Conversation;
  readonly participant: Participant;
}

/** The conversation as seen by a participant; 404 for everyone else, so ids cannot be probed. */
export async function requireParticipant(db: DB, conversationId: number, userId: number): Promise<Membership> {
  const row = await db
    .selectFrom('participants as p')
    .innerJoin('conversations as c', 'c.id', 'p.conversation_id')
    .selectAll('c')
    .select(['p.role', 'p.joined_at', 'p.last_read_message_id', 'p.last_read_at', 'p.unread_count'])
    .where('p.conversation_id', '=', conversationId)
    .where('p.user_id', '=', userId)
    .executeTakeFirst();
  if (!row) throw notFound('Conversation');
  const { role, joined_at, last_read_message_id, last_read_at, unread_count, ...conversation } = row;
  return {
    conversation,
    participant: { conversation_id: conversationId, user_id: userId, role, joined_at, last_read_message_id, last_read_at, unread_count },
  };
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

export async function refuseIfBlocked(db: DB, a: number, b: number): Promise<void> {
  if (await isBlockedEitherWay(db, a, b)) throw forbidden('blocked', 'Messaging between these users is blocked.');
}

/** In a direct conversation, a send is refused when either side blocked the other. */
export async function refuseIfDirectBlocked(db: DB, membership: Membership, userId: number): Promise<void> {
  if (membership.conversation.type !== 'direct') return;
  const peer = await directPeer(db, membership.conversation.id, userId);
  if (peer !== null) await refuseIfBlocked(db, userId, peer);
}
