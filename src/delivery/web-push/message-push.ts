// The Web Push of a MessageSent: one encrypted push per subscription of each recipient who, when the push is
// delivered, is a participant other than the sender, is offline (no heartbeat: src/online-status), has not muted
// the conversation and has no block with the sender (direct conversations: either way; groups: a recipient
// who blocked the sender). Recipients are decided at delivery, not when the message is written: the outbox
// row holds only the message's ids, so a mute, a block or a coming online in between is honoured, and a
// message deleted before its push is not pushed.
//
// Delivery is at least once: a retry sends again to every subscription of the message. A push carries the
// conversation's Topic (the push service keeps only the latest of a topic for an offline browser) and the
// service worker shows it under the conversation's tag (a second push replaces the notification), so a
// repeat shows as one notification.
import type { Logger } from 'pino';
import type { OnlineStatusTracker } from '../../online-status/tracker.js';
import type { DB } from '../../store/database.js';
import { deletePushSubscriptionById, pushSubscriptionsOf } from '../../store/push-subscriptions.js';
import { mutedAt } from '../../store/read-model.js';
import { EndpointRefused } from './endpoint-guard.js';
import type { PushSender } from './sender.js';

/** What the outbox row of a MessageSent (or, with thread_id, a ThreadReplySent) push holds. */
export interface MessagePushJob {
  readonly conversation_id: number;
  readonly message_id: number;
  readonly sender_id: number;
  /** A reply in this thread: pushed to the thread's participants only (v1.2). */
  readonly thread_id?: number;
}

/** The JSON the service worker receives (docs/notifications.md). */
export interface MessagePushPayload {
  readonly type: 'MessageSent' | 'ThreadReplySent';
  readonly conversation_id: number;
  readonly message_id: number;
  readonly title: string;
  readonly body: string;
  readonly url: string;
}

export const PUSH_BODY_MAX_CHARS = 200;
/** How long a push service keeps a push for a browser that is off: a day (a chat message older is stale). */
export const PUSH_TTL_SECONDS = 86_400;

/** The push's Topic for a conversation: URL-safe base64 characters, at most 32. */
export function conversationTopic(conversationId: number): string {
  return `conversation-${conversationId}`;
}

/** The body cut to 200 characters (code points, never half a surrogate pair), with an ellipsis when cut. */
export function pushBody(body: string | null, hasAttachment: boolean): string {
  if (body === null || body === '') return hasAttachment ? 'Sent an attachment' : '';
  const chars = Array.from(body);
  return chars.length <= PUSH_BODY_MAX_CHARS ? body : chars.slice(0, PUSH_BODY_MAX_CHARS - 1).join('') + '…';
}

export class PushDeliveryFailed extends Error {}

export interface MessagePushDeps {
  readonly db: DB;
  readonly presence: Pick<OnlineStatusTracker, 'lastBeats'>;
  readonly send: PushSender;
  readonly logger: Logger;
}

/** The users to push a message to, decided now. */
export async function messagePushRecipients(deps: Pick<MessagePushDeps, 'db' | 'presence'>, job: MessagePushJob, now = new Date()): Promise<number[]> {
  const conversation = await deps.db.selectFrom('conversations').select(['type']).where('id', '=', job.conversation_id).executeTakeFirst();
  if (!conversation) return [];
  let query = deps.db
    .selectFrom('participants')
    .select(['user_id', 'muted', 'muted_until'])
    .where('conversation_id', '=', job.conversation_id)
    .where('user_id', '<>', job.sender_id);
  // A reply in a thread: those who take part in it (store/threads.ts), not the whole conversation.
  if (job.thread_id !== undefined) {
    query = query.where('user_id', 'in', (eb) => eb.selectFrom('thread_members').select('user_id').where('root_id', '=', job.thread_id!));
  }
  const participants = await query.execute();
  const unmuted = participants.filter((p) => !mutedAt(p, now)).map((p) => p.user_id);
  if (unmuted.length === 0) return [];
  const blocks = await deps.db
    .selectFrom('blocks')
    .select(['blocker_id', 'blocked_id'])
    .where((eb) =>
      eb.or([
        eb.and([eb('blocked_id', '=', job.sender_id), eb('blocker_id', 'in', unmuted)]),
        eb.and([eb('blocker_id', '=', job.sender_id), eb('blocked_id', 'in', unmuted)]),
      ]),
    )
    .execute();
  const blocked = new Set(
    blocks.filter((b) => conversation.type === 'direct' || b.blocked_id === job.sender_id).map((b) => (b.blocker_id === job.sender_id ? b.blocked_id : b.blocker_id)),
  );
  const candidates = unmuted.filter((id) => !blocked.has(id));
  if (candidates.length === 0) return [];
  const online = await deps.presence.lastBeats(candidates);
  return candidates.filter((id) => !online.has(id));
}

/** The push's payload, or null when the message is gone (deleted before its push). */
export async function messagePushPayload(db: DB, job: MessagePushJob): Promise<MessagePushPayload | null> {
  const row = await db
    .selectFrom('messages as m')
    .innerJoin('users as u', 'u.id', 'm.sender_id')
    .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
    .select(['m.body', 'm.attachment_id', 'm.deleted_at', 'u.name as sender_name', 'c.type', 'c.name as conversation_name'])
    .where('m.id', '=', job.message_id)
    .where('m.conversation_id', '=', job.conversation_id)
    .executeTakeFirst();
  if (!row || row.deleted_at !== null) return null;
  const title = row.type === 'group' && row.conversation_name ? `${row.sender_name} in ${row.conversation_name}` : row.sender_name;
  return {
    type: job.thread_id === undefined ? 'MessageSent' : 'ThreadReplySent',
    conversation_id: job.conversation_id,
    message_id: job.message_id,
    title,
    body: pushBody(row.body, row.attachment_id !== null),
    url: `/#/c/${job.conversation_id}`,
  };
}

/**
 * Delivers a MessageSent push. Resolves when every subscription was delivered to or is gone (404/410:
 * deleted; an endpoint that now resolves to a refused address: deleted too); throws PushDeliveryFailed when
 * some push service failed otherwise (a network error, a timeout, 429, 5xx, another 4xx), for the outbox to retry.
 */
export async function deliverMessagePush(deps: MessagePushDeps, job: MessagePushJob): Promise<{ sent: number; removed: number }> {
  const recipients = await messagePushRecipients(deps, job);
  if (recipients.length === 0) return { sent: 0, removed: 0 };
  const subscriptions = await pushSubscriptionsOf(deps.db, recipients);
  if (subscriptions.length === 0) return { sent: 0, removed: 0 };
  const payload = await messagePushPayload(deps.db, job);
  if (payload === null) return { sent: 0, removed: 0 };
  const options = { topic: conversationTopic(job.conversation_id), ttlSeconds: PUSH_TTL_SECONDS };
  let sent = 0;
  let removed = 0;
  const failures: string[] = [];
  await Promise.all(
    subscriptions.map(async (sub) => {
      const host = safeHost(sub.endpoint);
      try {
        const result = await deps.send(sub, payload, options);
        if (result.status >= 200 && result.status < 300) {
          sent++;
        } else if (result.status === 404 || result.status === 410) {
          await deletePushSubscriptionById(deps.db, sub.id);
          removed++;
          deps.logger.info({ subscription_id: sub.id, user_id: sub.user_id, host, status: result.status }, 'push subscription gone, deleted');
        } else {
          failures.push(`${host}: ${result.status}`);
          deps.logger.warn({ subscription_id: sub.id, host, status: result.status, body: result.body.slice(0, 200) }, 'push service refused a push');
        }
      } catch (err) {
        if (err instanceof EndpointRefused) {
          // Accepted once, refused now (its host resolves to a private address): never sent to again.
          await deletePushSubscriptionById(deps.db, sub.id);
          removed++;
          deps.logger.warn({ subscription_id: sub.id, user_id: sub.user_id, host, reason: err.message }, 'push endpoint refused at delivery, subscription deleted');
        } else {
          failures.push(`${host}: ${(err as Error).message}`);
          deps.logger.warn({ subscription_id: sub.id, host, err }, 'push failed');
        }
      }
    }),
  );
  if (failures.length > 0) throw new PushDeliveryFailed(`Push of message ${job.message_id} failed for ${failures.length} subscription(s): ${failures.join('; ')}`);
  return { sent, removed };
}

function safeHost(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return '?';
  }
}
