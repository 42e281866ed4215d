// The broker in Redis, for several nodes sharing one (see broker.ts). Each publication is handed to this node's handler at once and
// published on Redis for the others. A channel's traffic has a pub/sub topic of its own, and a node subscribes
// to it only while it has subscribers of that channel, so at N nodes a node handles the publications of its own
// sockets' channels, not every node's. The node's subscription_succeeded waits for that topic subscription
// (subscribe's promise), so an event published anywhere after a client saw itself subscribed reaches it.
// Orders for every node (unsubscribe a user, terminate their connections) go on one shared topic; occupancy
// questions on another (redis-survey.ts). Nodes skip their own messages by node id. On a Redis Cluster every
// topic is a shard channel (../../redis/pubsub.ts): a Pusher channel's topic, `<prefix>ch:{<channel>}`, lives on
// the master of its slot, so the channels spread over the masters and a node hears only its own channels.
// A large group's message is the exception: its dispatch (MessageSent and each member's InboxUpdated) goes to
// every node as one message per Redis server, and a receiver hands the parts of all servers over together, so
// a member's socket gets both frames in one write (EACH_AS_ONE_FROM, DISPATCH_HOLD_MS).
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
 * From this many channels up, an 'each' publication, with the rest of its dispatch (Broker.batch: a group's MessageSent
 * beside its members' InboxUpdated), goes to every node as one message per Redis server instead of one per channel:
 * every node then reads every channel's part, even those of channels it has no subscriber of, but a group of 10,000
 * costs three messages of its members' own parts (some 60 bytes each) instead of 10,000 of about 1.2 kB. Below it (a
 * group of ten), each channel's topic reaches only the nodes that want it.
 */
export const EACH_AS_ONE_FROM = 64;

/**
 * How long a node holds what it receives while a dispatch's other parts (sent at once to the other Redis servers of a
 * Cluster) are on their way, so that its sockets get the dispatch's frames in one write each; should a part never
 * come (a master failing over), what arrived is delivered when this ends.
 */
export const DISPATCH_HOLD_MS = 50;

/** A dispatch's publication, or the part of it for one Redis server's channels. */
type Item = { readonly channels: readonly string[]; readonly publication: Publication };

/**
 * A dispatch on a shard topic ('each' topics: one per Redis server, which every node listens to): a header line, then
 * the publications of its channels on that server, in order, as JSON. `parts`: how many servers it went to, so a
 * receiver knows when it has all of it. (Kind 'each', one publication, is what the release before sent.)
 */
type DispatchHeader = { node: string; kind: 'dispatch'; id: number; parts: number } | { node: string; kind: 'each'; event: string; except?: string };
type WireItem = { channels: string[]; except?: string } & (
  | { kind: 'event'; event: string; data: string }
  | { kind: 'frame'; frame: string }
  | { kind: 'each'; event: string; head: string; tail: string; middles: string[] }
);

/** Item `item`'s channels `picked` (indexes), as they travel. */
function wireItem({ channels, publication: p }: Item, picked: readonly number[]): WireItem {
  const some = picked.map((j) => channels[j]!);
  const except = p.exceptSocketId;
  if (p.kind === 'event') return { channels: some, except, kind: 'event', event: p.event, data: p.data };
  if (p.kind === 'frame') return { channels: some, except, kind: 'frame', frame: p.frame };
  return { channels: some, except, kind: 'each', event: p.event, head: p.head, tail: p.tail, middles: picked.map((j) => p.middles[j]!) };
}

function itemOf(w: WireItem): Item | null {
  if (!Array.isArray(w.channels)) return null;
  const exceptSocketId = w.except;
  if (w.kind === 'event' && typeof w.data === 'string') return { channels: w.channels, publication: { kind: 'event', event: w.event, data: w.data, exceptSocketId } };
  if (w.kind === 'frame' && typeof w.frame === 'string') return { channels: w.channels, publication: { kind: 'frame', frame: w.frame, exceptSocketId } };
  if (w.kind === 'each' && Array.isArray(w.middles) && w.middles.length === w.channels.length)
    return { channels: w.channels, publication: { kind: 'each', event: w.event, head: w.head, tail: w.tail, middles: w.middles, exceptSocketId } };
  return null;
}

/** A message of an 'each' topic; null if it is not one. */
function readDispatch(raw: string): { node: string; key?: string; parts: number; items: Item[] } | null {
  const end = raw.indexOf('\n');
  if (end === -1) return null;
  try {
    const header = JSON.parse(raw.slice(0, end)) as DispatchHeader;
    const body = JSON.parse(raw.slice(end + 1)) as unknown;
    if (header.kind === 'each') {
      const b = body as { channels: string[]; head: string; tail: string; middles: string[] };
      const item = itemOf({ kind: 'each', event: header.event, except: header.except, ...b });
      return item === null ? null : { node: header.node, parts: 1, items: [item] };
    }
    if (header.kind !== 'dispatch' || !Array.isArray(body)) return null;
    const items = (body as WireItem[]).map(itemOf);
    if (items.some((item) => item === null)) return null;
    return { node: header.node, key: `${header.node}:${header.id}`, parts: header.parts, items: items as Item[] };
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

  /** A publication's share for the other nodes, on its channels' topics: only the nodes that want a channel receive it. */
  function relay({ channels, publication: p }: Item): Promise<unknown> {
    const except = p.exceptSocketId;
    if (p.kind === 'each') {
      const header = JSON.stringify({ node, kind: 'event', event: p.event, except } satisfies ChannelHeader);
      return Promise.all(channels.map((channel, i) => redis.pubsub.publish(topicOf(channel), `${header}\n${p.head}${p.middles[i]}${p.tail}`).catch(publishFailed)));
    }
    const message = channelMessage(p.kind === 'event' ? { node, kind: 'event', event: p.event, except } : { node, kind: 'frame', except }, p);
    return Promise.all(channels.map((channel) => redis.pubsub.publish(topicOf(channel), message).catch(publishFailed)));
  }

  /**
   * A dispatch as one message per Redis server, on its 'each' topic, each with the dispatch's publications to that
   * server's channels in order: it keeps its place among this node's messages to that server's channel topics, so a
   * channel's events still arrive in the order they were published. Null while the map of servers is not known.
   */
  function relayAsOne(items: readonly Item[]): Promise<unknown> | null {
    const topics: string[] = [];
    const owners: (readonly [item: number, channel: number])[] = [];
    items.forEach((item, i) => item.channels.forEach((channel, j) => (topics.push(topicOf(channel)), owners.push([i, j]))));
    const shards = redis.pubsub.shards(eachTopics, topics);
    if (shards === null) return null;
    const header = JSON.stringify({ node, kind: 'dispatch', id: ++dispatches, parts: shards.length } satisfies DispatchHeader);
    return Promise.all(
      shards.map(({ via, indexes }) => {
        // indexes ascend, and an item's topics follow each other: the items keep their order.
        const picked = new Map<number, number[]>();
        for (const k of indexes) {
          const [i, j] = owners[k]!;
          picked.get(i)?.push(j) ?? picked.set(i, [j]);
        }
        const body = [...picked].map(([i, js]) => wireItem(items[i]!, js));
        return redis.pubsub.publish(via, `${header}\n${JSON.stringify(body)}`).catch(publishFailed);
      }),
    );
  }

  /**
   * The other nodes' share of a dispatch: one promise per item, settled once Redis has it. With a large group's event
   * in it, every item of the dispatch rides along in its server's message (so each keeps its place), even a small
   * group's that group commit put in the same batch.
   */
  function send(items: readonly Item[]): Promise<unknown>[] {
    if (items.some(({ channels, publication }) => publication.kind === 'each' && channels.length >= EACH_AS_ONE_FROM)) {
      const sent = relayAsOne(items);
      if (sent !== null) return items.map(() => sent);
    }
    return items.map(relay);
  }

  /** The caller waits for Redis at most until the deadline; the publications still go out if Redis answers later. */
  const waitAtMost = (sent: Promise<unknown>) => Promise.race([sent, publishDeadline()]).then(() => undefined);

  // Receiving. While a dispatch's parts from several servers are awaited, everything received is held, in the order
  // it came (a channel's later events must not overtake its held ones), and handed to the node at once when the
  // last part arrives or DISPATCH_HOLD_MS pass.
  const awaited = new Map<string, number>(); // parts still to come, by dispatch
  const settled = new Set<string>(); // the last dispatches complete or given up on: a late part is delivered at once
  let held: Item[] | null = null;
  let holdTimer: NodeJS.Timeout | undefined;

  function settle(key: string): void {
    settled.add(key);
    if (settled.size > 1_000) settled.delete(settled.values().next().value!);
  }

  function hand(items: readonly Item[]): void {
    for (const { channels, publication } of items) handler?.publication(channels, publication);
  }

  function release(): void {
    clearTimeout(holdTimer);
    holdTimer = undefined;
    const items = held ?? [];
    held = null;
    hand(items);
  }

  function giveUp(): void {
    for (const key of awaited.keys()) settle(key);
    awaited.clear();
    release();
  }

  function arrive(items: Item[], dispatch?: { key: string; parts: number }): void {
    if (dispatch !== undefined && dispatch.parts > 1 && !settled.has(dispatch.key)) {
      const left = (awaited.get(dispatch.key) ?? dispatch.parts) - 1;
      if (left > 0) awaited.set(dispatch.key, left);
      else (awaited.delete(dispatch.key), settle(dispatch.key));
    }
    if (held === null && awaited.size === 0) return hand(items);
    (held ??= []).push(...items);
    if (awaited.size === 0) release();
    else holdTimer ??= setTimeout(giveUp, DISPATCH_HOLD_MS).unref();
  }

  // Sending. Inside batch(), publications are gathered and sent together when it ends.
  type Gathered = { item: Item; sent: (sent: Promise<unknown>) => void }[];
  let gathering = null as Gathered | null;
  let dispatches = 0;

  return {
    async start(h) {
      if (handler !== undefined) throw new Error('realtime: a broker serves one node');
      handler = h;
      redis.pubsub.onMessage((topic, raw) => {
        if (topic.startsWith(eachTopics)) {
          const dispatch = readDispatch(raw);
          if (dispatch === null || dispatch.node === node) return;
          for (const item of dispatch.items) received += item.channels.length;
          arrive(dispatch.items, dispatch.key === undefined ? undefined : { key: dispatch.key, parts: dispatch.parts });
          return;
        }
        if (topic.startsWith(channelTopics)) {
          const message = readChannelMessage(raw);
          if (message === null || message.node === node) return;
          received++;
          arrive([{ channels: [channelOf(topic)], publication: message.publication }]);
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
      const item = { channels, publication };
      if (gathering === null) return waitAtMost(send([item])[0]!);
      const gathered = gathering;
      return waitAtMost(new Promise<unknown>((sent) => gathered.push({ item, sent })));
    },

    batch(fn) {
      if (gathering !== null) return fn();
      const gathered: Gathered = (gathering = []);
      try {
        return fn();
      } finally {
        gathering = null;
        if (gathered.length > 0) send(gathered.map((g) => g.item)).forEach((sent, i) => gathered[i]!.sent(sent));
      }
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
