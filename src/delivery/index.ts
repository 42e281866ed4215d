// The delivery wing: what happened, delivered outside the sockets, at least once, through the transactional
// outbox (docs/notifications.md). It sits below the chat: it imports the store, src/contract (the public API's definitions) and the event
// builders, never src/chat (the chat imports it: this file's Notifications, and the webhook drafts).
//   index.ts          Notifications: the outbox rows of an action's events, written in its transaction
//   outbox-worker.ts  the worker of each node that claims rows and hands them to the deliverer of their kind
//   outbox-metrics.ts the outbox's Prometheus metrics
//   host-webhooks.ts  webhooks to the host app (CHAT_WEBHOOK_*): one row per URL for each event of a
//                     WEBHOOK_TYPES type, signed POSTs
//   web-push/         Web Push (CHAT_VAPID_*): one 'push' row per MessageSent, recipients decided at delivery;
//                     subscriptions of the user API, the endpoint guard, VAPID keys, the sender
// The composition root wires them (src/app/delivery.ts).
import type { DomainEvent } from '../events/catalog.js';
import type { LeasedRows, OutboxDraft } from '../store/outbox.js';
import { insertOutbox, insertOutboxLeasingHeads } from '../store/outbox.js';
import type { DB } from '../store/database.js';
import type { SentOutbox } from '../store/messages.js';
import type { Tx } from '../store/transaction.js';
import { WEBHOOK_TYPES, type WebhookDraft, type WebhookPayload } from './host-webhooks.js';
import { LEASE_MS, type OutboxWorker } from './outbox-worker.js';
import { EVENTS } from '../contract/events.js';

/** What a use case needs: rows for its events, written in its transaction, and a wake after its commit. */
export interface Notifications {
  /** False when nothing would be written (no webhook URL, no push subscription): callers may skip the work. */
  readonly enabled: boolean;
  /** The outbox rows of one action's events (MessageSent: pass the recipients). */
  rowsFor(events: readonly DomainEvent[], recipients?: (e: DomainEvent) => readonly number[]): OutboxDraft[];
  /** Writes the rows of one action's events in its transaction. */
  write(trx: Tx | DB, events: readonly DomainEvent[], recipients?: (e: DomainEvent) => readonly number[]): Promise<void>;
  /** Writes a row per URL of each webhook no event carries (MessageReported, UserErased) in the action's transaction. */
  writeWebhooks(trx: Tx | DB, webhooks: readonly WebhookDraft[]): Promise<void>;
  /**
   * The same for an action holding its conversations' locks exclusively (sends): the rows first in their
   * conversation's queue come back leased to this node, to be handed to committed() and delivered without a claim.
   */
  writeLeased(trx: Tx, events: readonly DomainEvent[], recipients?: (e: DomainEvent) => readonly number[]): Promise<LeasedRows>;
  /** Which outbox rows a send of plain messages writes with them in one statement (store/messages.ts, SendRecord). */
  sentOutbox(): SentOutbox;
  /**
   * After the commit: the worker delivers the leased rows; it looks for others now when some were written to
   * wait their turn (or, without `written`, when the action wrote rows the plain way).
   */
  committed(written?: LeasedRows): void;
}

/** push: whether MessageSent gets a 'push' row now (web-push/audience.ts: while any browser is subscribed). */
export function createNotifications(options: { webhookUrls: readonly string[]; push: () => boolean; worker: OutboxWorker | null }): Notifications {
  const { webhookUrls, worker } = options;
  function rowsFor(events: readonly DomainEvent[], recipients?: (e: DomainEvent) => readonly number[]): OutboxDraft[] {
    const rows: OutboxDraft[] = [];
    const push = options.push();
    const seen = new Set<string>();
    for (const e of events) {
      const pushed = push && (e.name === 'MessageSent' || e.name === 'ThreadReplySent');
      if (!WEBHOOK_TYPES.has(e.name) && !pushed) continue;
      const data = e.payload as unknown as Record<string, unknown>;
      // In order per conversation: events on a conversation's channel, and user events about one (GroupMembershipRevoked).
      const conversationId =
        EVENTS[e.name].channel === 'conversation' ? (e.to[0] ?? null) : typeof data.conversation_id === 'number' ? data.conversation_id : null;
      // Once per action: an event sent to several channels with the same payload is one webhook.
      const key = `${e.name}:${JSON.stringify(data)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (WEBHOOK_TYPES.has(e.name) && webhookUrls.length > 0) {
        const payload: WebhookPayload = e.name === 'MessageSent' ? { data, recipient_ids: recipients?.(e) ?? [] } : { data };
        for (const url of webhookUrls) rows.push({ kind: 'webhook', target: url, conversation_id: conversationId, type: e.name, payload });
      }
      if (pushed) {
        // No order (conversation_id null): pushes of a conversation replace each other at the push service
        // (Topic) and in the browser (tag), and one browser's failing push service, retried for up to a day,
        // must not hold back everyone else's pushes of that conversation.
        if (e.name === 'MessageSent') {
          const m = data as { id: number; conversation_id: number; sender: { id: number } };
          rows.push({ kind: 'push', conversation_id: null, type: 'MessageSent', payload: { conversation_id: m.conversation_id, message_id: m.id, sender_id: m.sender.id } });
        } else {
          const { message: m, thread_id } = data as { thread_id: number; message: { id: number; conversation_id: number; sender: { id: number } } };
          rows.push({ kind: 'push', conversation_id: null, type: 'ThreadReplySent', payload: { conversation_id: m.conversation_id, message_id: m.id, sender_id: m.sender.id, thread_id } });
        }
      }
    }
    return rows;
  }
  return {
    get enabled() {
      return webhookUrls.length > 0 || options.push();
    },
    rowsFor,
    async write(trx, events, recipients) {
      await insertOutbox(trx, rowsFor(events, recipients));
    },
    async writeWebhooks(trx, webhooks) {
      await insertOutbox(trx, webhooks.flatMap(({ type, data, conversation_id }) =>
        webhookUrls.map((url): OutboxDraft => ({ kind: 'webhook', target: url, conversation_id, type, payload: { data } satisfies WebhookPayload }))));
    },
    async writeLeased(trx, events, recipients) {
      const rows = rowsFor(events, recipients);
      // Without a worker on this node nothing would deliver them now: written to be claimed as usual.
      if (!worker) return insertOutbox(trx, rows).then(() => ({ leased: [], waiting: rows.length }));
      return insertOutboxLeasingHeads(trx, rows, new Date(Date.now() + LEASE_MS));
    },
    sentOutbox() {
      // Without a worker on this node nothing would deliver leased rows now: they are left to be claimed.
      return { webhookUrls, push: options.push(), leaseUntil: worker ? new Date(Date.now() + LEASE_MS) : null };
    },
    committed(written) {
      if (written && written.leased.length > 0) worker?.deliverLeased(written.leased);
      if (!written || written.waiting > 0) worker?.wake();
    },
  };
}
