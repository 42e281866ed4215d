// Web Push subscriptions of the user API: GET /push/config, POST and DELETE /push/subscriptions. A refused
// subscription throws SubscriptionInvalid, which the route answers as validation_failed on its field (this wing
// stays below the chat: it knows the store, not the chat's errors).
import type { DB } from '../../store/database.js';
import { deleteUserPushSubscription, upsertPushSubscription } from '../../store/push-subscriptions.js';
import { EndpointRefused, EndpointUnresolved, parseEndpoint, resolveEndpoint, type Resolver } from './endpoint-guard.js';

/** A subscription that cannot be saved: `field` of the request body, and why. */
export class SubscriptionInvalid extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
    this.name = 'SubscriptionInvalid';
  }
}

const invalid = (field: string, message: string) => new SubscriptionInvalid(field, message);

export interface PushSettings {
  readonly vapidPublicKey: string;
  /** CHAT_PUSH_ALLOW_HTTP: http endpoints and loopback addresses accepted. */
  readonly allowHttp: boolean;
  readonly resolver?: Resolver;
  /** Told of each saved subscription, so this node's sends write push rows from now on (audience.ts). */
  readonly audience?: { subscribed(): void };
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** base64url text → bytes, or null when it is not base64url (standard base64's + and / are not). */
function base64url(text: string): Buffer | null {
  if (!BASE64URL.test(text)) return null;
  return Buffer.from(text.replace(/=+$/, ''), 'base64url');
}

export interface SubscriptionInput {
  readonly endpoint: string;
  readonly keys: { readonly p256dh: string; readonly auth: string };
}

export async function subscribePush(db: DB, settings: PushSettings, userId: number, input: SubscriptionInput): Promise<{ endpoint: string }> {
  const p256dh = base64url(input.keys.p256dh);
  if (p256dh === null || p256dh.length !== 65 || p256dh[0] !== 0x04) {
    throw invalid('keys.p256dh', 'keys.p256dh must be the base64url of an uncompressed P-256 public key (65 bytes).');
  }
  const auth = base64url(input.keys.auth);
  if (auth === null || auth.length !== 16) throw invalid('keys.auth', 'keys.auth must be the base64url of a 16-byte secret.');
  try {
    await resolveEndpoint(parseEndpoint(input.endpoint, settings.allowHttp), settings.allowHttp, settings.resolver);
  } catch (err) {
    if (err instanceof EndpointRefused || err instanceof EndpointUnresolved) throw invalid('endpoint', err.message);
    throw err;
  }
  await upsertPushSubscription(db, { userId, endpoint: input.endpoint, p256dh: input.keys.p256dh, auth: input.keys.auth }, new Date());
  settings.audience?.subscribed();
  return { endpoint: input.endpoint };
}

/** Idempotent: removing a subscription the user does not have (any more) is no error. */
export async function unsubscribePush(db: DB, userId: number, endpoint: string): Promise<void> {
  await deleteUserPushSubscription(db, userId, endpoint);
}
