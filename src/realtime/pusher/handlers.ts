// The client → server events of Pusher protocol v7. The server plumbing hands every text frame
// here; each outcome is at most one frame back to the sender (plus what other subscribers are told),
// and nothing here throws.
//
// Choices:
// - private-* and private-encrypted-* channels need a valid signature for this socket; presence-*
//   channels a signature over the channel_data string exactly as sent. A refusal is answered with
//   pusher:subscription_error (the shape pusher-js surfaces to the app) and the socket stays open.
// - on revocable channels (see HandlerContext) the signature must come with a fresh authorization.
// - pusher:unsubscribe gets no answer (as on Pusher); unsubscribing from a channel one is not in
//   is a no-op.
// - client-* events: see client-events.ts; pusher:signin: see signin.ts.

import type { Logger } from 'pino';
import type { ChannelRegistry, PresenceMember, PresenceSnapshot } from '../channels.js';
import type { AuthorizationLedger } from '../authorizations/authorizations.js';
import { whenSettled, type MaybePromise } from '../maybe-promise.js';
import type { PresenceJoin, PresenceManager } from '../presence/presence.js';
import type { WebhookEvent } from '../pusher-webhooks.js';
import { channelTypeOf, isValidChannelName } from './channel-types.js';
import { handleClientEvent, type ClientEventSettings } from './client-events.js';
import type { Connection } from './connection.js';
import { PusherError, PusherErrorCode } from './errors.js';
import { MAX_DATA_DEPTH, encodeFrame, encodeObjectFrame, parseClientFrame, stringField, tooDeep, type ClientFrame } from './frames.js';
import { verifyChannelAuth } from './signature.js';
import { SERVER_TO_USER_PREFIX, handleSignin, serverToUserChannel } from './signin.js';

export interface HandlerContext {
  readonly appKey: string;
  readonly appSecret: string;
  readonly registry: ChannelRegistry;
  readonly remembered: AuthorizationLedger;
  readonly maxChannelsPerConnection: number;
  readonly maxPresenceMembers: number;
  /**
   * Private channels whose access can be revoked (a member removed from a group): a subscribe needs a
   * fresh authorization from the HTTP endpoint, not just a signature, which stays valid for its socket.
   */
  readonly revocableChannelPrefixes: readonly string[];
  readonly clientEvents: ClientEventSettings;
  /** Members of presence channels on every node (in memory on a node alone). */
  readonly presence: PresenceManager;
  /** Delivers a frame to a channel's subscribers on every node, except one socket (client events, presence changes). */
  readonly deliver: (channel: string, frame: string, exceptSocketId?: string) => void;
  /**
   * With several nodes, a channel just occupied here receives the other nodes' traffic once this resolves
   * (undefined: already flowing). subscription_succeeded waits for it, so an event published anywhere after a
   * client saw it subscribed reaches that client.
   */
  readonly channelReady?: (channel: string) => Promise<void> | undefined;
  /** Queues a webhook (member_added, client_event); absent when no webhook is configured. */
  readonly webhook?: (event: WebhookEvent) => void;
  readonly logger: Logger;
}

/** The `data` of a pusher:subscription_error, as pusher-js reports it to the application. */
interface SubscriptionError {
  readonly type: string;
  readonly error: string;
  readonly status: number;
}

const PONG = encodeObjectFrame('pusher:pong', {});
/** Pusher's limit on a presence user id. */
const MAX_USER_ID_LENGTH = 128;

export function handleMessage(ctx: HandlerContext, conn: Connection, text: string): void {
  const parsed = parseClientFrame(text);
  if (!parsed.ok) {
    conn.fail(new PusherError(PusherErrorCode.Generic, parsed.reason));
    return;
  }
  const frame = parsed.frame;
  switch (frame.event) {
    case 'pusher:ping':
      conn.send(PONG);
      return;
    case 'pusher:pong':
      return; // the server already counted the frame as activity
    case 'pusher:subscribe':
      subscribe(ctx, conn, frame);
      return;
    case 'pusher:unsubscribe':
      unsubscribe(ctx, conn, frame);
      return;
    case 'pusher:signin':
      handleSignin(ctx, conn, frame);
      return;
  }
  if (frame.event.startsWith('client-')) {
    handleClientEvent(ctx, conn, frame);
  } else {
    conn.fail(new PusherError(PusherErrorCode.Generic, `Unknown event: ${frame.event.slice(0, 64)}`));
  }
}

function subscribe(ctx: HandlerContext, conn: Connection, frame: ClientFrame): void {
  const channel = stringField(frame.data, 'channel');
  if (channel === undefined) {
    conn.fail(new PusherError(PusherErrorCode.Generic, 'pusher:subscribe needs data.channel'));
    return;
  }
  if (channel.startsWith(SERVER_TO_USER_PREFIX)) {
    // pusher-js subscribes to its own user channel after pusher:signin; that socket already is.
    if (conn.signedInUserId !== undefined && channel === serverToUserChannel(conn.signedInUserId)) admit(ctx, conn, channel, conn.signedInUserId);
    else refuse(ctx, conn, channel, { type: 'AuthError', error: 'Sign in as this user first', status: 403 });
    return;
  }
  if (!isValidChannelName(channel)) {
    refuse(ctx, conn, channel, { type: 'InvalidChannel', error: 'Invalid channel name', status: 400 });
    return;
  }
  const alreadySubscribed = ctx.registry.isSubscribed(conn, channel);
  if (!alreadySubscribed && conn.channels.size >= ctx.maxChannelsPerConnection) {
    refuse(ctx, conn, channel, { type: 'LimitExceeded', error: 'Too many channels on this connection', status: 429 });
    return;
  }

  const auth = stringField(frame.data, 'auth');
  switch (channelTypeOf(channel)) {
    case 'public':
      admit(ctx, conn, channel, undefined);
      return;
    case 'private-encrypted':
      // Relayed as is: the payloads are encrypted by the app's server with a key we never see.
      if (!signed(ctx, conn, channel, auth)) return;
      admit(ctx, conn, channel, undefined);
      return;
    case 'presence':
      subscribePresence(ctx, conn, channel, auth, stringField(frame.data, 'channel_data'));
      return;
    case 'private': {
      if (!signed(ctx, conn, channel, auth)) return;
      // The Redis ledger answers later; the socket may be gone by then.
      void whenSettled(
        ctx.remembered.claim(conn.id, channel),
        (userId) => conn.isOpen && admitPrivate(ctx, conn, channel, userId),
        (err: unknown) => {
          ctx.logger.warn({ err, channel }, 'authorization ledger unavailable');
          if (conn.isOpen) refuse(ctx, conn, channel, { type: 'AuthError', error: 'Authorization could not be checked; retry', status: 503 });
        },
      );
      return;
    }
  }
}

function signed(ctx: HandlerContext, conn: Connection, channel: string, auth: string | undefined, channelData?: string): boolean {
  if (auth !== undefined && verifyChannelAuth(ctx.appKey, ctx.appSecret, conn.id, channel, auth, channelData)) return true;
  refuse(ctx, conn, channel, { type: 'AuthError', error: 'Invalid channel signature', status: 401 });
  return false;
}

function subscribePresence(ctx: HandlerContext, conn: Connection, channel: string, auth: string | undefined, channelData: string | undefined): void {
  const { registry } = ctx;
  // One subscription per channel and socket, as on hosted Pusher: a second one (as whatever user) is an error,
  // not a silent success that leaves the first member in place.
  if (registry.isSubscribed(conn, channel)) {
    conn.send(encodeObjectFrame('pusher:error', { code: null, message: `Existing subscription to channel ${channel}` }));
    return;
  }
  let member: PresenceMember | string;
  if (channelData === undefined) {
    // Without channel_data the socket joins as the user it signed in as (pusher:signin), as hosted Pusher allows
    // and pusher-js sends when the auth endpoint answers no channel_data; the signature is then socket_id:channel.
    if (conn.signedInUserId === undefined) {
      refuse(ctx, conn, channel, { type: 'AuthError', error: 'Presence channels need channel_data, or a pusher:signin first', status: 400 });
      return;
    }
    if (!signed(ctx, conn, channel, auth)) return;
    member = { userId: conn.signedInUserId, info: conn.signedInUserInfo ?? null };
  } else {
    if (!signed(ctx, conn, channel, auth, channelData)) return;
    member = parseMember(channelData);
  }
  if (typeof member === 'string') {
    refuse(ctx, conn, channel, { type: 'InvalidChannelData', error: member, status: 400 });
    return;
  }
  joinPresence(ctx, conn, channel, member);
}

/**
 * The socket is subscribed locally at once (so it misses no event), and answered once presence says whether the
 * user is new to the channel on any node (at once in memory; with Redis, once the shared count answers).
 */
function joinPresence(ctx: HandlerContext, conn: Connection, channel: string, member: PresenceMember): void {
  const { registry } = ctx;
  // Counted here at once (so a second local tab is not "first"), but sent nothing until subscription_succeeded.
  const firstHere = registry.join(conn, channel, member, { pending: true });
  const ready = ctx.channelReady?.(channel);
  const joined: MaybePromise<PresenceJoin> = firstHere
    ? ctx.presence.join(channel, member, ctx.maxPresenceMembers)
    : whenMembers(ctx.presence.members(channel));
  const answered = ready === undefined ? joined : Promise.all([joined, ready]).then(([result]) => result);
  void whenSettled(
    answered,
    (result) => {
      if (result.full) {
        registry.unsubscribe(conn, channel);
        if (conn.isOpen) refuse(ctx, conn, channel, { type: 'LimitExceeded', error: 'This presence channel is full', status: 403 });
        return;
      }
      if (result.first) announceMember(ctx, channel, member, conn.id); // decided once per cluster
      if (conn.isOpen) conn.send(presenceSucceeded(channel, result.members));
      registry.activate(conn, channel);
    },
    (err: unknown) => {
      ctx.logger.warn({ err, channel }, 'presence unavailable');
      registry.unsubscribe(conn, channel);
      if (conn.isOpen) refuse(ctx, conn, channel, { type: 'PresenceError', error: 'Presence could not be updated; retry', status: 503 });
    },
  );
}

/** Another tab of a user already on the channel: not new, and the members as they are. */
function whenMembers(members: MaybePromise<PresenceSnapshot>): MaybePromise<PresenceJoin> {
  return members instanceof Promise ? members.then((m) => ({ full: false, first: false, members: m })) : { full: false, first: false, members };
}

/** A user new to a presence channel: the other subscribers are told, and member_added is queued for the webhooks. */
function announceMember(ctx: HandlerContext, channel: string, member: PresenceMember, socketId: string): void {
  ctx.deliver(channel, memberAdded(channel, member), socketId);
  ctx.webhook?.({ name: 'member_added', channel, user_id: member.userId });
}

const presenceSucceeded = (channel: string, presence: PresenceSnapshot): string =>
  encodeFrame('pusher_internal:subscription_succeeded', { presence }, channel);

const memberAdded = (channel: string, member: PresenceMember): string =>
  encodeFrame('pusher_internal:member_added', { user_id: member.userId, user_info: member.info }, channel);

/**
 * channel_data: {"user_id": string or number, "user_info"?: anything}. Ids are compared as strings. A string
 * answer is why it was refused.
 */
function parseMember(channelData: string): PresenceMember | string {
  const shape = 'channel_data must be a JSON object with a user_id';
  let value: unknown;
  try {
    value = JSON.parse(channelData);
  } catch {
    return shape;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return shape;
  const { user_id: rawId, user_info: info } = value as Record<string, unknown>;
  // user_info is encoded again into every member_added and subscription_succeeded of the channel.
  if (tooDeep(info, MAX_DATA_DEPTH)) return shape;
  const userId = typeof rawId === 'string' ? rawId : typeof rawId === 'number' && Number.isFinite(rawId) ? String(rawId) : undefined;
  if (userId === undefined || userId === '') return shape;
  if (userId.length > MAX_USER_ID_LENGTH) return `user_id may have at most ${MAX_USER_ID_LENGTH} characters`;
  return { userId, info: info ?? null };
}

function admitPrivate(ctx: HandlerContext, conn: Connection, channel: string, userId: string | undefined): void {
  if (userId === undefined && ctx.revocableChannelPrefixes.some((prefix) => channel.startsWith(prefix))) {
    refuse(ctx, conn, channel, { type: 'AuthError', error: 'Authorization expired or revoked; authorize again', status: 401 });
    return;
  }
  admit(ctx, conn, channel, userId);
}

function admit(ctx: HandlerContext, conn: Connection, channel: string, userId: string | undefined): void {
  ctx.registry.subscribe(conn, channel, userId);
  const succeeded = encodeFrame('pusher_internal:subscription_succeeded', {}, channel);
  const ready = ctx.channelReady?.(channel);
  if (ready === undefined) conn.send(succeeded);
  else void ready.then(() => conn.isOpen && ctx.registry.isSubscribed(conn, channel) && conn.send(succeeded));
}

function unsubscribe(ctx: HandlerContext, conn: Connection, frame: ClientFrame): void {
  const channel = stringField(frame.data, 'channel');
  if (channel === undefined) {
    conn.fail(new PusherError(PusherErrorCode.Generic, 'pusher:unsubscribe needs data.channel'));
    return;
  }
  ctx.registry.unsubscribe(conn, channel); // a presence member's last tab leaving is announced by the registry
}

function refuse(ctx: HandlerContext, conn: Connection, channel: string, error: SubscriptionError): void {
  ctx.logger.debug({ socketId: conn.id, channel, reason: error.type }, 'subscription refused');
  conn.send(encodeObjectFrame('pusher:subscription_error', error, channel));
}
