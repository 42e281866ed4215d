// Who may see and do what: each check one specific error. The use cases that write call these inside their
// transaction, after locking what the check reads (see store/locks.ts).
import type { DB } from '../store/database.js';
import { isBlockedEitherWay } from '../store/blocks.js';
import { directPeer, findMembership, readerStatesOfEntries, type Membership } from '../store/participants.js';
import { entryKey, type Entry } from '../store/read-model.js';
import { turnBatched } from '../store/turn-batches.js';
import type { Role } from '../store/schema.js';
import { forbidden, notFound } from '../contract/api-errors.js';

export type { Membership };

// A read state exists for exactly the entries whose user is a participant.
const participation = turnBatched(async (db, entries: readonly Entry[]) => {
  const states = await readerStatesOfEntries(db, entries);
  return entries.map(([userId, conversationId]) => states.has(entryKey(userId, conversationId)));
});

/**
 * Is the user a participant of the conversation now? For reads outside a transaction that ask only this (a channel
 * subscription's authorization): the checks of a turn are one query (store/turn-batches.ts).
 */
export function isParticipant(db: DB, conversationId: number, userId: number): Promise<boolean> {
  return participation(db).load([userId, conversationId]);
}

/** The conversation as seen by a participant; 404 for everyone else, so ids cannot be probed. */
export async function requireParticipant(db: DB, conversationId: number, userId: number): Promise<Membership> {
  const membership = await findMembership(db, conversationId, userId);
  if (!membership) throw notFound('Conversation');
  return membership;
}

export function requireRole(membership: Membership, roles: readonly Role[]): void {
  if (!roles.includes(membership.participant.role)) {
    throw forbidden('forbidden_role', `Only a group ${roles.join(' or ')} may do this.`);
  }
}

/** A group as seen by a participant with one of `roles` (any role when none are given). */
export async function requireGroup(db: DB, conversationId: number, userId: number, roles?: readonly Role[]): Promise<Membership> {
  const membership = await requireParticipant(db, conversationId, userId);
  if (membership.conversation.type !== 'group') throw notFound('Group');
  if (roles) requireRole(membership, roles);
  return membership;
}

export const blockedError = () => forbidden('blocked', 'Messaging between these users is blocked.');

export async function refuseIfBlocked(db: DB, a: number, b: number): Promise<void> {
  if (await isBlockedEitherWay(db, a, b)) throw blockedError();
}

/** In a direct conversation, either side's block stops the other's messages (sends, edits, typing). */
export async function refuseIfDirectBlocked(db: DB, membership: Membership, userId: number): Promise<void> {
  if (membership.conversation.type !== 'direct') return;
  const peer = await directPeer(db, membership.conversation.id, userId);
  if (peer !== null) await refuseIfBlocked(db, userId, peer);
}
