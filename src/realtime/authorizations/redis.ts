// Pending channel authorizations in Redis, shared by several nodes (see authorizations.ts): the HTTP auth request
// and the socket's subscribe may land on different nodes.
import type { RedisConnections } from '../../redis/connections.js';
import type { AuthorizationLedger } from './authorizations.js';

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
