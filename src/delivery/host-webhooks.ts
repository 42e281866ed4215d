// Webhooks to the host app (API v1.1, docs/notifications.md): one signed POST per action and URL, delivered
// through the outbox (kind 'webhook', target = the URL). Body {id, type, created_at, data}; headers
// X-Parley-Webhook-Id and X-Parley-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>.
// 2xx within 10 s = delivered; anything else throws, for the outbox to retry.
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { Config } from '../config/index.js';
import { ConfigError, SECRET_MIN_BYTES } from '../config/settings.js';
import { messageSentPayload } from '../events/catalog.js';
import type { OutboxRow } from '../store/outbox.js';
import { plainMessage } from '../store/read-model.js';
import type { Deliverer } from './outbox-worker.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;

/** The event types a webhook is sent for (never InboxUpdated or UserTyping). */
export const WEBHOOK_TYPES = new Set([
  'MessageSent',
  'MessageUpdated',
  'MessageDeleted',
  'MessageReactionsUpdated',
  'ConversationRead',
  'GroupParticipantsChanged',
  'GroupMembershipRevoked',
  'UserBlockChanged',
  'UserPresenceChanged',
  'ThreadReplySent',
  'MessagePinned',
]);

/** v1.2: webhooks that tell the host app of an action no socket hears of (Work.webhook, chat/unit-of-work.ts). */
export const WEBHOOK_ONLY_TYPES = ['MessageReported', 'UserErased'] as const;
export type WebhookOnlyType = (typeof WEBHOOK_ONLY_TYPES)[number];

/** One webhook of a WEBHOOK_ONLY_TYPES type: its data, and the conversation it keeps its order in (or none). */
export interface WebhookDraft {
  readonly type: WebhookOnlyType;
  readonly data: Record<string, unknown>;
  readonly conversation_id: number | null;
}

/** What a webhook row's payload holds: the event's data as broadcast; MessageSent also its recipients. */
export interface WebhookPayload {
  readonly data: Record<string, unknown>;
  /** MessageSent: the participants other than the sender, of whom those offline at delivery are named. */
  readonly recipient_ids?: readonly number[];
}

/**
 * A MessageSent row written by a node of an earlier release (before sends recorded their webhooks from the change
 * feed): the plain message as written, rather than its data. Read here so that rows still waiting when a
 * deployment is upgraded, or written by old nodes during a rolling upgrade, are delivered; nothing writes it now.
 */
interface EarlierSentPayload {
  readonly sent: { id: number; conversation_id: number; body: string | null; sender: { id: number; name: string; avatar_url: string | null }; created_at: string };
  readonly recipient_ids: readonly number[];
}

function dataOf(payload: WebhookPayload | EarlierSentPayload): Record<string, unknown> {
  if (!('sent' in payload)) return payload.data;
  const { id, conversation_id, body, sender, created_at } = payload.sent;
  return { ...messageSentPayload(plainMessage(id, conversation_id, body, sender, new Date(created_at))) };
}

export function signature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** CHAT_WEBHOOK_SECRET, or the one generated once into CHAT_DATA_DIR/webhook-secret. */
export function loadWebhookSecret(config: Config): string {
  if (config.webhooks.secret !== null) return config.webhooks.secret;
  const file = join(config.dataDir, 'webhook-secret');
  if (existsSync(file)) {
    const secret = readFileSync(file, 'utf8').trim();
    if (Buffer.byteLength(secret) < SECRET_MIN_BYTES) throw new ConfigError(`${file} holds fewer than ${SECRET_MIN_BYTES} bytes. Fix: delete it to generate a new one, or set CHAT_WEBHOOK_SECRET.`);
    return secret;
  }
  const secret = randomBytes(32).toString('hex');
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

export function webhookDeliverer(options: {
  secret: string;
  /** The users among ids with no live connection now (src/online-status). */
  offline(userIds: readonly number[]): Promise<number[]>;
  timeoutMs?: number;
}): Deliverer {
  return {
    kind: 'webhook',
    async deliver(row: OutboxRow) {
      const payload = row.payload as WebhookPayload | EarlierSentPayload;
      const data = row.type === 'MessageSent' ? { ...dataOf(payload), offline_user_ids: await options.offline(payload.recipient_ids ?? []) } : dataOf(payload);
      const body = JSON.stringify({ id: String(row.id), type: row.type, created_at: row.created_at.toISOString(), data });
      const t = Math.floor(Date.now() / 1000);
      const status = await post(row.target, body, {
        'content-type': 'application/json',
        'user-agent': 'Parley-Webhooks',
        'x-parley-webhook-id': String(row.id),
        'x-parley-signature': signature(options.secret, t, body),
      }, options.timeoutMs ?? WEBHOOK_TIMEOUT_MS);
      if (status < 200 || status > 299) throw new Error(`${row.target} answered HTTP ${status}`);
    },
  };
}

// Kept-alive connections to the receivers, a pool per origin (undici): a POST costs a fraction of the CPU of
// node:http's (whose request object and agent dominated the cost of a webhook in the ingest bench) and of
// fetch's. A redirect is never followed (a 3xx is not delivered).
const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) pools.set(origin, (pool = new Pool(origin, { connections: 64 })));
  return pool;
}

/** POSTs body to url; resolves with the status once the answer has been read, rejects on a network error or timeout. */
async function post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  const target = new URL(url);
  // Time from the start, like the 10 s a receiver is given: a receiver trickling its answer is cut off too.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    const res = await poolFor(target.origin).request({
      method: 'POST',
      path: target.pathname + target.search,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      body,
      signal: abort.signal,
    });
    await res.body.dump(); // the answer's body is not used
    return res.statusCode;
  } catch (err) {
    if (abort.signal.aborted) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
