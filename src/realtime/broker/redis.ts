// The broker in Redis, for several nodes sharing one (see broker.ts). Each publication is handed to this node's handler at once and
// published on Redis for the others. A channel's traffic has a pub/sub topic of its own, and a node subscribes
// to it only while it has subscribers of that channel, so at N nodes a node handles the publications of its own
// sockets' channels, not every node's. The node's subscription_succeeded waits for that topic subscription
// (subscribe's promise), so an event published anywhere after a client saw itself subscribed reaches it.
// Orders for every node (unsubscribe a user, terminate their connections) go on one shared topic; occupancy
// questions on another (redis-survey.ts). Nodes skip their own messages by node id. On a Redis Cluster every
// topic is a shard channel (../../redis/pubsub.ts): a Pusher channel's topic, `<prefix>ch:{<channel>}`, lives on
// the master of its slot, so the channels spread over the masters and a node hears only its own channels.
import type { Logger } from 'pino';
import type { RedisConnections } from '../../redis/connections.js';
import type { Broker, BrokerHandler, NodeCommand, Publication } from './broker.js';
import { redisSurvey } from './redis-survey.js';

/**
 * On a channel's topic: a line of JSON (the node it comes from and the publication but its payload), then the payload
 * as it is, an event's data or a frame: never encoded into the JSON, so neither side escapes or parses it (for a
 * group of 10,000 that was 10,000 payloads escaped by the sender and parsed by the receivers per message).
 */
type ChannelHeader = { node: string; except?: string } & ({ kind: 'event'; event: string } | { kind: 'frame' });

function channelMessage(header: ChannelHeader, publication: Exclude<Publication, { kind: 'each' }>): string {
  // JSON.stringify never writes a raw line break: the first one ends the header.
  return `${JSON.stringify(header)}\n${publication.kind === 'event' ? publication.data : publication.frame}`;
}

/** The publication in a channel message; null if it is not one. Reads the whole-JSON form of earlier releases too (rolling upgrades). */
function readChannelMessage(raw: string): { node: string; publication: Publication } | null {
  const end = raw.indexOf('\n');
  try {
    if (end === -1) {
      const old = JSON.parse(raw) as { node: string; except?: string } & ({ kind: 'event'; event: string; data: string } | { kind: 'frame'; frame: string });
      return { node: old.node, publication: old.kind === 'event' ? { kind: 'event', event: old.event, data: old.data, exceptSocketId: old.except } : { kind: 'frame', frame: old.frame, exceptSocketId: old.except } };
    }
    const header = JSON.parse(raw.slice(0, end)) as ChannelHeader;
    const payload = raw.slice(end + 1);
    const publication: Publication =
      header.kind === 'event' ? { kind: 'event', event: header.event, data: payload, exceptSocketId: header.except } : { kind: 'frame', frame: payload, exceptSocketId: header.except };
    return { node: header.node, publication };
  } catch {
    return null;
  }
}

/**
 * One event to many channels (a Publication of kind 'each') on a shard topic: a header line, then the channels, the
 * shared head and tail and each channel's own part, as JSON.
 */
type EachHeader = { node: string; except?: string; kind: 'each'; event: string };
type EachBody = { channels: string[]; head: string; tail: string; middles: string[] };

/**
 * From this many channels up, an 'each' publication goes to every node as one message per Redis server instead of
 * one per channel: every node then reads every channel's part, even those of channels it has no subscriber of, but a
 * group of 10,000 costs three messages of its members' own parts (some 60 bytes each) instead of 10,000 of about
 * 1.2 kB. Below it (a group of ten), each channel's topic reaches only the nodes that want it.
 */
export const EACH_AS_ONE_FROM = 64;

function readEachMessage(raw: string): { header: EachHeader; body: EachBody } | null {
  const end = raw.indexOf('\n');
  if (end === -1) return null;
  try {
    const header = JSON.parse(raw.slice(0, end)) as EachHeader;
    const body = JSON.parse(raw.slice(end + 1)) as EachBody;
    if (header.kind !== 'each' || !Array.isArray(body.channels) || !Array.isArray(body.middles) || body.channels.length !== body.middles.length) return null;
    return { header, body };
  } catch {
    return null;
  }
}

/** On the shared topic, for every node. */
type NodeMessage = { node: string } & NodeCommand;

/** How long a new subscriber waits for its channel's topic before it is told it is subscribed anyway (Redis away). */
const LISTEN_TIMEOUT_MS = 2_000;

/**
 * How long a publish holds up its caller (a send's answer) while Redis does not answer: a Cluster master failing
 * over, say. The publication still goes out if Redis answers later; the send is answered meanwhile.
 */
const PUBLISH_WAIT_MS = 1_000;

/** `node`: this node's id (the one its presence and occupancy shares use too). */
export function redisBroker(redis: RedisConnections, node: string, logger: Logger): Broker {
  const nodeTopic = `${redis.prefix}fanout`;
  const channelTopics = `${redis.prefix}ch:`;
  // 'each' publications to many channels, one topic per Redis server, which every node listens to.
  const eachTopics = `${redis.prefix}each:`;
  const listening = new Set<string>();
  // The braces make the whole channel name the topic's hash tag on a Cluster: one slot per channel.
  const topicOf = (channel: string) => `${channelTopics}{${channel}}`;
  const channelOf = (topic: string) => topic.slice(channelTopics.length + 1, -1);
  let handler: BrokerHandler | undefined;
  const occupancy = redisSurvey(redis, node, (query) => handler?.occupancy(query) ?? new Map(), logger);
  let received = 0;

  // One timer for all the publishes of a moment (a group's InboxUpdated is one publish per member): each publish waits
  // for the first deadline at least PUBLISH_WAIT_MS away on a 50 ms grid.
  const deadlines = new Map<number, Promise<void>>();
  function publishDeadline(): Promise<void> {
    const at = Math.ceil((Date.now() + PUBLISH_WAIT_MS) / 50) * 50;
    let deadline = deadlines.get(at);
    if (deadline === undefined) {
      deadline = new Promise<void>((resolve) => setTimeout(() => (deadlines.delete(at), resolve()), at - Date.now()).unref());
      deadlines.set(at, deadline);
    }
    return deadline;
  }

  function publishFailed(err: unknown): void {
    // Delivery is at-most-once: other nodes' clients catch up over HTTP.
    logger.warn({ err: (err as Error).message }, 'cross-node publish failed');
  }

  /** Listens to the 'each' topic of every Redis server there is now (a Cluster's masters may have changed). */
  async function listenToEachTopics(): Promise<void> {
    for (const topic of redis.pubsub.shardTopics(eachTopics)) {
      if (listening.has(topic)) continue;
      listening.add(topic);
      await redis.pubsub.subscribe(topic).catch((err: unknown) => {
        listening.delete(topic);
        logger.warn({ err: (err as Error).message, topic }, 'cross-node subscription failed');
      });
    }
  }

  /** The other nodes' share of one event to each of many channels. */
  function publishEach(channels: readonly string[], p: Extract<Publication, { kind: 'each' }>): Promise<void> {
    const shards = channels.length >= EACH_AS_ONE_FROM ? redis.pubsub.shards(eachTopics, channels.map(topicOf)) : null;
    let sent: Promise<unknown>;
    if (shards === null) {
      // One message per channel topic, each event's data whole.
      const header = JSON.stringify({ node, kind: 'event', event: p.event, except: p.exceptSocketId } satisfies ChannelHeader);
      sent = Promise.all(channels.map((channel, i) => redis.pubsub.publish(topicOf(channel), `${header}\n${p.head}${p.middles[i]}${p.tail}`).catch(publishFailed)));
    } else {
      // One message per Redis server, on its 'each' topic: it keeps its place among this node's messages to that
      // server's channel topics, so a channel's events still arrive in the order they were published.
      const header = JSON.stringify({ node, kind: 'each', event: p.event, except: p.exceptSocketId } satisfies EachHeader);
      sent = Promise.all(
        shards.map(({ via, indexes }) => {
          const body: EachBody = { channels: indexes.map((i) => channels[i]!), head: p.head, tail: p.tail, middles: indexes.map((i) => p.middles[i]!) };
          return redis.pubsub.publish(via, `${header}\n${JSON.stringify(body)}`).catch(publishFailed);
        }),
      );
    }
    return Promise.race([sent, publishDeadline()]).then(() => undefined);
  }

  return {
    async start(h) {
      if (handler !== undefined) throw new Error('realtime: a broker serves one node');
      handler = h;
      redis.pubsub.onMessage((topic, raw) => {
        if (topic.startsWith(eachTopics)) {
          const each = readEachMessage(raw);
          if (each === null || each.header.node === node) return;
          received += each.body.channels.length;
          const { channels, head, tail, middles } = each.body;
          h.publication(channels, { kind: 'each', event: each.header.event, head, tail, middles, exceptSocketId: each.header.except });
          return;
        }
        if (topic.startsWith(channelTopics)) {
          const message = readChannelMessage(raw);
          if (message === null || message.node === node) return;
          received++;
          h.publication([channelOf(topic)], message.publication);
          return;
        }
        if (topic !== nodeTopic) return;
        let message: NodeMessage;
        try {
          message = JSON.parse(raw) as NodeMessage;
        } catch {
          return;
        }
        if (message.node !== node) h.command(message);
      });
      await redis.pubsub.subscribe(nodeTopic);
      await listenToEachTopics();
      redis.pubsub.onShardsChanged(() => void listenToEachTopics());
      await occupancy.start();
    },

    publish(channels, publication) {
      handler?.publication(channels, publication);
      if (publication.kind === 'each') return publishEach(channels, publication);
      const except = publication.exceptSocketId;
      const message = channelMessage(publication.kind === 'event' ? { node, kind: 'event', event: publication.event, except } : { node, kind: 'frame', except }, publication);
      // One message per channel topic: only the nodes with subscribers of a channel receive its publications. The
      // caller waits for Redis at most until the deadline; the publications still go out if Redis answers later.
      const sent = Promise.all(channels.map((channel) => redis.pubsub.publish(topicOf(channel), message).catch(publishFailed)));
      return Promise.race([sent, publishDeadline()]).then(() => undefined);
    },

    subscribe(channel) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          logger.warn({ channel }, 'cross-node subscription slow (Redis away?); the subscriber is answered without it');
          resolve();
        }, LISTEN_TIMEOUT_MS);
      });
      const subscribed = redis.pubsub.subscribe(topicOf(channel)).then(
        () => undefined,
        (err: unknown) => logger.warn({ err: (err as Error).message, channel }, 'cross-node subscription failed'),
      );
      return Promise.race([subscribed, timedOut]).finally(() => clearTimeout(timer));
    },

    unsubscribe(channel) {
      redis.pubsub.unsubscribe(topicOf(channel)).catch((err: unknown) => logger.warn({ err: (err as Error).message, channel }, 'cross-node unsubscription failed'));
    },

    async command(command) {
      await redis.pubsub.publish(nodeTopic, JSON.stringify({ node, ...command } satisfies NodeMessage));
    },

    survey: (query) => occupancy.survey(query),

    received: () => received,
  };
}
