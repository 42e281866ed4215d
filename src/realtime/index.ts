// The real-time facade: the only thing the rest of Parley imports from src/realtime.
// It owns the channel registry, the Pusher protocol server and the auth bookkeeping, and exposes
// publish/authorize for the broadcaster and the HTTP auth endpoint. It knows nothing of chat.
//
// Delivery is at-most-once: a socket that is slow, closed or reconnecting misses events and
// recovers them over HTTP.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ChannelRegistry } from './channels.js';
import { channelTypeOf } from './pusher/channel-types.js';
import { batchSends } from './pusher/connection.js';
import { encodeFrame, frameWithEncodedData } from './pusher/frames.js';
import { SERVER_TO_USER_PREFIX } from './pusher/signin.js';
import { PusherServer } from './pusher/server.js';
import { channelAuth } from './pusher/signature.js';
import type { AuthorizationLedger } from './remembered-subscribers.js';
import type { PresenceStore } from './shared-presence.js';
import type { WebhookEvent, WebhookSender } from './webhooks.js';

/**
 * Everything a node is built from, every value given (the defaults live in the settings table,
 * config/settings.ts, and reach here through the config): limits, switches and the parts it is handed.
 */
export interface RealtimeSettings {
  readonly appKey: string;
  readonly appSecret: string;
  readonly activityTimeoutSeconds: number;
  /** Silence allowed after our pusher:ping before closing with 4201 (PONG_TIMEOUT_SECONDS). */
  readonly pongTimeoutSeconds: number;
  /** Largest WebSocket frame a client may send. */
  readonly maxMessageBytes: number;
  /** Bytes waiting in one socket's send buffer before it is closed with 4100. */
  readonly maxBufferedBytes: number;
  /** Subscriptions one socket may hold; more are refused with subscription_error (429). */
  readonly maxChannelsPerConnection: number;
  /** Open sockets on this node; more are refused with 4100. */
  readonly maxConnections: number;
  /** Distinct users on one presence channel; more are refused with subscription_error (403). */
  readonly maxPresenceMembers: number;
  /** Origins allowed to open a socket (exact match, "*" for any); empty: any. */
  readonly allowedOrigins: readonly string[];
  /** client-* events (Echo's whisper): the switch, the rate per socket and the largest `data`. */
  readonly clientEvents: { readonly enabled: boolean; readonly perSecond: number; readonly maxDataBytes: number };
  /** Channels whose traffic belongs to the server (Parley's chat channels): client events there are refused. */
  readonly serverOwnedChannelPrefixes: readonly string[];
  /**
   * Private channel name prefixes whose access can be revoked by unsubscribeUser: subscribing needs an
   * authorization recorded in the authorization store within the last REMEMBER_TTL_MS, so an old signature
   * cannot be replayed after the user lost access.
   */
  readonly revocableChannelPrefixes: readonly string[];
  /** Presence members and channel occupancy: this node's registry (LOCAL_PRESENCE) or shared by the cluster. */
  readonly presence: PresenceStore;
  /** Pending channel authorizations (socket, channel) → user: in memory for one node, shared with several. */
  readonly authorizations: AuthorizationLedger;
  /** Pusher webhooks (channel_occupied, channel_vacated, member_added, member_removed, client_event), or none. */
  readonly webhooks: WebhookSender | null;
  readonly logger: Logger;
}

/** How long a socket may stay silent after our pusher:ping (Pusher's own figure; not a setting). */
export const PONG_TIMEOUT_SECONDS = 30;

/** A frame for a channel's subscribers, passed between nodes. */
export interface RelayedFrame {
  readonly channel: string;
  readonly frame: string;
  readonly exceptSocketId?: string;
}

/**
 * How a node takes part in a cluster (Redis, fanout/redis.ts): it relays its frames to the other nodes, and
 * receives a channel's traffic from them only while it has subscribers of that channel.
 */
export interface ClusterLink {
  /** Frames this node sends to a channel's subscribers go to the other nodes' subscribers too. */
  relay(relayed: RelayedFrame): void;
  /** This node's first subscriber of `channel`: its traffic from the other nodes is wanted. Resolves once it flows (never rejects). */
  listen(channel: string): Promise<void>;
  /** This node's last subscriber of `channel` left: its traffic is no longer wanted. */
  unlisten(channel: string): void;
}

/** How often a node with shared presence heartbeats and removes dead nodes' members. */
const PRESENCE_SWEEP_MS = 5_000;

/** What the Pusher HTTP API reports for one occupied channel (on this node). */
export interface ChannelInfo {
  readonly subscriptionCount: number;
  /** Distinct users; presence channels only. */
  readonly userCount?: number;
}

export interface RealtimeStats {
  connections: number;
  channels: number;
  subscriptions: number;
}

export interface RealtimeServer {
  /** Call from the http server's 'upgrade' event. Answers every upgrade (a path outside /app/ with HTTP 404) and returns true. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /**
   * Deliver one event to every socket subscribed to each channel (full channel names, e.g. 'private-chat.user.7'),
   * except the socket with exceptSocketId. `data` is the payload as JSON text (or any string, as the Pusher HTTP
   * API allows); the frame is built once per channel, never per socket.
   */
  publish(channels: readonly string[], event: string, data: string, exceptSocketId?: string): void;
  /**
   * Runs fn, whose publishes are written to each socket in one write at its end: the events of one chat
   * action (MessageSent and a member's InboxUpdated) cost a member's socket one syscall, not one each.
   */
  batch<T>(fn: () => T): T;
  /** Signature for the channel auth endpoint: returns "<appKey>:<hex>". */
  authorize(socketId: string, channelName: string): string;
  /** Called by the HTTP auth endpoint after it authorized userId for channelName on socketId: a later successful subscribe of that socket to that channel is recorded as belonging to userId. Entries not used within 60 s are forgotten (bounded memory). */
  rememberSubscriber(socketId: string, channelName: string, userId: string): void | Promise<void>;
  /**
   * Drop every subscription of userId to channelName at once (a member removed from a group stops
   * receiving). Sends nothing to the client: pusher-js has no frame for a server-side unsubscribe,
   * the app learns of the removal from its own event, and a later re-subscribe fails at the auth
   * endpoint. Only subscriptions recorded through rememberSubscriber are known to belong to a user.
   */
  unsubscribeUser(channelName: string, userId: string): void | Promise<void>;
  /** Delivers a frame that another node relayed (a client event, a presence change) to this node's subscribers of `channel`. */
  deliverRelayed(relayed: RelayedFrame): void;
  /** Joins a cluster: frames are relayed to the other nodes, and each channel's traffic is asked for while it has subscribers here. Once. */
  joinCluster(link: ClusterLink): void;
  /** Occupancy of one channel on this node; undefined when nobody is subscribed. */
  channelInfo(channel: string): ChannelInfo | undefined;
  /** Occupied channels on this node whose names start with `prefix` (all when omitted). */
  channelList(prefix?: string): Map<string, ChannelInfo>;
  /** Ids of the users present on a presence channel on this node, in join order. */
  presenceUserIds(channel: string): string[];
  /** Close every socket signed in (pusher:signin) as userId with 4009, so pusher-js does not reconnect. Returns how many. */
  terminateUserConnections(userId: string): number;
  stats(): RealtimeStats;
  /** Close every socket with the given code (default 4200, so clients reconnect) and stop accepting. */
  close(code?: number): Promise<void>;
}

/** How long an authorization waits for its subscribe before rememberSubscriber forgets it. */
const REMEMBER_TTL_MS = 60_000;

export function createRealtimeServer(options: RealtimeSettings): RealtimeServer {
  const { appKey, appSecret } = options;
  if (appKey === '' || appSecret === '') throw new TypeError('realtime: appKey and appSecret are required');
  for (const name of POSITIVE_SETTINGS) positive(name, options[name]);
  positive('clientEvents.perSecond', options.clientEvents.perSecond);
  positive('clientEvents.maxDataBytes', options.clientEvents.maxDataBytes);
  const logger = options.logger.child({ component: 'realtime' });
  const shared = options.presence.kind === 'shared' ? options.presence.members : undefined;
  /** Shared leaves in flight: close() waits for them, so a shutdown announces every member it takes away. */
  const pendingLeaves = new Set<Promise<unknown>>();
  let cluster: ClusterLink | undefined;
  /** Channels whose traffic from the other nodes is asked for but not yet flowing: their subscribers wait. */
  const listening = new Map<string, Promise<void>>();
  /** To a channel's subscribers on every node, except one socket: client events and presence changes. */
  function deliver(channel: string, frame: string, exceptSocketId?: string): void {
    if (registry.hasSubscribers(channel)) registry.broadcast(channel, Buffer.from(frame), exceptSocketId);
    cluster?.relay({ channel, frame, exceptSocketId });
  }
  /** A channel occupied or vacated on this node: ask the cluster for its traffic, or stop asking. */
  function clusterInterest(channel: string, occupied: boolean): void {
    if (cluster === undefined) return;
    if (!occupied) {
      listening.delete(channel);
      return cluster.unlisten(channel);
    }
    const flowing = cluster.listen(channel);
    listening.set(channel, flowing);
    void flowing.then(() => {
      if (listening.get(channel) === flowing) listening.delete(channel);
    });
  }
  const webhooks = options.webhooks;
  const webhook = webhooks ? (event: WebhookEvent): void => webhooks.enqueue(event) : undefined;
  // Occupancy is only counted across the cluster for the webhooks that report it.
  const occupancy = webhook && options.presence.kind === 'shared' ? options.presence.occupancy : undefined;
  /** Occupancy changes, for the webhooks: on one node the registry decides; with several, the shared count. */
  function occupancyChanged(channel: string, occupied: boolean): void {
    if (webhook === undefined || channel.startsWith(SERVER_TO_USER_PREFIX)) return;
    const name = occupied ? 'channel_occupied' : 'channel_vacated';
    if (occupancy === undefined) return webhook({ name, channel });
    const deciding = (occupied ? occupancy.occupy(channel) : occupancy.vacate(channel)).then(
      (changed) => changed && webhook({ name, channel }),
      (err: unknown) => logger.warn({ err, channel }, 'shared occupancy unavailable; webhook not sent'),
    );
    pendingLeaves.add(deciding);
    void deciding.finally(() => pendingLeaves.delete(deciding));
  }
  const memberRemoved = (channel: string, userId: string): void => {
    deliver(channel, encodeFrame('pusher_internal:member_removed', { user_id: userId }, channel));
    webhook?.({ name: 'member_removed', channel, user_id: userId });
  };
  const registry = new ChannelRegistry({
    channelOccupied(channel) {
      clusterInterest(channel, true);
      occupancyChanged(channel, true);
    },
    channelVacated(channel) {
      clusterInterest(channel, false);
      occupancyChanged(channel, false);
    },
    memberRemoved(channel, userId) {
      if (shared === undefined) return memberRemoved(channel, userId);
      // This node's last tab of the user: gone from the channel only if no other node holds it.
      const leaving = shared.leave(channel, userId).then(
        (gone) => gone && memberRemoved(channel, userId),
        (err: unknown) => logger.warn({ err, channel }, 'shared presence leave failed; the node sweep will retry'),
      );
      pendingLeaves.add(leaving);
      void leaving.finally(() => pendingLeaves.delete(leaving));
    },
  });
  const sweep = (shared || (occupancy && webhook)) && setInterval(() => {
    shared?.sweep().then(
      (gone) => gone.forEach(({ channel, userId }) => memberRemoved(channel, userId)),
      (err: unknown) => logger.warn({ err }, 'shared presence sweep failed'),
    );
    // A node that died without shutting down: the channels only it held are vacated now.
    if (occupancy && webhook) {
      occupancy.sweep().then(
        (vacated) => vacated.forEach((channel) => webhook({ name: 'channel_vacated', channel })),
        (err: unknown) => logger.warn({ err }, 'shared occupancy sweep failed'),
      );
    }
  }, PRESENCE_SWEEP_MS);
  sweep?.unref();
  const remembered = options.authorizations;
  const server = new PusherServer({
    appKey,
    activityTimeoutSeconds: options.activityTimeoutSeconds,
    pongTimeoutSeconds: options.pongTimeoutSeconds,
    maxMessageBytes: options.maxMessageBytes,
    maxBufferedBytes: options.maxBufferedBytes,
    maxConnections: options.maxConnections,
    allowedOrigins: options.allowedOrigins,
    logger,
    handlers: {
      appKey,
      appSecret,
      registry,
      remembered,
      maxChannelsPerConnection: options.maxChannelsPerConnection,
      maxPresenceMembers: options.maxPresenceMembers,
      revocableChannelPrefixes: options.revocableChannelPrefixes,
      clientEvents: { ...options.clientEvents, refusedChannelPrefixes: options.serverOwnedChannelPrefixes },
      sharedPresence: shared,
      deliver,
      channelReady: (channel) => listening.get(channel),
      ...(webhook ? { webhook } : {}),
      logger,
    },
  });

  function channelInfo(channel: string): ChannelInfo | undefined {
    const subscriptionCount = registry.subscriptionCountOf(channel);
    if (subscriptionCount === 0) return undefined;
    return channelTypeOf(channel) === 'presence' ? { subscriptionCount, userCount: registry.memberCount(channel) } : { subscriptionCount };
  }

  return {
    handleUpgrade: (req, socket, head) => server.handleUpgrade(req, socket, head),

    publish(channels, event, data, exceptSocketId) {
      if (event.startsWith('pusher:') || event.startsWith('pusher_internal:')) {
        throw new TypeError(`realtime: "${event}" is reserved by the Pusher protocol`);
      }
      let encodedData: string | undefined; // once per event, and only if someone listens
      for (const channel of channels) {
        if (!registry.hasSubscribers(channel)) continue; // e.g. the user channel of someone offline
        encodedData ??= JSON.stringify(data);
        // once per channel, then the same bytes to every socket (no per-socket encoding)
        const frame = Buffer.from(frameWithEncodedData(event, encodedData, channel));
        registry.broadcast(channel, frame, exceptSocketId);
      }
    },

    batch: batchSends,

    authorize: (socketId, channelName) => channelAuth(appKey, appSecret, socketId, channelName),

    rememberSubscriber: (socketId, channelName, userId) => remembered.remember(socketId, channelName, userId),

    async unsubscribeUser(channelName, userId) {
      const dropped = registry.unsubscribeUser(channelName, userId);
      if (dropped > 0) logger.debug({ channel: channelName, userId, dropped }, 'user unsubscribed by server');
      await remembered.forgetUser(channelName, userId); // an authorization not yet used is void too
    },

    deliverRelayed({ channel, frame, exceptSocketId }) {
      if (registry.hasSubscribers(channel)) registry.broadcast(channel, Buffer.from(frame), exceptSocketId);
    },

    joinCluster(link) {
      if (cluster !== undefined) throw new Error('realtime: joinCluster is called once');
      cluster = link;
      for (const channel of registry.channelNames()) clusterInterest(channel, true); // subscribed before the link
    },

    channelInfo,

    channelList(prefix = '') {
      const list = new Map<string, ChannelInfo>();
      for (const channel of registry.channelNames()) {
        // Users' own #server-to-user channels are not channels an app lists (as on Pusher).
        if (!channel.startsWith(prefix) || channel.startsWith(SERVER_TO_USER_PREFIX)) continue;
        const info = channelInfo(channel);
        if (info !== undefined) list.set(channel, info);
      }
      return list;
    },

    presenceUserIds: (channel) => registry.presence(channel).ids,

    terminateUserConnections: (userId) => server.terminateUser(userId),

    stats: () => ({ connections: server.connectionCount, ...registry.stats() }),

    async close(code = 4200) {
      // Codes a server may send in a close frame (RFC 6455 §7.4); ws throws on any other.
      if (!Number.isInteger(code) || !(code === 1000 || (code >= 3000 && code <= 4999))) {
        throw new RangeError(`realtime: ${code} is not a close code a server may send`);
      }
      await server.close(code);
      remembered.clear();
      clearInterval(sweep);
      if (shared) {
        await Promise.all(pendingLeaves);
        // Members only this node held leave the channel for the other nodes' subscribers now, not after the sweep timeout.
        const gone = await shared.withdraw().catch((err: unknown) => {
          logger.warn({ err }, 'withdrawing shared presence failed; other nodes will sweep it');
          return [];
        });
        for (const { channel, userId } of gone) memberRemoved(channel, userId);
      }
      if (occupancy && webhook) {
        await Promise.all(pendingLeaves);
        const vacated = await occupancy.withdraw().catch((err: unknown) => {
          logger.warn({ err }, 'withdrawing shared occupancy failed');
          return [];
        });
        for (const channel of vacated) webhook({ name: 'channel_vacated', channel });
      }
      await webhooks?.close();
    },
  };
}

const POSITIVE_SETTINGS = [
  'activityTimeoutSeconds',
  'pongTimeoutSeconds',
  'maxMessageBytes',
  'maxBufferedBytes',
  'maxChannelsPerConnection',
  'maxConnections',
  'maxPresenceMembers',
] as const satisfies readonly (keyof RealtimeSettings)[];

function positive(name: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) throw new TypeError(`realtime: ${name} must be a positive number`);
}

export { isValidSocketId } from './pusher/signature.js';
export type { AuthorizationLedger } from './remembered-subscribers.js';
export { LOCAL_PRESENCE, type PresenceStore, type SharedPresence } from './shared-presence.js';
export { RememberedSubscribers } from './remembered-subscribers.js';
export { SERVER_TO_USER_PREFIX, serverToUserChannel } from './pusher/signin.js';
export { REMEMBER_TTL_MS };
