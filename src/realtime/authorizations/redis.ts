// Pending channel authorizations in Redis, shared by several nodes (see authorizations.ts): the HTTP auth request
// and the socket's subscribe may land on different nodes.
import { slotGroup, type RedisConnections } from '../../redis/connections.js';
import type { AuthorizationLedger } from './authorizations.js';

/**
 * Pending authorizations in Redis: one key per (socket, channel) with a TTL, and a set per (channel, user). A
 * channel's keys share a hash tag (slotGroup), so the transaction and the DEL below stay in one slot on a Redis
 * Cluster, and different channels spread over the masters.
 */
export function redisAuthorizationLedger(redis: RedisConnections, ttlMs: number): AuthorizationLedger {
  const group = (channel: string) => slotGroup(redis.prefix, `auth:${channel}`);
  const key = (socketId: string, channel: string) => `${group(channel)}:socket:${socketId}`;
  const userKey = (channel: string, userId: string) => `${group(channel)}:user:${userId}`;
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
