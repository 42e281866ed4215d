// The unit of work: the one path from an action to its effects. A use case runs inside it and says what it
// locks, checks and writes (through work.trx) and which events follow (work.emit, work.inboxChanged,
// work.revoke); the unit of work then, in the same transaction, records what happened once (the change feed that
// GET /sync reads, the outbox that webhooks and pushes are delivered from), commits, and after the commit
// delivers: the outbox worker is woken, banned users are forgotten by every node and their sockets close, revoked
// members' sockets leave the channel, the events are dispatched.
// No use case pairs these by hand. Sends are its batched form (messages.ts, sendBatch: many actions, one
// transaction), recording through the same changesOf.
//
// Adding a use case: lock first (store/locks.ts, in its order: the lock also fixes the action's place in the
// feed), check, write, emit; return what the caller answers. See docs/events.md for what each event carries.
import { conversationChannel } from '../contract/channels.js';
import { EVENTS, type RevokeReason } from '../contract/events.js';
import { jsonOf, type DomainEvent } from '../events/catalog.js';
import { appendChanges, type ChangeDraft } from '../store/change-feed.js';
import { forgetKnownUser } from '../store/known-users.js';
import type { ReaderState } from '../store/read-model.js';
import { inTransaction, type Tx } from '../store/transaction.js';
import type { Actor, ChatContext, ServerActor } from './context.js';
import { inboxEvents } from './inbox.js';
import type { WebhookDraft, WebhookOnlyType } from '../delivery/host-webhooks.js';

export interface Work {
  /** The action's transaction: every lock, check and write goes through it. */
  readonly trx: Tx;
  /** Events the action caused, in order, payloads as of this transaction. */
  emit(...events: DomainEvent[]): void;
  /** The same, but no webhook: another side of an event that its webhook tells once (a block's other user). */
  emitWithoutWebhook(...events: DomainEvent[]): void;
  /**
   * The conversation's inbox entry changed: for every participant, or only for `readers` (their states as of this
   * transaction). InboxUpdated is state: each receiver's entry is loaded after the commit (and at a sync).
   */
  inboxChanged(conversationId: number, readers?: readonly ReaderState[]): void;
  /** userId lost the conversation: after the commit, before any event, their sockets stop receiving its channel. */
  revoke(conversationId: number, userId: number, reason: RevokeReason): void;
  /**
   * userId may no longer be connected (banned or erased): after the commit, every node forgets what it knew of them
   * (their next request reads their standing) and their sockets close on every node.
   */
  disconnect(userId: number): void;
  /** A webhook no event carries (MessageReported, UserErased): written to the outbox with the action. */
  webhook(type: WebhookOnlyType, data: Record<string, unknown>, conversationId?: number | null): void;
}

/** Events that are not kept: they say what is going on now, not what changed. */
const EPHEMERAL = new Set(['UserTyping', 'UserPresenceChanged']);

/** An InboxUpdated of one conversation: every participant's (readers undefined) or those readers'. */
export interface InboxChange {
  readonly conversationId: number;
  readonly readers?: readonly ReaderState[];
}

/**
 * The change feed's rows of an action: an event on a conversation's channel once for the conversation, an event
 * on users' channels once per user, an inbox change once for the conversation or once per reader (no payload).
 */
export function changesOf(events: readonly DomainEvent[], inbox: readonly InboxChange[] = []): ChangeDraft[] {
  const changes: ChangeDraft[] = [];
  for (const e of events) {
    if (EPHEMERAL.has(e.name)) continue;
    const { broadcastAs, channel } = EVENTS[e.name];
    if (e.name === 'ConversationInboxUpdated') {
      const conversationId = (e.payload as { id: number }).id;
      for (const userId of e.to) changes.push({ conversation_id: conversationId, user_id: userId, type: broadcastAs, json: null });
      continue;
    }
    const json = jsonOf(e);
    if (channel === 'conversation') {
      for (const conversationId of e.to) changes.push({ conversation_id: conversationId, user_id: null, type: broadcastAs, json });
    } else {
      const about = (e.payload as { conversation_id?: unknown }).conversation_id;
      const conversationId = typeof about === 'number' ? about : null;
      for (const userId of e.to) changes.push({ conversation_id: conversationId, user_id: userId, type: broadcastAs, json });
    }
  }
  const inboxType = EVENTS.ConversationInboxUpdated.broadcastAs;
  for (const { conversationId, readers } of inbox) {
    if (readers === undefined) changes.push({ conversation_id: conversationId, user_id: null, type: inboxType, json: null });
    else for (const r of readers) changes.push({ conversation_id: conversationId, user_id: r.user_id, type: inboxType, json: null });
  }
  return changes;
}

/**
 * Runs fn as one action: its transaction (retried from the top on a deadlock or serialization failure), its
 * record (change feed and outbox) written before the commit, its deliveries after. Returns fn's result.
 */
export async function unitOfWork<T>(ctx: ChatContext, actor: Actor | ServerActor, fn: (work: Work) => Promise<T>): Promise<T> {
  let events: DomainEvent[] = [];
  let unannounced = new Set<DomainEvent>();
  let inbox: InboxChange[] = [];
  let revoked: { conversationId: number; userId: number; reason: RevokeReason }[] = [];
  let webhooks: WebhookDraft[] = [];
  let disconnected: number[] = [];
  const result = await inTransaction(ctx.db, async (trx) => {
    // A rerun starts from nothing.
    events = [];
    unannounced = new Set();
    inbox = [];
    revoked = [];
    webhooks = [];
    disconnected = [];
    const value = await fn({
      trx,
      emit: (...more) => void events.push(...more),
      emitWithoutWebhook: (...more) => {
        events.push(...more);
        for (const e of more) unannounced.add(e);
      },
      inboxChanged: (conversationId, readers) => void inbox.push(readers === undefined ? { conversationId } : { conversationId, readers }),
      revoke: (conversationId, userId, reason) => void revoked.push({ conversationId, userId, reason }),
      disconnect: (userId) => void disconnected.push(userId),
      webhook: (type, data, conversationId = null) => void webhooks.push({ type, data, conversation_id: conversationId }),
    });
    await appendChanges(trx, changesOf(events, inbox));
    await ctx.notifications?.write(trx, events.filter((e) => !unannounced.has(e)));
    if (webhooks.length > 0) await ctx.notifications?.writeWebhooks(trx, webhooks);
    return value;
  });
  if (events.length === 0 && inbox.length === 0 && revoked.length === 0 && webhooks.length === 0 && disconnected.length === 0) return result;

  ctx.notifications?.committed();
  for (const userId of disconnected) {
    // Every node reads the user's standing again (their tokens are refused from now), then their sockets close.
    await (ctx.forgetUser ?? (async (id: number) => forgetKnownUser(ctx.db, id)))(userId);
    await ctx.broadcaster.disconnectUser(userId);
  }
  // Their sockets stop receiving the conversation before anything else is said on it.
  for (const { conversationId, userId, reason } of revoked) await ctx.broadcaster.unsubscribeUser(conversationChannel(conversationId), userId, reason);
  const inboxUpdates = (await Promise.all(inbox.map(({ conversationId, readers }) => inboxEvents(ctx.db, conversationId, readers)))).flat();
  await ctx.broadcaster.dispatch([...events, ...inboxUpdates], actor.socketId);
  return result;
}
