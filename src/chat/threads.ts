// Threads (v1.2, docs/api.md "Threads"): replies in a thread are sent like any message, with thread_id
// (messages.ts, sendMessage: the send function checks the root and keeps replies out of the conversation's last
// message and unread counts; store/threads.ts keeps each thread's counts and who takes part). Here: the events a
// reply causes, a thread's replies, a user's threads, and reading a thread.
import type { DB } from '../store/database.js';
import { event, type DomainEvent } from '../events/catalog.js';
import { lockConversationOfMessage } from '../store/locks.js';
import { findVisibleMessageFor } from '../store/messages.js';
import { loadHistoryItems, loadHistoryPage } from '../store/read-model.js';
import { readThread, threadSummary, userThreads, type ThreadRow } from '../store/threads.js';
import { lagTolerant, type Actor, type ChatContext } from './context.js';
import type { Page } from './conversations.js';
import { decodeTimeCursor, encodeTimeCursor } from './cursors.js';
import { invalid, notFound } from '../contract/api-errors.js';
import { iso, type HistoryItem, type MessageResource } from '../contract/resources.js';
import { unitOfWork } from './unit-of-work.js';

/** What a reply in a thread causes on its conversation's channel: ThreadReplySent, then ThreadUpdated. */
export function replyEvents(message: MessageResource & { thread_id: number }, thread: ThreadRow): DomainEvent[] {
  return [event('ThreadReplySent', message.conversation_id, threadReplySentPayload(message)), threadUpdated(thread)];
}

export function threadReplySentPayload(message: MessageResource & { thread_id: number }) {
  return { conversation_id: message.conversation_id, thread_id: message.thread_id, message };
}

export function threadUpdated(thread: ThreadRow): DomainEvent {
  return event('ThreadUpdated', thread.conversation_id, { conversation_id: thread.conversation_id, thread_id: thread.root_id, ...threadSummary(thread) });
}

/** A thread's root as the caller may see it: a visible message of a conversation they are in, not itself a reply. */
async function requireRoot(db: DB, actor: Actor, rootId: number) {
  const root = await findVisibleMessageFor(db, rootId, actor.userId);
  if (!root || !root.participant) throw notFound('Message');
  if (root.thread_id !== null) throw invalid('id', 'This message is a reply in a thread, not a thread of its own.');
  return root;
}

/** GET /messages/{id}/thread: the thread's replies, history items newest first, paged like history. */
export async function listThreadReplies(
  ctx: ChatContext,
  actor: Actor,
  rootId: number,
  options: { before?: number; after?: number; limit: number },
): Promise<Page<HistoryItem>> {
  return lagTolerant(ctx, actor.userId, async (db) => {
    const root = await requireRoot(db, actor, rootId);
    if (options.before !== undefined && options.after !== undefined) throw invalid('after', 'Give before or after, not both.');
    const page = await loadHistoryPage(db, { conversationId: root.conversation_id, threadId: rootId }, { ...options, viewerId: actor.userId });
    return { data: page.items, next_cursor: page.more ? String(page.last) : null };
  });
}

export interface UserThread {
  readonly root: HistoryItem;
  readonly reply_count: number;
  readonly unread_reply_count: number;
  readonly last_reply_at: string;
}

/** GET /threads: the threads the user takes part in, most recent reply first. Cursor: "<ms>.<root id>". */
export async function listThreads(ctx: ChatContext, actor: Actor, options: { cursor?: string; limit: number }): Promise<Page<UserThread>> {
  const position = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor);
  const after = position && { at: position.at, rootId: position.id };
  const { rows, roots } = await lagTolerant(ctx, actor.userId, async (db) => {
    const rows = await userThreads(db, actor.userId, { after, limit: options.limit + 1 });
    return { rows, roots: await loadHistoryItems(db, rows.slice(0, options.limit).map((r) => r.root_id)) };
  });
  const page = rows.slice(0, options.limit);
  const data = page.flatMap((r) => {
    const root = roots.get(r.root_id);
    return root ? [{ root, reply_count: r.reply_count, unread_reply_count: r.unread_reply_count, last_reply_at: iso(r.last_reply_at) }] : [];
  });
  const last = page.at(-1);
  return { data, next_cursor: rows.length > options.limit && last ? encodeTimeCursor({ at: last.last_reply_at, id: last.root_id }) : null };
}

/** POST /messages/{id}/thread/read: the thread read up to now by the caller; ThreadRead on the conversation's channel. */
export async function markThreadRead(ctx: ChatContext, actor: Actor, rootId: number): Promise<{ thread_id: number; read_at: string }> {
  const readAt = new Date();
  return unitOfWork(ctx, actor, async ({ trx, emit }) => {
    // A shared lock: no reply lands between reading the thread's newest reply and writing the position.
    const conversation = await lockConversationOfMessage(trx, rootId, 'read');
    if (!conversation) throw notFound('Message');
    await requireRoot(trx, actor, rootId);
    await readThread(trx, rootId, actor.userId, readAt);
    const payload = { conversation_id: conversation.id, thread_id: rootId, user_id: actor.userId, read_at: iso(readAt) };
    emit(event('ThreadRead', conversation.id, payload));
    return { thread_id: rootId, read_at: payload.read_at };
  });
}
