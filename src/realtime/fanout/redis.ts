// Several nodes: each event is delivered to this node's sockets at once and published on Redis for the
// others. A channel's traffic has a pub/sub topic of its own, and a node subscribes to it only while it has
// subscribers of that channel (the node's ClusterLink), so at N nodes a node handles the events of its own
// sockets' channels, not every node's. Subscription_succeeded waits for that topic subscription, so an event
// published anywhere after a client saw itself subscribed reaches it. Orders for every node (unsubscribe a
// user, terminate their connections) go on one shared topic. Nodes skip their own messages by node id.
// Pending channel authorizations live in Redis too, since the auth request and the socket may reach different
// nodes. For the Pusher HTTP API it is also the cluster: terminate_connections reaches every node, and channel
// occupancy is asked of every node (redis-occupancy.ts).
import type { Logger } from 'pino';
import type { Fanout } from '../../events/broadcaster.js';
import type { RedisConnections } from '../../store/redis.js';
import type { Cluster } from '../api-backend.js';
import type { RealtimeServer } from '../index.js';
import type { AuthorizationLedger } from '../remembered-subscribers.js';
import { redisOccupancy } from './redis-occupancy.js';

/** On a channel's topic: an event (built into a frame by each node) or a ready frame (client event, presence change). */
type ChannelMessage =
  | { node: string; kind: 'event'; event: string; data: string; except?: string }
  | { node: string; kind: 'frame'; frame: string; except?: string };

/** On the shared topic, for every node. */
type NodeMessage = { node: string; kind: 'unsubscribe'; channel: string; userId: string } | { node: string; kind: 'terminate'; userId: string };

/** How long a new subscriber waits for its channel's topic before it is told it is subscribed anyway (Redis away). */
const LISTEN_TIMEOUT_MS = 2_000;

/** What this node received from the others, for /metrics: messages on its channels' topics. */
export interface FanoutStats {
  received: number;
}

export function redisFanout(
  redis: RedisConnections,
  local: RealtimeServer,
  node: string,
  logger: Logger,
): Fanout & Cluster & { start(): Promise<void>; stats(): FanoutStats } {
  const nodeTopic = `${redis.prefix}fanout`;
  const channelTopics = `${redis.prefix}ch:`;
  const topicOf = (channel: string) => channelTopics + channel;
  const occupancy = redisOccupancy(redis, local, node, logger);
  const stats: FanoutStats = { received: 0 };

  function publish(topic: string, message: ChannelMessage | NodeMessage): Promise<unknown> {
    return redis.commands.publish(topic, JSON.stringify(message)).catch((err: unknown) => {
      // Delivery is at-most-once: other nodes' clients catch up over HTTP.
      logger.warn({ err: (err as Error).message }, 'cross-node publish failed');
    });
  }

  function onChannelMessage(channel: string, message: ChannelMessage): void {
    stats.received++;
    if (message.kind === 'event') local.publish([channel], message.event, message.data, message.except);
    else local.deliverRelayed({ channel, frame: message.frame, exceptSocketId: message.except });
  }

  function onNodeMessage(message: NodeMessage): void {
    if (message.kind === 'terminate') {
      local.terminateUserConnections(message.userId);
      return;
    }
    // The sockets are dropped at once; forgetting pending authorizations needs Redis commands, which may
    // fail while Redis reconnects: logged, never an unhandled rejection (that would end the process).
    Promise.resolve(local.unsubscribeUser(message.channel, message.userId)).catch((err: unknown) =>
      logger.warn({ err: (err as Error).message, channel: message.channel }, 'cross-node unsubscribe incomplete'),
    );
  }

  return {
    async start() {
      redis.subscriber.on('message', (topic: string, raw: string) => {
        const forChannel = topic.startsWith(channelTopics);
        if (!forChannel && topic !== nodeTopic) return;
        let message: ChannelMessage | NodeMessage;
        try {
          message = JSON.parse(raw) as ChannelMessage | NodeMessage;
        } catch {
          return;
        }
        if (message.node === node) return;
        if (forChannel) onChannelMessage(topic.slice(channelTopics.length), message as ChannelMessage);
        else onNodeMessage(message as NodeMessage);
      });
      await redis.subscriber.subscribe(nodeTopic);
      local.joinCluster({
        // Whispers and presence changes reach the channel's subscribers on the other nodes too.
        relay: ({ channel, frame, exceptSocketId }) => void publish(topicOf(channel), { node, kind: 'frame', frame, except: exceptSocketId }),
        listen(channel) {
          let timer: NodeJS.Timeout | undefined;
          const timedOut = new Promise<void>((resolve) => {
            timer = setTimeout(() => {
              logger.warn({ channel }, 'cross-node subscription slow (Redis away?); the subscriber is answered without it');
              resolve();
            }, LISTEN_TIMEOUT_MS);
          });
          const subscribed = redis.subscriber.subscribe(topicOf(channel)).then(
            () => undefined,
            (err: unknown) => logger.warn({ err: (err as Error).message, channel }, 'cross-node subscription failed'),
          );
          return Promise.race([subscribed, timedOut]).finally(() => clearTimeout(timer));
        },
        unlisten(channel) {
          redis.subscriber.unsubscribe(topicOf(channel)).catch((err: unknown) => logger.warn({ err: (err as Error).message, channel }, 'cross-node unsubscription failed'));
        },
      });
      await occupancy.start();
    },
    batch: (fn) => local.batch(fn),
    async publish(channels, event, data, exceptSocketId) {
      local.publish(channels, event, data, exceptSocketId);
      // One message per channel topic: only the nodes with subscribers of a channel receive its events.
      await Promise.all(channels.map((channel) => publish(topicOf(channel), { node, kind: 'event', event, data, except: exceptSocketId })));
    },
    async unsubscribeUser(channel, userId) {
      // The other nodes are told even when this node's part fails (voiding authorizations needs Redis too).
      const [here] = await Promise.allSettled([local.unsubscribeUser(channel, userId), publish(nodeTopic, { node, kind: 'unsubscribe', channel, userId })]);
      if (here.status === 'rejected') throw here.reason;
    },
    occupancy: (query) => occupancy.occupancy(query),
    async terminateUserConnections(userId) {
      local.terminateUserConnections(userId);
      // Unlike an event, a lost termination is an error the caller must see (the user stays connected elsewhere).
      await redis.commands.publish(nodeTopic, JSON.stringify({ node, kind: 'terminate', userId } satisfies NodeMessage));
    },
    stats: () => ({ ...stats }),
  };
}

/** Pending authorizations in Redis: one key per (socket, channel) with a TTL, and a set per (channel, user). */
export function redisAuthorizationLedger(redis: RedisConnections, ttlMs: number): AuthorizationLedger {
  const key = (socketId: string, channel: string) => `${redis.prefix}auth:${socketId}:${channel}`;
  const userKey = (channel: string, userId: string) => `${redis.prefix}auth-user:${channel}:${userId}`;
  return {
    async remember(socketId, channel, userId) {
      await redis.commands
        .multi()
        .set(key(socketId, channel), userId, 'PX', ttlMs)
        .sadd(userKey(channel, userId), socketId)
        .pexpire(userKey(channel, userId), ttlMs)
        .exec();
    },
    async claim(socketId, channel) {
      const userId = await redis.commands.getdel(key(socketId, channel));
      return userId ?? undefined;
    },
    async forgetUser(channel, userId) {
      const sockets = await redis.commands.smembers(userKey(channel, userId));
      if (sockets.length > 0) await redis.commands.del(...sockets.map((s) => key(s, channel)), userKey(channel, userId));
    },
    clear() {},
  };
}
