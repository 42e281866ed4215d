// The inbox, a single conversation, and find-or-create of direct conversations.
import { findDirect, inboxPage, insertDirect } from '../store/conversations.js';
import { lockUsers } from '../store/locks.js';
import { setMute } from '../store/participants.js';
import { conversationView, loadSharedConversations } from '../store/read-model.js';
import type { ConversationView } from './resources.js';
import { refuseIfBlocked, requireParticipant } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from './errors.js';
import { cursorNow } from './sync.js';
import { unitOfWork } from './unit-of-work.js';

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

/**
 * The user's conversations, newest activity first: four queries whatever the page size, in one snapshot with the
 * change feed's position (sync_cursor), so syncing from it misses nothing the page does not show.
 */
export async function listInbox(
  ctx: ChatContext,
  actor: Actor,
  options: { cursor?: string; limit: number },
): Promise<Page<ConversationView> & { sync_cursor: string }> {
  const after = options.cursor ? decodeCursor(options.cursor) : undefined;
  return ctx.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const syncCursor = await cursorNow(trx);
      const rows = await inboxPage(trx, actor.userId, { after, limit: options.limit + 1 });
      const page = rows.slice(0, options.limit);
      const shared = await loadSharedConversations(trx, page.map((r) => r.id));
      const last = page.at(-1);
      return {
        data: page.map((row) => conversationView(shared.get(row.id)!, row)),
        next_cursor: rows.length > options.limit && last ? encodeCursor(last.last_activity_at, last.id) : null,
        sync_cursor: syncCursor,
      };
    });
}

/** One conversation as the actor sees it (the HTTP API's ConversationResource). */
export async function getConversation(ctx: ChatContext, actor: Actor, conversationId: number): Promise<ConversationView> {
  const { participant } = await requireParticipant(ctx.db, conversationId, actor.userId);
  const shared = (await loadSharedConversations(ctx.db, [conversationId])).get(conversationId);
  if (!shared) throw notFound('Conversation');
  return conversationView(shared, participant);
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
    if (!found.has(otherUserId)) throw notFound('User');
    await refuseIfBlocked(trx, actor.userId, otherUserId);
    // The unique direct_key makes two simultaneous opens (on any node) agree on one conversation.
    const createdId = await insertDirect(trx, actor.userId, otherUserId, new Date());
    if (createdId === null) return { id: (await findDirect(trx, actor.userId, otherUserId))!, created: false };
    inboxChanged(createdId);
    return { id: createdId, created: true };
  });
  return { conversation: await getConversation(ctx, actor, id), created };
}

/**
 * Mutes the conversation for the actor until a time, or until unmuted (`until` null). Muting silences
 * notifications only: the conversation, its unread counts and its events are as before.
 */
export async function muteConversation(ctx: ChatContext, actor: Actor, conversationId: number, until: Date | null): Promise<ConversationView> {
  // A date-time JavaScript cannot hold (a leap second, 23:59:60, passes the format check) is refused like any other bad time.
  if (until !== null && Number.isNaN(until.getTime())) throw invalid('until', 'until is not a time this server can use (no leap seconds).');
  if (until !== null && until.getTime() <= Date.now()) throw invalid('until', 'A mute ends in the future; give null to mute until unmuted.');
  await requireParticipant(ctx.db, conversationId, actor.userId);
  await setMute(ctx.db, conversationId, actor.userId, { muted: true, until });
  return getConversation(ctx, actor, conversationId);
}

export async function unmuteConversation(ctx: ChatContext, actor: Actor, conversationId: number): Promise<ConversationView> {
  await requireParticipant(ctx.db, conversationId, actor.userId);
  await setMute(ctx.db, conversationId, actor.userId, { muted: false, until: null });
  return getConversation(ctx, actor, conversationId);
}
