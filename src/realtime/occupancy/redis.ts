// Channel occupancy in Redis, decided once for several nodes (see occupancy.ts). Each node counts itself once per channel it has subscribers on: a hash channel → number of nodes, and per node the set
// of channels it holds (so its share can be removed when it goes away). The node whose share makes the count
// 0 → 1 sends channel_occupied, the one that makes it 1 → 0 sends channel_vacated. Every change is one Lua
// script, so two nodes never both see "first" or "last". The same pattern as presence (../presence/redis.ts):
// nodes heartbeat into a sorted set, and the share of a node silent for NODE_TIMEOUT_MS is removed by the
// others (sweep), whose channels are then vacated if no other node holds them. Every key shares one hash tag
// (slotGroup), so the scripts' keys sit in one slot on a Redis Cluster.
import { slotGroup, type RedisConnections } from '../../redis/connections.js';
import { NODE_TIMEOUT_MS } from '../presence/redis.js';
import type { OccupancyTracker } from './occupancy.js';

const OCCUPY = `
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
return redis.call('HINCRBY', KEYS[1], ARGV[1], 1) == 1 and 1 or 0`;

const VACATE = `
if redis.call('SREM', KEYS[2], ARGV[1]) == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) > 0 then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1`;

const WITHDRAW = `
local vacated = {}
for _, channel in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if redis.call('HINCRBY', KEYS[1], channel, -1) <= 0 then
    redis.call('HDEL', KEYS[1], channel)
    table.insert(vacated, channel)
  end
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return vacated`;

/** `node`: this node's id (the one its broker and presence share use too). */
export function redisOccupancy(redis: RedisConnections, node: string): OccupancyTracker {
  const { commands } = redis;
  const group = slotGroup(redis.prefix, 'occupied');
  const counts = `${group}:n`;
  const held = (nodeId: string) => `${group}:node:${nodeId}`;
  const nodes = `${group}:nodes`;
  let heartbeatSent = false;
  const withdraw = async (nodeId: string) => (await commands.eval(WITHDRAW, 3, counts, held(nodeId), nodes, nodeId)) as string[];
  return {
    async occupy(channel) {
      if (!heartbeatSent) {
        // Alive before holding anything, so no other node sweeps this one's share as a dead node's.
        await commands.zadd(nodes, Date.now(), node);
        heartbeatSent = true;
      }
      return (await commands.eval(OCCUPY, 2, counts, held(node), channel)) === 1;
    },
    vacate: async (channel) => (await commands.eval(VACATE, 2, counts, held(node), channel)) === 1,
    async sweep() {
      const now = Date.now();
      await commands.zadd(nodes, now, node);
      heartbeatSent = true;
      const dead = await commands.zrangebyscore(nodes, '-inf', now - NODE_TIMEOUT_MS);
      const vacated: string[] = [];
      for (const nodeId of dead) if (nodeId !== node) vacated.push(...(await withdraw(nodeId)));
      return vacated;
    },
    withdraw: () => withdraw(node),
  };
}
