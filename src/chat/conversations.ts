// The inbox, a single conversation, and find-or-create of direct conversations.
import { findDirect, inboxPage, insertDirect, type InboxPosition } from '../store/conversations.js';
import { isErased } from '../store/erasure.js';
import { lockUsers } from '../store/locks.js';
import { ownLastMessages } from '../store/own-state.js';
import { conversationView, loadSharedConversations, type SharedConversation } from '../store/read-model.js';
import type { ConversationView } from '../contract/resources.js';
import { refuseIfBlocked, requireParticipant } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from '../contract/api-errors.js';
import { cursorNow } from './sync.js';
import { unitOfWork } from './unit-of-work.js';

export interface Page<T> {
  readonly data: T[];
  readonly next_cursor: string | null;
}

/**
 * Inbox cursor: the last item's activity time (or, among the pinned, its pinning time: "p" first) and id, so
 * paging is stable while new activity arrives.
 */
const encodeCursor = (position: InboxPosition): string => Buffer.from(`${position.pinned ? 'p' : ''}${position.at.getTime()}:${position.id}`).toString('base64url');
/** The last instant of year 9999: later times do not survive the trip to the database as an ISO string. */
const MAX_CURSOR_TIME = 253_402_300_799_999;
function decodeCursor(cursor: string): InboxPosition {
  const match = /^(p?)(\d{1,15}):(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString());
  const at = match ? Number(match[2]) : NaN;
  const id = match ? Number(match[3]) : NaN;
  if (!(at <= MAX_CURSOR_TIME) || !Number.isSafeInteger(id)) throw invalid('cursor', 'The cursor is not one this API returned.');
  return { pinned: match![1] === 'p', at: new Date(at), id };
}

/**
 * The user's conversations, the pinned first, then newest activity first (or the archived ones): a constant number
 * of queries whatever the page size, in one snapshot with the change feed's position (sync_cursor), so syncing
 * from it misses nothing the page does not show.
 */
export async function listInbox(
  ctx: ChatContext,
  actor: Actor,
  options: { cursor?: string; limit: number; archived?: boolean },
): Promise<Page<ConversationView> & { sync_cursor: string }> {
  const after = options.cursor ? decodeCursor(options.cursor) : undefined;
  return ctx.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const syncCursor = await cursorNow(trx);
      const rows = await inboxPage(trx, actor.userId, { after, limit: options.limit + 1, archived: options.archived === true });
      const page = rows.slice(0, options.limit);
      const shared = await loadSharedConversations(trx, page.map((r) => r.id));
      // Only the entries whose last message the user hid need theirs looked up.
      const hidden = new Set(page.filter((r) => r.last_hidden).map((r) => r.id));
      const own = hidden.size === 0 ? new Map() : await ownLastMessages(trx, actor.userId, new Map([...lastMessageIds(shared)].filter(([id]) => hidden.has(id))));
      const last = page.at(-1);
      const position = last && (last.pinned_at !== null && !options.archived ? { pinned: true, at: last.pinned_at, id: last.id } : { pinned: false, at: last.last_activity_at, id: last.id });
      return {
        data: page.map((row) => conversationView(shared.get(row.id)!, row, undefined, own.get(row.id))),
        next_cursor: rows.length > options.limit && position ? encodeCursor(position) : null,
        sync_cursor: syncCursor,
      };
    });
}

/** One conversation as the actor sees it (the HTTP API's ConversationResource). */
export async function getConversation(ctx: ChatContext, actor: Actor, conversationId: number): Promise<ConversationView> {
  const { participant } = await requireParticipant(ctx.db, conversationId, actor.userId);
  const all = await loadSharedConversations(ctx.db, [conversationId]);
  const shared = all.get(conversationId);
  if (!shared) throw notFound('Conversation');
  const own = await ownLastMessages(ctx.db, actor.userId, lastMessageIds(all));
  return conversationView(shared, participant, undefined, own.get(conversationId));
}

/** The last message id of each conversation that has one. */
function lastMessageIds(shared: ReadonlyMap<number, SharedConversation>): Map<number, number> {
  return new Map([...shared].flatMap(([id, c]) => (c.last_message ? [[id, c.last_message.id] as const] : [])));
}

/**
 * Find or create the direct conversation between the actor and another user. The pair's user rows are locked
 * first (as a block locks them), so a conversation is never created past a block committed before it.
 */
export async function openDirect(
  ctx: ChatContext,
  actor: Actor,
  otherUserId: number,
): Promise<{ conversation: ConversationView; created: boolean }> {
  if (otherUserId === actor.userId) throw invalid('user_id', 'A direct conversation needs another user.');
  const { id, created } = await unitOfWork(ctx, actor, async ({ trx, inboxChanged }) => {
    const found = await lockUsers(trx, [actor.userId, otherUserId]);
    // An erased user is nobody to talk to (their row is locked: an erasure is committed or waits).
    if (!found.has(otherUserId) || (await isErased(trx, otherUserId))) throw notFound('User');
    await refuseIfBlocked(trx, actor.userId, otherUserId);
    // The unique direct_key makes two simultaneous opens (on any node) agree on one conversation.
    const createdId = await insertDirect(trx, actor.userId, otherUserId, new Date());
    if (createdId === null) return { id: (await findDirect(trx, actor.userId, otherUserId))!, created: false };
    inboxChanged(createdId);
    return { id: createdId, created: true };
  });
  return { conversation: await getConversation(ctx, actor, id), created };
}

