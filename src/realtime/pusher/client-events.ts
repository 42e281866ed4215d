// client-* events: a subscribed socket talks to the other subscribers of a private or presence channel
// directly (Echo's whisper). Pusher's rules: only on private-* and presence-* channels (private-encrypted-*
// included: the sending client encrypts the payload with the channel's shared secret, and the server relays it
// as it came, like every event there), only from a socket subscribed to the channel, never echoed to the sender,
// rate limited per connection; presence channels add the sender's user_id. Every refusal is a non-fatal
// pusher:error 4301 and nothing is delivered.

import type { ChannelRegistry } from '../channels.js';
import { channelTypeOf } from './channel-types.js';
import type { Connection } from './connection.js';
import { PusherError, PusherErrorCode } from './errors.js';
import { clientEventFrame, type ClientFrame } from './frames.js';
import type { WebhookEvent } from '../pusher-webhooks.js';

export interface ClientEventSettings {
  readonly enabled: boolean;
  /** Per connection; Pusher's default is 10. */
  readonly perSecond: number;
  /** Largest `data`, in bytes. */
  readonly maxDataBytes: number;
  /** Channels whose traffic belongs to the server (Parley's chat channels): client events are refused there. */
  readonly refusedChannelPrefixes: readonly string[];
}

interface Context {
  readonly registry: ChannelRegistry;
  readonly clientEvents: ClientEventSettings;
  /** Delivers a frame to a channel's subscribers on every node but one socket. */
  readonly deliver: (channel: string, frame: string, exceptSocketId?: string) => void;
  /** Queues a webhook (client_event); absent when no webhook is configured. */
  readonly webhook?: (event: WebhookEvent) => void;
}

export function handleClientEvent(ctx: Context, conn: Connection, frame: ClientFrame): void {
  const settings = ctx.clientEvents;
  const reject = (reason: string): void => conn.fail(new PusherError(PusherErrorCode.ClientEventRejected, reason));
  if (!settings.enabled) return reject('Client events are not enabled on this server');
  const channel = frame.channel;
  if (channel === undefined) return reject('A client event needs a channel');
  const type = channelTypeOf(channel);
  if (type === 'public') return reject('Client events are only allowed on private, private-encrypted and presence channels');
  if (settings.refusedChannelPrefixes.some((prefix) => channel.startsWith(prefix))) {
    return reject('Client events are not allowed on this channel');
  }
  if (!ctx.registry.isSubscribed(conn, channel)) return reject('Not subscribed to this channel');
  if (frame.event.length > 200) return reject('Event name is too long');
  const data = frame.dataText ?? '{}';
  if (Buffer.byteLength(data) > settings.maxDataBytes) return reject('Client event data is too large');
  if (!conn.takeClientEvent(settings.perSecond)) return reject('Client event rejected - rate limit exceeded');

  const userId = type === 'presence' ? ctx.registry.subscriberUserId(conn, channel) : undefined;
  ctx.deliver(channel, clientEventFrame(frame.event, channel, data, userId), conn.id);
  // Sent by the sender's node only, so once per cluster.
  ctx.webhook?.({ name: 'client_event', channel, event: frame.event, data, socket_id: conn.id, ...(userId === undefined ? {} : { user_id: userId }) });
}
