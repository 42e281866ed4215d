// Several nodes: each event is delivered to this node's sockets at once and published on Redis for the
// others, which deliver it to theirs. Nodes skip their own messages by node id. Pending channel
// authorizations live in Redis too, since the auth request and the socket may reach different nodes.
// For the Pusher HTTP API it is also the cluster: terminate_connections reaches every node, and channel
// occupancy is asked of every node (redis-occupancy.ts).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Fanout } from '../../events/broadcaster.js';
import type { RedisConnections } from '../../store/redis.js';
import type { Cluster } from '../api-backend.js';
import type { RealtimeServer, RelayedFrame } from '../index.js';
import type { AuthorizationLedger } from '../remembered-subscribers.js';
import { redisOccupancy } from './redis-occupancy.js';

type Message =
  | { node: string; kind: 'event'; channels: readonly string[]; event: string; data: string; except?: string }
  | { node: string; kind: 'unsubscribe'; channel: string; userId: string }
  | { node: string; kind: 'frame'; relayed: RelayedFrame }
  | { node: string; kind: 'terminate'; userId: string };

export function redisFanout(redis: RedisConnections, local: RealtimeServer, logger: Logger): Fanout & Cluster & { start(): Promise<void> } {
  const node = randomUUID();
  const topic = `${redis.prefix}fanout`;
  const occupancy = redisOccupancy(redis, local, node, logger);

  function publish(message: Message): Promise<unknown> {
    return redis.commands.publish(topic, JSON.stringify(message)).catch((err: unknown) => {
      // Delivery is at-most-once: other nodes' clients catch up over HTTP.
      logger.warn({ err: (err as Error).message }, 'cross-node publish failed');
    });
  }

  return {
    async start() {
      redis.subscriber.on('message', (channel: string, raw: string) => {
        if (channel !== topic) return;
        let message: Message;
        try {
          message = JSON.parse(raw) as Message;
        } catch {
          return;
        }
        if (message.node === node) return;
        if (message.kind === 'event') local.publish(message.channels, message.event, message.data, message.except);
        else if (message.kind === 'frame') local.deliverRelayed(message.relayed);
        else if (message.kind === 'terminate') local.terminateUserConnections(message.userId);
        else {
          // The sockets are dropped at once; forgetting pending authorizations needs Redis commands, which may
          // fail while Redis reconnects: logged, never an unhandled rejection (that would end the process).
          Promise.resolve(local.unsubscribeUser(message.channel, message.userId)).catch((err: unknown) =>
            logger.warn({ err: (err as Error).message, channel: message.channel }, 'cross-node unsubscribe incomplete'),
          );
        }
      });
      // Whispers and presence changes reach the channel's subscribers on the other nodes too.
      local.relayFramesTo((relayed) => void publish({ node, kind: 'frame', relayed }));
      await redis.subscriber.subscribe(topic);
      await occupancy.start();
    },
    batch: (fn) => local.batch(fn),
    async publish(channels, event, data, exceptSocketId) {
      local.publish(channels, event, data, exceptSocketId);
      await publish({ node, kind: 'event', channels, event, data, except: exceptSocketId });
    },
    async unsubscribeUser(channel, userId) {
      // The other nodes are told even when this node's part fails (voiding authorizations needs Redis too).
      const [here] = await Promise.allSettled([local.unsubscribeUser(channel, userId), publish({ node, kind: 'unsubscribe', channel, userId })]);
      if (here.status === 'rejected') throw here.reason;
    },
    occupancy: (query) => occupancy.occupancy(query),
    async terminateUserConnections(userId) {
      local.terminateUserConnections(userId);
      // Unlike an event, a lost termination is an error the caller must see (the user stays connected elsewhere).
      await redis.commands.publish(topic, JSON.stringify({ node, kind: 'terminate', userId } satisfies Message));
    },
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
