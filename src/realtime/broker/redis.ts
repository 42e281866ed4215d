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

/** On a channel's topic: a publication and the node it comes from. */
type ChannelMessage = { node: string; except?: string } & ({ kind: 'event'; event: string; data: string } | { kind: 'frame'; frame: string });

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
  // The braces make the whole channel name the topic's hash tag on a Cluster: one slot per channel.
  const topicOf = (channel: string) => `${channelTopics}{${channel}}`;
  const channelOf = (topic: string) => topic.slice(channelTopics.length + 1, -1);
  let handler: BrokerHandler | undefined;
  const occupancy = redisSurvey(redis, node, (query) => handler?.occupancy(query) ?? new Map(), logger);
  let received = 0;

  function send(topic: string, message: ChannelMessage): Promise<unknown> {
    const sent = redis.pubsub.publish(topic, JSON.stringify(message)).catch((err: unknown) => {
      // Delivery is at-most-once: other nodes' clients catch up over HTTP.
      logger.warn({ err: (err as Error).message }, 'cross-node publish failed');
    });
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, PUBLISH_WAIT_MS);
      timer.unref();
    });
    return Promise.race([sent, waited]).finally(() => clearTimeout(timer));
  }

  function onChannelMessage(channel: string, message: ChannelMessage): void {
    received++;
    const exceptSocketId = message.except;
    const publication: Publication =
      message.kind === 'event' ? { kind: 'event', event: message.event, data: message.data, exceptSocketId } : { kind: 'frame', frame: message.frame, exceptSocketId };
    handler?.publication([channel], publication);
  }

  return {
    async start(h) {
      if (handler !== undefined) throw new Error('realtime: a broker serves one node');
      handler = h;
      redis.pubsub.onMessage((topic, raw) => {
        const forChannel = topic.startsWith(channelTopics);
        if (!forChannel && topic !== nodeTopic) return;
        let message: ChannelMessage | NodeMessage;
        try {
          message = JSON.parse(raw) as ChannelMessage | NodeMessage;
        } catch {
          return;
        }
        if (message.node === node) return;
        if (forChannel) onChannelMessage(channelOf(topic), message as ChannelMessage);
        else h.command(message as NodeMessage);
      });
      await redis.pubsub.subscribe(nodeTopic);
      await occupancy.start();
    },

    publish(channels, publication) {
      handler?.publication(channels, publication);
      const except = publication.exceptSocketId;
      const body = publication.kind === 'event' ? { kind: 'event' as const, event: publication.event, data: publication.data } : { kind: 'frame' as const, frame: publication.frame };
      // One message per channel topic: only the nodes with subscribers of a channel receive its publications.
      return Promise.all(channels.map((channel) => send(topicOf(channel), { node, ...body, except }))).then(() => undefined);
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
