// Presence members in Redis, shared by several nodes (see presence.ts). Per presence channel: a hash user → number
// of nodes holding the user, and a hash user → user_info (of the user's first connection). Per node: the set of
// "channel\nuser" it holds, so its share can be removed when it dies. Nodes heartbeat into a sorted set; one
// missing for NODE_TIMEOUT_MS is dead. Every change is one Lua script, so two nodes never both see "first".
// WITHDRAW builds the channels' key names itself, so every key of this part shares one hash tag (slotGroup):
// on a Redis Cluster they all sit in one slot, where a script may touch keys it was not given. It is small (an
// entry per member and node); the channels' traffic, the heavy part, spreads over the masters (../broker/).
import type { PresenceSnapshot } from '../channels.js';
import type { PresenceManager } from './presence.js';
import { slotGroup, type RedisConnections } from '../../redis/connections.js';

/** A node silent this long has its presence share removed by the others. */
export const NODE_TIMEOUT_MS = 30_000;

const JOIN = `
if redis.call('SADD', KEYS[3], ARGV[4]) == 0 then return {0, redis.call('HGETALL', KEYS[2])} end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then
  redis.call('SREM', KEYS[3], ARGV[4])
  return {-1}
end
local count = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if count == 1 then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
return {count, redis.call('HGETALL', KEYS[2])}`;

const LEAVE = `
if redis.call('SREM', KEYS[3], ARGV[2]) == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1`;

/** KEYS: the node's set, the nodes zset. ARGV: the keys' common start (slotGroup), node id. Returns the "channel\nuser" no node holds any more. */
const WITHDRAW = `
local removed = {}
for _, m in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local sep = string.find(m, '\\n', 1, true)
  local channel = string.sub(m, 1, sep - 1)
  local user = string.sub(m, sep + 1)
  local counts = ARGV[1] .. channel .. ':n'
  if redis.call('HINCRBY', counts, user, -1) <= 0 then
    redis.call('HDEL', counts, user)
    redis.call('HDEL', ARGV[1] .. channel .. ':i', user)
    table.insert(removed, m)
  end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
return removed`;

/** `node`: this node's id (the one its broker and occupancy share use too). */
export function redisPresence(redis: RedisConnections, node: string): PresenceManager {
  const { commands } = redis;
  const group = slotGroup(redis.prefix, 'presence');
  const channelKeys = `${group}:ch:`;
  const counts = (channel: string) => `${channelKeys}${channel}:n`;
  const infos = (channel: string) => `${channelKeys}${channel}:i`;
  const held = (nodeId: string) => `${group}:node:${nodeId}`;
  const nodes = `${group}:nodes`;
  let heartbeatSent = false;

  async function withdraw(nodeId: string) {
    const removed = (await commands.eval(WITHDRAW, 2, held(nodeId), nodes, channelKeys, nodeId)) as string[];
    return removed.map((m) => {
      const sep = m.indexOf('\n');
      return { channel: m.slice(0, sep), userId: m.slice(sep + 1) };
    });
  }

  return {
    async join(channel, member, maxMembers) {
      if (!heartbeatSent) {
        // Alive before holding anything, so no other node sweeps this one's share as a dead node's.
        await commands.zadd(nodes, Date.now(), node);
        heartbeatSent = true;
      }
      const entry = `${channel}\n${member.userId}`;
      const result = (await commands.eval(JOIN, 3, counts(channel), infos(channel), held(node), member.userId, JSON.stringify(member.info), maxMembers, entry)) as [number, string[]?];
      if (result[0] === -1) return { full: true };
      return { full: false, first: result[0] === 1, members: snapshot(result[1] ?? []) };
    },
    async leave(channel, userId) {
      return (await commands.eval(LEAVE, 3, counts(channel), infos(channel), held(node), userId, `${channel}\n${userId}`)) === 1;
    },
    async members(channel) {
      return snapshot(await commands.hgetall(infos(channel)).then((h) => Object.entries(h).flat()));
    },
    async sweep() {
      const now = Date.now();
      await commands.zadd(nodes, now, node);
      heartbeatSent = true;
      const dead = await commands.zrangebyscore(nodes, '-inf', now - NODE_TIMEOUT_MS);
      const removed = [];
      for (const nodeId of dead) if (nodeId !== node) removed.push(...(await withdraw(nodeId)));
      return removed;
    },
    withdraw: () => withdraw(node),
  };
}

/** HGETALL's flat [user, info, user, info, ...] → the presence part of subscription_succeeded. */
function snapshot(flat: string[]): PresenceSnapshot {
  const ids: string[] = [];
  const hash: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const userId = flat[i]!;
    ids.push(userId);
    hash[userId] = JSON.parse(flat[i + 1]!) as unknown;
  }
  return { ids, hash, count: ids.length };
}
