// Pending channel authorizations in Redis, shared by several nodes (see authorizations.ts): the HTTP auth request
// and the socket's subscribe may land on different nodes.
import { slotGroup, type RedisConnections } from '../../redis/connections.js';
import type { AuthorizationLedger } from './authorizations.js';

/**
 * Remembers one authorization: the socket's key and its place in the user's set, with one TTL, atomically. One script
 * call rather than a MULTI: a MULTI is written to Redis on its own, a script call goes with the other commands of the
 * moment in one write (auto-pipelining), which counts when thousands of clients authorize at once.
 */
const REMEMBER_SCRIPT = `redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`;

type RememberCommand = (socketKey: string, userKey: string, userId: string, ttlMs: string, socketId: string) => Promise<unknown>;

/**
 * Pending authorizations in Redis: one key per (socket, channel) with a TTL, and a set per (channel, user). A
 * channel's keys share a hash tag (slotGroup), so the script and the DEL below stay in one slot on a Redis
 * Cluster, and different channels spread over the masters.
 */
export function redisAuthorizationLedger(redis: RedisConnections, ttlMs: number): AuthorizationLedger {
  const group = (channel: string) => slotGroup(redis.prefix, `auth:${channel}`);
  const key = (socketId: string, channel: string) => `${group(channel)}:socket:${socketId}`;
  const userKey = (channel: string, userId: string) => `${group(channel)}:user:${userId}`;
  const commands = redis.commands as unknown as { parleyRememberAuthorization?: RememberCommand; defineCommand(name: string, def: { numberOfKeys: number; lua: string }): void };
  if (!commands.parleyRememberAuthorization) commands.defineCommand('parleyRememberAuthorization', { numberOfKeys: 2, lua: REMEMBER_SCRIPT });
  return {
    async remember(socketId, channel, userId) {
      await commands.parleyRememberAuthorization!(key(socketId, channel), userKey(channel, userId), userId, String(ttlMs), socketId);
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
