// The inbox, a single conversation, and find-or-create of direct conversations.
import type { DomainEvent } from '../events/catalog.js';
import { findDirect, inboxPage, insertDirect } from '../store/conversations.js';
import { lockUsers } from '../store/locks.js';
import { conversationResource, loadSharedConversations } from '../store/read-model.js';
import { inTransaction } from '../store/transaction.js';
import type { ConversationResource } from './resources.js';
import { refuseIfBlocked, requireParticipant } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from './errors.js';
import { inboxEvents } from './inbox.js';

export interface Page<T> {
  readonly data: T[];
  readonly next_cursor: string | null;
}

/** Inbox cursor: the last item's activity time and id, so paging is stable while new activity arrives. */
const encodeCursor = (at: Date, id: number): string => Buffer.from(`${at.getTime()}:${id}`).toString('base64url');
/** The last instant of year 9999: later times do not survive the trip to the database as an ISO string. */
const MAX_CURSOR_TIME = 253_402_300_799_999;
function decodeCursor(cursor: string): { at: Date; id: number } {
  const match = /^(\d{1,15}):(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString());
  const at = match ? Number(match[1]) : NaN;
  const id = match ? Number(match[2]) : NaN;
  if (!(at <= MAX_CURSOR_TIME) || !Number.isSafeInteger(id)) throw invalid('cursor', 'The cursor is not one this API returned.');
  return { at: new Date(at), id };
}

/** The user's conversations, newest activity first: four queries whatever the page size. */
export async function listInbox(ctx: ChatContext, actor: Actor, options: { cursor?: string; limit: number }): Promise<Page<ConversationResource>> {
  const after = options.cursor ? decodeCursor(options.cursor) : undefined;
  const rows = await inboxPage(ctx.db, actor.userId, { after, limit: options.limit + 1 });
  const page = rows.slice(0, options.limit);
  const shared = await loadSharedConversations(ctx.db, page.map((r) => r.id));
  const last = page.at(-1);
  return {
    data: page.map((row) => conversationResource(shared.get(row.id)!, row)),
    next_cursor: rows.length > options.limit && last ? encodeCursor(last.last_activity_at, last.id) : null,
  };
}

export async function getConversation(ctx: ChatContext, actor: Actor, conversationId: number): Promise<ConversationResource> {
  const { participant } = await requireParticipant(ctx.db, conversationId, actor.userId);
  const shared = (await loadSharedConversations(ctx.db, [conversationId])).get(conversationId);
  if (!shared) throw notFound('Conversation');
  return conversationResource(shared, participant);
}

/**
 * Find or create the direct conversation between the actor and another user. The pair's user rows are locked
 * first (as a block locks them), so a conversation is never created past a block committed before it.
 */
export async function openDirect(
  ctx: ChatContext,
  actor: Actor,
  otherUserId: number,
): Promise<{ conversation: ConversationResource; created: boolean }> {
  if (otherUserId === actor.userId) throw invalid('user_id', 'A direct conversation needs another user.');
  const { id, created } = await inTransaction(ctx.db, async (trx) => {
    const found = await lockUsers(trx, [actor.userId, otherUserId]);
    if (!found.has(otherUserId)) throw notFound('User');
    await refuseIfBlocked(trx, actor.userId, otherUserId);
    // The unique direct_key makes two simultaneous opens (on any node) agree on one conversation.
    const createdId = await insertDirect(trx, actor.userId, otherUserId, new Date());
    return createdId !== null ? { id: createdId, created: true } : { id: (await findDirect(trx, actor.userId, otherUserId))!, created: false };
  });

  let events: DomainEvent[] = [];
  if (created) {
    events = await inboxEvents(ctx.db, id);
    await ctx.broadcaster.dispatch(events, actor.socketId);
  }
  const own = events.find((e) => e.to[0] === actor.userId);
  return {
    conversation: own ? (own.payload as ConversationResource) : await getConversation(ctx, actor, id),
    created,
  };
}
