// One realtime node (as Centrifuge's Node owns its Broker and PresenceManager): it owns this process's channel
// registry and Pusher-protocol sockets, and is built from one settings object with its four parts, each an
// interface with a memory and a Redis implementation (broker/, presence/, occupancy/, authorizations/; all in
// memory for a node alone, all in Redis for several: parts.ts). The node calls them the same way either way.
// What it offers is what reaches the whole cluster: publish, unsubscribe a user, terminate a user's
// connections, occupancy. Local delivery is the broker's callback: the node hands every publication to its
// broker and writes to its sockets what the broker hands back. It knows nothing of chat.
//
// Delivery is at-most-once: a socket that is slow, closed or reconnecting misses events and recovers them
// over HTTP.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { Fanout } from '../events/broadcaster.js';
import type { OccupancyQuery, OccupancyReport, PusherApiBackend } from './api-backend.js';
import { mergeOccupancy } from './api-backend.js';
import type { Broker, BrokerHandler, NodeCommand, Publication } from './broker/broker.js';
import { ChannelRegistry } from './channels.js';
import { channelTypeOf } from './pusher/channel-types.js';
import { batchSends } from './pusher/connection.js';
import { encodeFrame, frameWithEncodedData } from './pusher/frames.js';
import { SERVER_TO_USER_PREFIX } from './pusher/signin.js';
import { PusherServer } from './pusher/server.js';
import { REMEMBER_TTL_MS, type AuthorizationLedger } from './authorizations/authorizations.js';
import { localFirstLedger } from './authorizations/local-first.js';
import { whenSettled, type MaybePromise } from './maybe-promise.js';
import type { OccupancyTracker } from './occupancy/occupancy.js';
import type { PresenceLeft, PresenceManager } from './presence/presence.js';
import type { WebhookEvent, WebhookSender } from './pusher-webhooks.js';

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
  /** Open sockets on this node from one client address (an IPv6 /64); more are refused with 4100. */
  readonly maxConnectionsPerAddress: number;
  /** Reverse proxies (addresses, CIDR ranges) whose X-Forwarded-For names a socket's client; empty: none. */
  readonly trustedProxies: readonly string[];
  /**
   * Frames (and WebSocket pings) one socket may send: maxFrameBurst at once, maxFramesPerSecond on average. Beyond
   * them frames are dropped (pusher:error 4301 once), and a socket that sends as many again is closed with 4100.
   */
  readonly maxFramesPerSecond: number;
  readonly maxFrameBurst: number;
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
   * authorization recorded in the authorization ledger within the last REMEMBER_TTL_MS, so an old signature
   * cannot be replayed after the user lost access.
   */
  readonly revocableChannelPrefixes: readonly string[];
  /** How publications reach every node's subscribers (broker/). */
  readonly broker: Broker;
  /** Presence channel members over every node (presence/). */
  readonly presence: PresenceManager;
  /** Which channels are occupied on any node, for the channel_occupied and channel_vacated webhooks (occupancy/). */
  readonly occupancy: OccupancyTracker;
  /**
   * Pending channel authorizations (socket, channel) → user, written by the HTTP auth endpoint and claimed by
   * the subscribe that follows (authorizations/).
   */
  readonly authorizations: AuthorizationLedger;
  /** Pusher webhooks (channel_occupied, channel_vacated, member_added, member_removed, client_event), or none. */
  readonly webhooks: WebhookSender | null;
  readonly logger: Logger;
}

/** How long a socket may stay silent after our pusher:ping (Pusher's own figure; not a setting). */
export const PONG_TIMEOUT_SECONDS = 30;

/** How often a node heartbeats its presence and occupancy shares and removes dead nodes' (nothing to do in memory). */
const SWEEP_MS = 5_000;

/** This node's sockets and subscriptions, and what it received from the other nodes (for /metrics). */
export interface RealtimeStats {
  connections: number;
  channels: number;
  subscriptions: number;
  /** Publications received from other nodes through the broker. */
  clusterReceived: number;
  /**
   * Of the publications from other nodes, those this node wrote to at least one of its sockets: over
   * clusterReceived, the cross-node efficiency (1 when no node receives what none of its sockets wants).
   */
  clusterDelivered: number;
}

/** Counts the publications from other nodes that reached a socket here; `fromHere` is set while this node publishes. */
interface CrossNodeCount {
  fromHere: boolean;
  delivered: number;
}

/** broker.publish for a publication of this node's: the broker hands it back to the handler before returning. */
function publishFromHere(broker: Broker, count: CrossNodeCount, channels: readonly string[], publication: Publication): void | Promise<void> {
  count.fromHere = true;
  try {
    return broker.publish(channels, publication);
  } finally {
    count.fromHere = false;
  }
}

export interface RealtimeNode extends Fanout, PusherApiBackend {
  /**
   * Where the HTTP auth endpoint records the authorizations it gives (pusher/channel-authorizer.ts): this node's
   * memory for its own sockets, the shared ledger (settings.authorizations) for the others' (authorizations/local-first.ts).
   */
  readonly authorizations: AuthorizationLedger;
  /** Call from the http server's 'upgrade' event. Answers every upgrade (a path outside /app/ with HTTP 404) and returns true. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /**
   * Deliver one event to every socket subscribed to each channel (full channel names, e.g. 'private-chat.user.7')
   * on every node, except the socket with exceptSocketId. `data` is the payload as JSON text (or any string, as the
   * Pusher HTTP API allows); the frame is built once per channel, never per socket. This node's sockets have their
   * frames when it returns; the promise settles once the other nodes' share is handed to the broker.
   */
  publish(channels: readonly string[], event: string, data: string, exceptSocketId?: string): void | Promise<void>;
  /**
   * Runs fn, whose publishes are written to each socket in one write at its end: the events of one chat
   * action (MessageSent and a member's InboxUpdated) cost a member's socket one syscall, not one each.
   */
  batch<T>(fn: () => T): T;
  /**
   * Drop every subscription of userId to channelName on every node (a member removed from a group stops
   * receiving), and void the user's pending authorizations for it. Sends nothing to the client: pusher-js has
   * no frame for a server-side unsubscribe, the app learns of the removal from its own event, and a later
   * re-subscribe fails at the auth endpoint. Only subscriptions claimed from the authorization store are known
   * to belong to a user.
   */
  unsubscribeUser(channelName: string, userId: string): Promise<void>;
  /** Close every socket signed in (pusher:signin) as userId, on every node, with 4009 so pusher-js does not reconnect. */
  terminateUserConnections(userId: string): Promise<void>;
  /** The same, and also every socket holding a subscription recorded as userId's (a user banned from the service). */
  disconnectUser(userId: string): Promise<void>;
  /** The occupancy of the channels a query covers, over every node that answers in time. */
  occupancy(query: OccupancyQuery): Promise<OccupancyReport>;
  stats(): RealtimeStats;
  /** Close every socket with the given code (default 4200, so clients reconnect) and stop accepting. */
  close(code?: number): Promise<void>;
}

/** Builds a node and connects it to its broker; it accepts sockets once this resolves. */
export async function createRealtimeNode(given: RealtimeSettings): Promise<RealtimeNode> {
  validate(given);
  // The node's own sockets' authorizations stay in its memory (server: declared below, asked only later).
  const settings = { ...given, authorizations: localFirstLedger(given.authorizations, (socketId) => server.hasConnection(socketId), REMEMBER_TTL_MS) };
  const logger = settings.logger.child({ component: 'realtime' });
  const work = new InFlight();
  const crossNode: CrossNodeCount = { fromHere: false, delivered: 0 };
  const interest = brokerInterest(settings.broker);
  const announce = announcer(settings, work, crossNode, logger);
  const registry = new ChannelRegistry({
    channelOccupied(channel) {
      interest.changed(channel, true);
      announce.occupancyChanged(channel, true);
    },
    channelVacated(channel) {
      interest.changed(channel, false);
      announce.occupancyChanged(channel, false);
    },
    memberRemoved: (channel, userId) => announce.memberLeft(channel, userId),
  });
  const server = pusherServer(settings, registry, interest, announce, logger);
  const here = nodeLocal(settings.authorizations, registry, logger);
  await settings.broker.start(brokerHandler(registry, server, here, crossNode, logger));
  const sweep = setInterval(() => announce.sweep(), SWEEP_MS);
  sweep.unref();
  return nodeApi(settings, logger, registry, server, here, crossNode, async () => {
    clearInterval(sweep);
    await announce.withdraw();
  });
}

function validate(settings: RealtimeSettings): void {
  if (settings.appKey === '' || settings.appSecret === '') throw new TypeError('realtime: appKey and appSecret are required');
  for (const name of POSITIVE_SETTINGS) positive(name, settings[name]);
  positive('clientEvents.perSecond', settings.clientEvents.perSecond);
  positive('clientEvents.maxDataBytes', settings.clientEvents.maxDataBytes);
}

/** Presence leaves and occupancy changes still being decided by a Redis part: close() waits for them. */
class InFlight {
  private readonly pending = new Set<Promise<unknown>>();
  add(work: Promise<unknown> | undefined): void {
    if (work === undefined) return;
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }
}

/** Which channels this node wants the other nodes' publications of, and which of them are not flowing yet. */
interface BrokerInterest {
  /** A channel occupied or vacated on this node: ask the broker for its publications, or stop asking. */
  changed(channel: string, occupied: boolean): void;
  /** Resolves once the other nodes' publications to a channel just occupied flow; undefined when they already do. */
  ready(channel: string): Promise<void> | undefined;
}

function brokerInterest(broker: Broker): BrokerInterest {
  /** Channels whose publications from the other nodes are asked for but not yet flowing: their subscribers wait. */
  const listening = new Map<string, Promise<void>>();
  return {
    changed(channel, occupied) {
      if (!occupied) {
        listening.delete(channel);
        return broker.unsubscribe(channel);
      }
      const flowing = broker.subscribe(channel);
      if (flowing === undefined) return;
      listening.set(channel, flowing);
      void flowing.then(() => {
        if (listening.get(channel) === flowing) listening.delete(channel);
      });
    },
    ready: (channel) => listening.get(channel),
  };
}

/**
 * What the node tells a channel's subscribers and the webhooks as members leave and channels fill and empty,
 * decided by the presence and occupancy parts (once per cluster). Occupancy is counted only for the webhooks
 * that report it.
 */
interface Announcer {
  /** To a channel's subscribers on every node, except one socket: client events and presence changes. */
  deliver(channel: string, frame: string, exceptSocketId?: string): void;
  /** Queues a webhook; undefined when the app has none. */
  readonly webhook: ((event: WebhookEvent) => void) | undefined;
  /** This node's last tab of a user left a presence channel: gone from it if no other node holds the user. */
  memberLeft(channel: string, userId: string): void;
  occupancyChanged(channel: string, occupied: boolean): void;
  /** Heartbeats this node's shares and announces what dead nodes held. */
  sweep(): void;
  /** This node is going away (its sockets closed): what only it held is announced now, and the webhooks flushed. */
  withdraw(): Promise<void>;
}

function announcer(settings: RealtimeSettings, work: InFlight, crossNode: CrossNodeCount, logger: Logger): Announcer {
  const { broker, presence, occupancy, webhooks } = settings;
  const webhook = webhooks ? (event: WebhookEvent): void => webhooks.enqueue(event) : undefined;
  const deliver = (channel: string, frame: string, exceptSocketId?: string): void => {
    void publishFromHere(broker, crossNode, [channel], { kind: 'frame', frame, exceptSocketId });
  };
  const memberRemoved = (channel: string, userId: string): void => {
    deliver(channel, encodeFrame('pusher_internal:member_removed', { user_id: userId }, channel));
    webhook?.({ name: 'member_removed', channel, user_id: userId });
  };
  const membersGone = (gone: readonly PresenceLeft[]) => gone.forEach(({ channel, userId }) => memberRemoved(channel, userId));
  const channelsVacated = (vacated: readonly string[]) => vacated.forEach((channel) => webhook?.({ name: 'channel_vacated', channel }));
  /** Waits for what a Redis part still decides, then takes this node's share away; a failure is logged as `what`. */
  const withdrawn = async <T>(share: () => MaybePromise<T[]>, what: string): Promise<T[]> => {
    await work.settled();
    try {
      return await share();
    } catch (err) {
      logger.warn({ err }, what);
      return [];
    }
  };
  // A channel's webhooks go in the order their decisions were asked for, whatever order Redis
  // answers in: on a Redis Cluster the presence and occupancy keys live on different masters, and the channel_vacated
  // decided after the last member_removed could otherwise be queued before it (Pusher sends it after).
  const deciding = new Map<string, Promise<void>>();
  const inChannelOrder = <T>(channel: string, decision: MaybePromise<T>, then: (value: T) => void, failed: (err: unknown) => void): Promise<void> | undefined => {
    const before = deciding.get(channel);
    const done = before === undefined
      ? whenSettled(decision, then, failed)
      : Promise.allSettled([decision, before]).then(([result]) => (result.status === 'fulfilled' ? then(result.value) : failed(result.reason)));
    if (done === undefined) return undefined;
    deciding.set(channel, done);
    const forget = () => void (deciding.get(channel) === done && deciding.delete(channel));
    done.then(forget, forget);
    return done;
  };
  return {
    deliver,
    // The handlers' webhooks (member_added, client_event) wait for their channel's decisions still under way, so a
    // member_added is never queued before the channel_occupied its own subscription decided (on a Redis Cluster the
    // presence answer can come first).
    webhook: webhook && ((event) => work.add(inChannelOrder(event.channel, undefined, () => webhook(event), () => {}))),
    memberLeft(channel, userId) {
      const leaving = inChannelOrder(
        channel,
        presence.leave(channel, userId),
        (gone) => gone && memberRemoved(channel, userId),
        (err: unknown) => logger.warn({ err, channel }, 'shared presence leave failed; the node sweep will retry'),
      );
      work.add(leaving);
    },
    occupancyChanged(channel, occupied) {
      if (webhook === undefined || channel.startsWith(SERVER_TO_USER_PREFIX)) return;
      const name = occupied ? 'channel_occupied' : 'channel_vacated';
      const decided = inChannelOrder(
        channel,
        occupied ? occupancy.occupy(channel) : occupancy.vacate(channel),
        (changed) => changed && webhook({ name, channel }),
        (err: unknown) => logger.warn({ err, channel }, 'shared occupancy unavailable; webhook not sent'),
      );
      work.add(decided);
    },
    sweep() {
      void whenSettled(presence.sweep(), membersGone, (err: unknown) => logger.warn({ err }, 'shared presence sweep failed'));
      // A node that died without shutting down: the channels only it held are vacated now.
      if (webhook !== undefined) void whenSettled(occupancy.sweep(), channelsVacated, (err: unknown) => logger.warn({ err }, 'shared occupancy sweep failed'));
    },
    async withdraw() {
      // Members only this node held leave the channel for the other nodes' subscribers now, not after the sweep timeout.
      membersGone(await withdrawn(() => presence.withdraw(), 'withdrawing shared presence failed; other nodes will sweep it'));
      if (webhook !== undefined) channelsVacated(await withdrawn(() => occupancy.withdraw(), 'withdrawing shared occupancy failed'));
      await webhooks?.close();
    },
  };
}

/** The Pusher-protocol server of this node's sockets, and the handlers of what its clients send. */
function pusherServer(settings: RealtimeSettings, registry: ChannelRegistry, interest: BrokerInterest, announce: Announcer, logger: Logger): PusherServer {
  const { appKey, appSecret } = settings;
  const { webhook } = announce;
  return new PusherServer({
    appKey,
    activityTimeoutSeconds: settings.activityTimeoutSeconds,
    pongTimeoutSeconds: settings.pongTimeoutSeconds,
    maxMessageBytes: settings.maxMessageBytes,
    maxBufferedBytes: settings.maxBufferedBytes,
    maxConnections: settings.maxConnections,
    maxConnectionsPerAddress: settings.maxConnectionsPerAddress,
    trustedProxies: settings.trustedProxies,
    maxFramesPerSecond: settings.maxFramesPerSecond,
    maxFrameBurst: settings.maxFrameBurst,
    allowedOrigins: settings.allowedOrigins,
    logger,
    handlers: {
      appKey,
      appSecret,
      registry,
      remembered: settings.authorizations,
      maxChannelsPerConnection: settings.maxChannelsPerConnection,
      maxPresenceMembers: settings.maxPresenceMembers,
      revocableChannelPrefixes: settings.revocableChannelPrefixes,
      clientEvents: { ...settings.clientEvents, refusedChannelPrefixes: settings.serverOwnedChannelPrefixes },
      presence: settings.presence,
      deliver: announce.deliver,
      channelReady: interest.ready,
      ...(webhook ? { webhook } : {}),
      logger,
    },
  });
}

/** What this node does of an order or question that reaches every node. */
interface NodeLocal {
  /** Its part of unsubscribeUser: its sockets at once, then the pending authorizations. */
  unsubscribe(channel: string, userId: string): Promise<void>;
  /** Its occupancy of the channels a query covers. */
  occupancy(query: OccupancyQuery): OccupancyReport;
}

function nodeLocal(authorizations: AuthorizationLedger, registry: ChannelRegistry, logger: Logger): NodeLocal {
  return {
    async unsubscribe(channel, userId) {
      const dropped = registry.unsubscribeUser(channel, userId);
      if (dropped > 0) logger.debug({ channel, userId, dropped }, 'user unsubscribed by server');
      await authorizations.forgetUser(channel, userId); // an authorization not yet used is void too
    },
    occupancy(query) {
      const report: OccupancyReport = new Map();
      const add = (channel: string): void => {
        const subscriptionCount = registry.subscriptionCountOf(channel);
        if (subscriptionCount === 0) return;
        report.set(channel, channelTypeOf(channel) === 'presence' ? { subscriptionCount, userIds: registry.presence(channel).ids } : { subscriptionCount });
      };
      if ('channel' in query) add(query.channel);
      else {
        for (const channel of registry.channelNames()) {
          // Users' own #server-to-user channels are not channels an app lists (as on Pusher).
          if (channel.startsWith(query.prefix) && !channel.startsWith(SERVER_TO_USER_PREFIX)) add(channel);
        }
      }
      return report;
    },
  };
}

/** What the broker hands this node: publications for its sockets, orders and occupancy questions from other nodes. */
function brokerHandler(registry: ChannelRegistry, server: PusherServer, here: NodeLocal, crossNode: CrossNodeCount, logger: Logger): BrokerHandler {
  /** Writes the publication to this node's subscribers; returns how many of its channels reached at least one socket. */
  function deliver(channels: readonly string[], publication: Publication): number {
    const except = publication.exceptSocketId;
    let reached = 0;
    if (publication.kind === 'frame') {
      for (const channel of channels) if (registry.hasSubscribers(channel) && registry.broadcast(channel, Buffer.from(publication.frame), except) > 0) reached++;
      return reached;
    }
    if (publication.kind === 'each') {
      // Each channel's data is head + its middle + tail: encoded as a JSON string, the same three parts escaped
      // apart (escaping goes character by character), the shared ones once.
      let head: string | undefined;
      let tail: string | undefined;
      const { event, middles } = publication;
      channels.forEach((channel, i) => {
        if (!registry.hasSubscribers(channel)) return;
        head ??= JSON.stringify(publication.head).slice(0, -1);
        tail ??= JSON.stringify(publication.tail).slice(1);
        if (registry.broadcast(channel, Buffer.from(frameWithEncodedData(event, `${head}${JSON.stringify(middles[i]).slice(1, -1)}${tail}`, channel)), except) > 0) reached++;
      });
      return reached;
    }
    let encodedData: string | undefined; // once per event, and only if someone listens
    for (const channel of channels) {
      if (!registry.hasSubscribers(channel)) continue; // e.g. the user channel of someone offline
      encodedData ??= JSON.stringify(publication.data);
      // once per channel, then the same bytes to every socket (no per-socket encoding)
      if (registry.broadcast(channel, Buffer.from(frameWithEncodedData(publication.event, encodedData, channel)), except) > 0) reached++;
    }
    return reached;
  }
  return {
    publication(channels: readonly string[], publication: Publication) {
      const reached = deliver(channels, publication);
      // Counted per channel, as Broker.received counts them (a dispatch crosses as one message for many channels).
      if (!crossNode.fromHere) crossNode.delivered += reached;
    },
    command(command: NodeCommand) {
      if (command.kind === 'terminate') {
        server.terminateUser(command.userId, { subscribed: command.subscribed === true });
        return;
      }
      // The sockets are dropped at once; forgetting pending authorizations may need Redis commands, which may
      // fail while Redis reconnects: logged, never an unhandled rejection (that would end the process).
      here.unsubscribe(command.channel, command.userId).catch((err: unknown) =>
        logger.warn({ err: (err as Error).message, channel: command.channel }, 'cross-node unsubscribe incomplete'),
      );
    },
    occupancy: (query) => here.occupancy(query),
  };
}

/** Events named pusher:* and pusher_internal:* belong to the protocol: the app may not publish them. */
function refuseReserved(event: string): void {
  if (event.startsWith('pusher:') || event.startsWith('pusher_internal:')) throw new TypeError(`realtime: "${event}" is reserved by the Pusher protocol`);
}

/** The node as the rest of the process sees it; `withdraw` runs once its sockets are closed. */
function nodeApi(
  settings: RealtimeSettings,
  logger: Logger,
  registry: ChannelRegistry,
  server: PusherServer,
  here: NodeLocal,
  crossNode: CrossNodeCount,
  withdraw: () => Promise<void>,
): RealtimeNode {
  const { broker, authorizations } = settings;
  return {
    authorizations,
    handleUpgrade: (req, socket, head) => server.handleUpgrade(req, socket, head),

    publish(channels, event, data, exceptSocketId) {
      refuseReserved(event);
      return publishFromHere(broker, crossNode, channels, { kind: 'event', event, data, exceptSocketId });
    },

    publishEach(channels, event, head, tail, middles, exceptSocketId) {
      refuseReserved(event);
      return publishFromHere(broker, crossNode, channels, { kind: 'each', event, head, tail, middles, exceptSocketId });
    },

    batch: (fn) => batchSends(() => (broker.batch ? broker.batch(fn) : fn())),

    async unsubscribeUser(channel, userId) {
      // The other nodes are told even when this node's part fails (voiding authorizations may need Redis too).
      const local = here.unsubscribe(channel, userId);
      const told = broker.command({ kind: 'unsubscribe', channel, userId }).catch((err: unknown) => {
        // Delivery is at-most-once; the removed member's pending authorizations expire within REMEMBER_TTL_MS.
        logger.warn({ err: (err as Error).message, channel }, 'cross-node unsubscribe not sent');
      });
      const [result] = await Promise.allSettled([local, told]);
      if (result.status === 'rejected') throw result.reason;
    },

    async terminateUserConnections(userId) {
      server.terminateUser(userId);
      // Unlike an event, a lost termination is an error the caller must see (the user stays connected elsewhere).
      await broker.command({ kind: 'terminate', userId });
    },

    async disconnectUser(userId) {
      server.terminateUser(userId, { subscribed: true });
      await broker.command({ kind: 'terminate', userId, subscribed: true });
    },

    async occupancy(query) {
      return mergeOccupancy(here.occupancy(query), await broker.survey(query));
    },

    stats: () => ({ connections: server.connectionCount, ...registry.stats(), clusterReceived: broker.received(), clusterDelivered: crossNode.delivered }),

    async close(code = 4200) {
      // Codes a server may send in a close frame (RFC 6455 §7.4); ws throws on any other.
      if (!Number.isInteger(code) || !(code === 1000 || (code >= 3000 && code <= 4999))) {
        throw new RangeError(`realtime: ${code} is not a close code a server may send`);
      }
      await server.close(code);
      authorizations.clear();
      await withdraw();
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
  'maxConnectionsPerAddress',
  'maxFramesPerSecond',
  'maxFrameBurst',
  'maxPresenceMembers',
] as const satisfies readonly (keyof RealtimeSettings)[];

function positive(name: string, value: number): void {
  if (!(Number.isFinite(value) && value > 0)) throw new TypeError(`realtime: ${name} must be a positive number`);
}
