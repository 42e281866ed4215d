// Messages: history, send (idempotent by client_message_id, written in groups), edit, soft delete, forward.
// Each write: lock the conversation → check → write → commit → events.
import type { Broadcaster } from '../events/broadcaster.js';
import { event, messageSentPayload, type DomainEvent } from '../events/catalog.js';
import type { Notifications } from '../delivery/index.js';
import type { LeasedRows } from '../store/outbox.js';
import type { DB } from '../store/database.js';
import { lockConversationOfMessage, lockConversations, lockUsers } from '../store/locks.js';
import {
  editBody,
  findByClientId,
  findVisibleMessage,
  recipientsOf,
  softDelete,
  writeMessages,
  NO_OUTBOX,
  type DraftResult,
  type MessageDraft,
  type WrittenMessages,
} from '../store/messages.js';
import { findMembership } from '../store/participants.js';
import { loadHistoryPage, loadMessage, loadMessages, plainMessage, sharedConversation, type ReaderState } from '../store/read-model.js';
import { recountThread } from '../store/threads.js';
import type { Message } from '../store/schema.js';
import { inTransaction, retrying, type Tx } from '../store/transaction.js';
import { appendChanges } from '../store/change-feed.js';
import { blockedError, refuseIfDirectBlocked, requireParticipant } from './access.js';
import { lagTolerant, type Actor, type ChatContext } from './context.js';
import type { Page } from './conversations.js';
import { ChatError, forbidden, invalid, notFound } from '../contract/api-errors.js';
import { groupCommit, type GroupCommit } from './group-commit.js';
import { inboxUpdates } from './inbox.js';
import { replyEvents, threadReplySentPayload, threadUpdated } from './threads.js';
import { changesOf, unitOfWork, type Work } from './unit-of-work.js';
import { userBannedError } from './user-bans.js';
import type { HistoryItem, MessageResource } from '../contract/resources.js';

export interface SendInput {
  readonly body?: string | null;
  readonly attachment_id?: number | null;
  readonly reply_to_id?: number | null;
  readonly client_message_id?: string | null;
  readonly mentioned_user_ids?: readonly number[] | null;
  /** v1.2: a reply in the thread of this message (see threads.ts). */
  readonly thread_id?: number | null;
}

/** The most users one message may mention. */
export const MAX_MENTIONS = 50;

export interface SendResult {
  readonly message: MessageResource;
  readonly created: boolean;
}

interface SendRequest {
  readonly actor: Actor;
  readonly draft: MessageDraft;
}

/** Sends waiting to be written together; see group-commit.ts. */
export type SendQueue = GroupCommit<SendRequest, SendResult>;

/** MessageSent carries the resource without edited_at (v1's exact keys, docs/events.md). */
function normalizeBody(ctx: ChatContext, body: string | null | undefined): string | null {
  if (body === undefined || body === null || body.trim() === '') return null;
  if ([...body].length > ctx.limits.bodyMaxChars) {
    throw invalid('body', `The body may have at most ${ctx.limits.bodyMaxChars} characters.`);
  }
  ctx.blockedWords?.check(body);
  return body;
}

export async function listMessages(
  ctx: ChatContext,
  actor: Actor,
  conversationId: number,
  options: { before?: number; after?: number; limit: number },
): Promise<Page<HistoryItem>> {
  return lagTolerant(ctx, actor.userId, async (db) => {
    await requireParticipant(db, conversationId, actor.userId);
    if (options.before !== undefined && options.after !== undefined) {
      throw invalid('after', 'Give before or after, not both.');
    }
    // `after` walks forward from a known message (catch-up after a reconnect): the messages right after it.
    // Either way the page is newest first, and next_cursor is the id to pass again as the same parameter.
    const page = await loadHistoryPage(db, { conversationId }, { ...options, viewerId: actor.userId });
    return { data: page.items, next_cursor: page.more ? String(page.last) : null };
  });
}

export async function sendMessage(ctx: ChatContext, actor: Actor, conversationId: number, input: SendInput): Promise<SendResult> {
  await ctx.rateLimiter.consume('send', actor.userId);
  const body = normalizeBody(ctx, input.body);
  if (body === null && input.attachment_id == null) throw invalid('body', 'A message needs a body or an attachment.');
  const mentioned = [...new Set(input.mentioned_user_ids ?? [])];
  if (mentioned.length > MAX_MENTIONS) throw invalid('mentioned_user_ids', `A message may mention at most ${MAX_MENTIONS} users.`);
  const draft: MessageDraft = {
    conversation_id: conversationId,
    sender_id: actor.userId,
    body,
    attachment_id: input.attachment_id ?? null,
    reply_to_id: input.reply_to_id ?? null,
    forwarded_from_message_id: null,
    forwarded_from_conversation_id: null,
    forwarded_from_sender_id: null,
    client_message_id: input.client_message_id ?? null,
    mentioned_user_ids: mentioned,
    thread_id: input.thread_id ?? null,
  };
  return ctx.sends.submit(conversationId, { actor, draft });
}

/** The send queue of a node: concurrent sends written in batches (see group-commit.ts). */
export function createSendQueue(deps: SendDeps, options: { lanes: number; maxBatch?: number }): SendQueue {
  return groupCommit({ lanes: options.lanes, maxBatch: options.maxBatch ?? 100, run: (batch) => sendBatch(deps, batch) });
}

type SendDeps = { db: DB; broadcaster: Broadcaster; notifications?: Notifications | undefined };

/** A draft's refusal as the API answers it. */
function refusal(result: DraftResult): ChatError {
  switch (result.outcome) {
    case 'sender_erased':
      return new ChatError('unauthenticated', 'This user was erased.');
    case 'not_participant':
      return notFound('Conversation');
    case 'blocked':
      return blockedError();
    case 'attachment_not_yours':
      return invalid('attachment_id', 'No attachment with this id was uploaded by you.');
    case 'reply_not_here':
      return invalid('reply_to_id', 'The message replied to is not in this conversation.');
    case 'thread_not_here':
      return invalid('thread_id', 'The thread must be a message of this conversation that is not itself a reply in a thread.');
    case 'mention_not_participant':
      return invalid('mentioned_user_ids', 'Every mentioned user must be a participant of the conversation.');
    case 'user_banned':
      return userBannedError();
    case 'frozen':
      return forbidden('frozen', 'This group is frozen: only its owner and admins may send.');
    case 'slow_mode':
      return new ChatError('slow_mode', 'This group is in slow mode: wait before sending again.', { retryAfterSeconds: result.retry_after ?? 1 });
    default:
      return new ChatError('conflict', `The message could not be written (${result.outcome}).`);
  }
}

/** PostgreSQL refused the statement for its data (class 22) or a constraint (23): one request's input is at fault. */
const isInputError = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
};

/**
 * Sends of several requests in one transaction: the conversations locked (ascending id), every draft checked
 * and written, one commit, all in one round trip; then each written message's events, dispatched in order.
 * A request repeating an earlier one's client_message_id in the same batch gets that one's message.
 */
async function sendBatch(deps: SendDeps, requests: readonly SendRequest[]): Promise<(SendResult | Error)[]> {
  const drafts: MessageDraft[] = [];
  const draftIndex: number[] = [];
  const byClientId = new Map<string, number>();
  for (const { draft } of requests) {
    const key = draft.client_message_id === null ? null : `${draft.conversation_id}:${draft.sender_id}:${draft.client_message_id}`;
    const earlier = key === null ? undefined : byClientId.get(key);
    if (earlier !== undefined) {
      draftIndex.push(-1 - earlier); // the same as draft `earlier`
      continue;
    }
    if (key !== null) byClientId.set(key, drafts.length);
    draftIndex.push(drafts.length);
    drafts.push(draft);
  }

  const now = new Date();
  let sent: WrittenSends;
  const notifications = deps.notifications?.enabled ? deps.notifications : undefined;
  try {
    if (drafts.every(isPlain)) {
      // Plain messages: the write, its change feed rows and the outbox rows read from them in one statement, its
      // own transaction; each MessageSent (or a reply's ThreadReplySent) payload is built here, the write adds
      // the message's id and sender, and a reply's ThreadUpdated.
      const payloads = drafts.map((d) => JSON.stringify(plainSentPayload(d, now)));
      sent = await retrying(async () => {
        const written = await writeMessages(deps.db, drafts, now, { payloads, outbox: notifications?.sentOutbox() ?? NO_OUTBOX });
        return sentMessages(deps.db, drafts, written, notifications ? written : undefined);
      });
    } else {
      sent = await inTransaction(deps.db, async (trx) => recordSends(trx, notifications, drafts, await writeMessages(trx, drafts, now)));
    }
  } catch (err) {
    if (requests.length === 1 || !isInputError(err)) return requests.map(() => err as Error);
    // One request's input broke the statement: each on its own, so only that one fails.
    const results: (SendResult | Error)[] = [];
    for (const request of requests) results.push(...(await sendBatch(deps, [request])));
    return results;
  }
  const { written } = sent;

  const socketOf = new Map(requests.flatMap((r, i) => (draftIndex[i]! >= 0 ? [[draftIndex[i]!, r.actor.socketId] as const] : [])));
  if (notifications) notifications.committed(sent.outboxRows);
  const messages = await announceWritten(deps, drafts, sent, (i) => socketOf.get(i));
  const results: (SendResult | Error)[] = [];
  for (let i = 0; i < requests.length; i++) {
    const d = draftIndex[i]!;
    const own = d >= 0;
    const index = own ? d : -1 - d;
    const result = written.results[index]!;
    const message = messages.get(index);
    if (message) results.push({ message, created: own });
    else if (result.outcome === 'duplicate') results.push(await existingMessage(deps.db, drafts[index]!).catch((err: Error) => err));
    else results.push(refusal(result));
  }
  return results;
}

/** The message a repeated client_message_id stands for. */
async function existingMessage(db: DB, draft: MessageDraft): Promise<SendResult> {
  const id = await findByClientId(db, draft.conversation_id, draft.sender_id, draft.client_message_id!);
  if (id === null) throw new ChatError('conflict', 'The message with this client_message_id could not be found.');
  return { message: await loadMessage(db, id), created: false };
}

/** Messages written in a send's transaction, with what was recorded of them. */
interface WrittenSends {
  readonly written: WrittenMessages;
  /** The resources of the written messages, by draft index. */
  readonly resources: Map<number, MessageResource>;
  /**
   * Each written message's events, by draft index: MessageSent, or for a reply in a thread ThreadReplySent and
   * ThreadUpdated; each payload built once, for the feed, outbox and sockets.
   */
  readonly sentEvents: Map<number, DomainEvent[]>;
  /** The outbox rows leased to this node, for committed(). */
  readonly outboxRows?: LeasedRows | undefined;
}

/**
 * What a send that is not all plain messages records in its transaction (the batched unit of work; see
 * unit-of-work.ts): each written message's MessageSent and its conversation's inbox change in the change feed, and
 * their outbox rows (MessageSent webhooks and pushes). The transaction holds the conversations' locks exclusively,
 * so rows first in their conversation's queue come back leased to this node. (Plain messages record the same in
 * the send's own statement: store/messages.ts, SendRecord.)
 */
async function recordSends(
  trx: Tx,
  notifications: Notifications | undefined,
  drafts: readonly MessageDraft[],
  written: WrittenMessages,
): Promise<WrittenSends> {
  const sent = await sentMessages(trx, drafts, written);
  const events = [...sent.sentEvents.values()].flat();
  await appendChanges(trx, changesOf(events, [...written.conversations.keys()].map((conversationId) => ({ conversationId }))));
  if (!notifications) return sent;
  const outboxRows = await notifications.writeLeased(trx, events, (e) => {
    const m = e.payload as MessageResource;
    return recipientsOf(written, m.conversation_id, m.sender.id);
  });
  return { ...sent, outboxRows };
}

/**
 * The resources and events of messages written (plain ones from the write alone, the others loaded): MessageSent;
 * for a reply in a thread, ThreadReplySent and ThreadUpdated (the thread as the write left it), its resource
 * carrying thread_id.
 */
async function sentMessages(db: DB | Tx, drafts: readonly MessageDraft[], written: WrittenMessages, outboxRows?: LeasedRows): Promise<WrittenSends> {
  const resources = await messageResources(db, drafts, written);
  const sentEvents = new Map<number, DomainEvent[]>();
  for (const [i, message] of resources) {
    const threadId = drafts[i]!.thread_id;
    const thread = threadId === null ? undefined : written.threads.get(threadId);
    if (threadId !== null && thread) {
      const reply: MessageResource & { thread_id: number } = { ...message, thread_id: threadId };
      resources.set(i, reply);
      sentEvents.set(i, replyEvents(reply, thread));
      continue;
    }
    const payload = messageSentPayload(message);
    sentEvents.set(i, [event('MessageSent', message.conversation_id, payload, JSON.stringify(payload))]);
  }
  return { written, resources, sentEvents, outboxRows };
}

/** A message with no attachment, reply or forward (in a thread or not): its resource is all known from the write. */
const isPlain = (draft: MessageDraft): boolean => draft.attachment_id === null && draft.reply_to_id === null && draft.forwarded_from_message_id === null;

/**
 * The payload a plain draft's message is sent with, as the send function records it: MessageSent, or for a reply in
 * a thread ThreadReplySent; the write fills in the message's id and sender (here 0 and a blank).
 */
function plainSentPayload(draft: MessageDraft, at: Date): object {
  const message = plainMessage(0, draft.conversation_id, draft.body, { id: draft.sender_id, name: '', avatar_url: null }, at);
  if (draft.thread_id === null) return messageSentPayload(message);
  return threadReplySentPayload({ ...message, thread_id: draft.thread_id });
}

/** The resources of the messages written, by draft index: plain ones from the write, the others loaded in one query. */
async function messageResources(db: DB | Tx, drafts: readonly MessageDraft[], written: WrittenMessages): Promise<Map<number, MessageResource>> {
  const messages = new Map<number, MessageResource>();
  const toLoad: number[] = [];
  written.results.forEach((result, i) => {
    if (result.outcome !== 'written') return;
    const draft = drafts[i]!;
    if (isPlain(draft)) messages.set(i, plainMessage(result.id!, draft.conversation_id, draft.body, result.sender!, written.at));
    else toLoad.push(i);
  });
  if (toLoad.length > 0) {
    const loaded = await loadMessages(db, toLoad.map((i) => written.results[i]!.id!));
    for (const i of toLoad) messages.set(i, loaded.get(written.results[i]!.id!)!);
  }
  return messages;
}

/**
 * The events of messages just written, after the commit: for each message in order, MessageSent, then
 * InboxUpdated to every participant with the unread count as of that message; the events of draft i are not sent
 * to socket socketOf(i) (X-Socket-ID of its request). Returns the resources by draft index.
 */
async function announceWritten(
  deps: { broadcaster: Broadcaster },
  drafts: readonly MessageDraft[],
  sent: WrittenSends,
  socketOf: (draftIndex: number) => string | undefined,
): Promise<Map<number, MessageResource>> {
  const { written, resources: messages } = sent;
  // Each message's readers, walking back from the states after the whole write.
  const statesAt = new Map<number, readonly ReaderState[]>();
  const current = new Map(written.readers);
  for (let i = drafts.length - 1; i >= 0; i--) {
    if (!messages.has(i) || drafts[i]!.thread_id !== null) continue;
    const { conversation_id: conversationId, sender_id: senderId } = drafts[i]!;
    const states = current.get(conversationId) ?? [];
    statesAt.set(i, states);
    const mentioned = new Set(written.mentions.get(written.results[i]!.id!));
    current.set(
      conversationId,
      states.map((s) =>
        s.user_id === senderId ? s : { ...s, unread_count: s.unread_count - 1, unread_mention_count: s.unread_mention_count - (mentioned.has(s.user_id) ? 1 : 0) },
      ),
    );
  }

  const dispatches: Promise<void>[] = [];
  for (let i = 0; i < drafts.length; i++) {
    const message = messages.get(i);
    if (!message) continue;
    const conversationId = drafts[i]!.conversation_id;
    // A reply in a thread changes nobody's inbox.
    const inbox = drafts[i]!.thread_id !== null ? [] : inboxUpdates(sharedConversation(written.conversations.get(conversationId)!, written.previews.get(conversationId) ?? [], message), statesAt.get(i)!);
    const events: DomainEvent[] = [...sent.sentEvents.get(i)!, ...inbox];
    // Started in order, not awaited one by one: the frames leave in the messages' order.
    dispatches.push(deps.broadcaster.dispatch(events, socketOf(i)));
  }
  await Promise.all(dispatches);
  return messages;
}

/** A visible message and the actor's membership of its conversation, read under the conversation's lock; 404 when either is missing. */
async function requireVisibleMessage(db: DB, actor: Actor, messageId: number) {
  const message = await findVisibleMessage(db, messageId);
  const membership = message && (await findMembership(db, message.conversation_id, actor.userId));
  if (!message || !membership) throw notFound('Message');
  return { message, membership };
}

export async function editMessage(ctx: ChatContext, actor: Actor, messageId: number, input: { body: string }): Promise<MessageResource> {
  const body = normalizeBody(ctx, input.body);
  const now = new Date();
  return unitOfWork(ctx, actor, async ({ trx, emit, inboxChanged }) => {
    // Write lock: two edits of a message commit in the order they locked, so the feed keeps the last one last.
    const conversation = await lockConversationOfMessage(trx, messageId, 'write');
    if (!conversation) throw notFound('Message');
    const { message, membership } = await requireVisibleMessage(trx, actor, messageId);
    if (message.sender_id !== actor.userId) throw forbidden('not_sender', 'Only the sender may edit a message.');
    if (body === null && message.attachment_id === null) throw invalid('body', 'The body may not be empty.');
    await refuseIfDirectBlocked(trx, membership, actor.userId);
    await editBody(trx, messageId, body, now);
    const updated = await loadMessage(trx, messageId);
    emit(event('MessageUpdated', conversation.id, updated));
    if (conversation.last_message_id === messageId) inboxChanged(conversation.id);
    return updated;
  });
}

export async function deleteMessage(ctx: ChatContext, actor: Actor, messageId: number): Promise<void> {
  const now = new Date();
  await unitOfWork(ctx, actor, async (work) => {
    const conversation = await lockConversationOfMessage(work.trx, messageId, 'write');
    if (!conversation) throw notFound('Message');
    const { message, membership } = await requireVisibleMessage(work.trx, actor, messageId);
    const moderator = conversation.type === 'group' && membership.participant.role !== 'member';
    if (message.sender_id !== actor.userId && !moderator) {
      throw forbidden('not_sender', 'Only the sender or a group owner or admin may delete a message.');
    }
    await deleteForEveryone(work, message, now);
  });
}

/**
 * Deletes a visible message for everyone, inside a unit of work holding its conversation's write lock: the
 * message itself, MessageDeleted, its unpinning, and the inbox or its thread's counts. Also a report's
 * delete_message (reports.ts).
 */
export async function deleteForEveryone(work: Work, message: Message, now: Date): Promise<void> {
  const { trx, emit, inboxChanged } = work;
  const conversationId = message.conversation_id;
  await softDelete(trx, message, now);
  emit(event('MessageDeleted', conversationId, { id: message.id, conversation_id: conversationId }));
  // A deleted message is unpinned: a pinned bar drops it.
  if (message.pinned_at !== null) {
    emit(event('MessagePinned', conversationId, { conversation_id: conversationId, message_id: message.id, pinned: false, pinned_at: null, pinned_by: null }));
  }
  if (message.thread_id === null) inboxChanged(conversationId);
  else {
    // A reply in a thread: the thread's counts follow.
    const thread = await recountThread(trx, message.thread_id);
    if (thread) emit(threadUpdated(thread));
  }
}

export const MAX_FORWARD_TARGETS = 20;

/** Forwards a message to several conversations at once: all of them, or (on any refusal) none. */
export async function forwardMessage(
  ctx: ChatContext,
  actor: Actor,
  messageId: number,
  conversationIds: readonly number[],
): Promise<MessageResource[]> {
  const targets = [...new Set(conversationIds)];
  if (targets.length === 0) throw invalid('conversation_ids', 'Name at least one conversation.');
  if (targets.length > MAX_FORWARD_TARGETS) {
    throw invalid('conversation_ids', `A message may be forwarded to at most ${MAX_FORWARD_TARGETS} conversations at once.`);
  }
  await ctx.rateLimiter.consume('send', actor.userId);
  const now = new Date();
  const { drafts, sent } = await inTransaction(ctx.db, async (trx) => {
    const unlocked = await findVisibleMessage(trx, messageId);
    if (!unlocked) throw notFound('Message');
    // The sender's row first, as every send takes it (store/locks.ts), then the source's conversation and every target's, in one ascending order.
    await lockUsers(trx, [actor.userId], 'read');
    await lockConversations(trx, [unlocked.conversation_id, ...targets]);
    const { message: source } = await requireVisibleMessage(trx, actor, messageId);
    // A forward of a forward still names the original.
    const origin =
      source.forwarded_from_message_id !== null
        ? { id: source.forwarded_from_message_id, conversation_id: source.forwarded_from_conversation_id, sender_id: source.forwarded_from_sender_id }
        : { id: source.id, conversation_id: source.conversation_id, sender_id: source.sender_id };
    const drafts: MessageDraft[] = targets.map((target) => ({
      conversation_id: target,
      sender_id: actor.userId,
      body: source.body,
      attachment_id: source.attachment_id,
      reply_to_id: null,
      forwarded_from_message_id: origin.id,
      forwarded_from_conversation_id: origin.conversation_id,
      forwarded_from_sender_id: origin.sender_id,
      client_message_id: null,
      mentioned_user_ids: [],
      thread_id: null,
    }));
    const written = await writeMessages(trx, drafts, now);
    const refused = written.results.find((r) => r.outcome !== 'written');
    if (refused) throw refusal(refused); // rolls every target back
    const notifications = ctx.notifications?.enabled ? ctx.notifications : undefined;
    return { drafts, sent: await recordSends(trx, notifications, drafts, written) };
  });
  ctx.notifications?.committed(sent.outboxRows);
  const messages = await announceWritten(ctx, drafts, sent, () => actor.socketId);
  return drafts.map((_, i) => messages.get(i)!);
}
