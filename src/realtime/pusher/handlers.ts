// The client → server events of Pusher protocol v7. The server plumbing hands every text frame
// here; each outcome is at most one frame back, and nothing here throws.
//
// Choices:
// - private-* channels need a valid signature for this socket; a bad one is answered with
//   pusher:subscription_error (the shape pusher-js surfaces to the app) and the socket stays open.
// - on revocable channels (see HandlerContext) the signature must come with a fresh authorization.
// - presence-* and private-encrypted-* are not supported yet: subscription_error, status 501.
// - client-* events are refused with a non-fatal pusher:error 4301: everything a client may say
//   to others (typing, reads) goes through the HTTP API, where it is authorized and rate limited.
// - pusher:unsubscribe gets no answer (as on Pusher); unsubscribing from a channel one is not in
//   is a no-op.

import type { Logger } from 'pino';
import type { ChannelRegistry } from '../channels.js';
import type { AuthorizationLedger } from '../remembered-subscribers.js';
import { channelTypeOf, isValidChannelName } from './channel-types.js';
import type { Connection } from './connection.js';
import { PusherError, PusherErrorCode } from './errors.js';
import { encodeFrame, parseClientFrame, stringField, type ClientFrame } from './frames.js';
import { verifyChannelAuth } from './signature.js';

export interface HandlerContext {
  readonly appKey: string;
  readonly appSecret: string;
  readonly registry: ChannelRegistry;
  readonly remembered: AuthorizationLedger;
  readonly maxChannelsPerConnection: number;
  /**
   * Private channels whose access can be revoked (a member removed from a group): a subscribe needs a
   * fresh authorization from the HTTP endpoint, not just a signature, which stays valid for its socket.
   */
  readonly revocableChannelPrefixes: readonly string[];
  readonly logger: Logger;
}

/** The `data` of a pusher:subscription_error, as pusher-js reports it to the application. */
interface SubscriptionError {
  readonly type: string;
  readonly error: string;
  readonly status: number;
}

const PONG = encodeFrame('pusher:pong', {});

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
  }
  if (frame.event.startsWith('client-')) {
    conn.fail(new PusherError(PusherErrorCode.ClientEventRejected, 'Client events are not enabled on this server'));
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
  if (!isValidChannelName(channel)) {
    refuse(ctx, conn, channel, { type: 'InvalidChannel', error: 'Invalid channel name', status: 400 });
    return;
  }
  const alreadySubscribed = ctx.registry.isSubscribed(conn, channel);
  if (!alreadySubscribed && conn.channels.size >= ctx.maxChannelsPerConnection) {
    refuse(ctx, conn, channel, { type: 'LimitExceeded', error: 'Too many channels on this connection', status: 429 });
    return;
  }

  switch (channelTypeOf(channel)) {
    case 'presence':
    case 'private-encrypted':
      refuse(ctx, conn, channel, {
        type: 'UnsupportedChannel',
        error: 'This channel type is not supported by this server',
        status: 501,
      });
      return;
    case 'private': {
      const auth = stringField(frame.data, 'auth');
      if (auth === undefined || !verifyChannelAuth(ctx.appKey, ctx.appSecret, conn.id, channel, auth)) {
        refuse(ctx, conn, channel, { type: 'AuthError', error: 'Invalid channel signature', status: 401 });
        return;
      }
      const claimed = ctx.remembered.claim(conn.id, channel);
      if (claimed instanceof Promise) {
        // A shared ledger answers later; the socket may be gone by then.
        claimed.then(
          (userId) => conn.isOpen && admitPrivate(ctx, conn, channel, userId),
          (err: unknown) => {
            ctx.logger.warn({ err, channel }, 'authorization ledger unavailable');
            if (conn.isOpen) refuse(ctx, conn, channel, { type: 'AuthError', error: 'Authorization could not be checked; retry', status: 503 });
          },
        );
      } else {
        admitPrivate(ctx, conn, channel, claimed);
      }
      return;
    }
    case 'public':
      admit(ctx, conn, channel, undefined);
      return;
  }
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
  conn.send(encodeFrame('pusher_internal:subscription_succeeded', {}, channel));
}

function unsubscribe(ctx: HandlerContext, conn: Connection, frame: ClientFrame): void {
  const channel = stringField(frame.data, 'channel');
  if (channel === undefined) {
    conn.fail(new PusherError(PusherErrorCode.Generic, 'pusher:unsubscribe needs data.channel'));
    return;
  }
  ctx.registry.unsubscribe(conn, channel);
}

function refuse(ctx: HandlerContext, conn: Connection, channel: string, error: SubscriptionError): void {
  ctx.logger.debug({ socketId: conn.id, channel, reason: error.type }, 'subscription refused');
  conn.send(encodeFrame('pusher:subscription_error', error, channel));
}
