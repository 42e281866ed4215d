// Channel occupancy shared through a real Redis (src/realtime/occupancy/redis.ts), which decides the
// channel_occupied and channel_vacated webhooks once per cluster: first and last across nodes, a node's
// repeated calls counted once, a node's withdrawal, and a dead node's channels vacated by the others' sweep.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { redisOccupancy } from '../../src/realtime/occupancy/redis.js';
import { NODE_TIMEOUT_MS } from '../../src/realtime/presence/redis.js';
import { openRedis, slotGroup, type RedisConnections } from '../../src/redis/connections.js';
import { MACHINE_REDIS_URL } from '../../testkit/redis.js';

describe('channel occupancy shared through Redis', () => {
  let redis: RedisConnections;

  before(async () => {
    redis = await openRedis(MACHINE_REDIS_URL, `parley-test-${randomBytes(4).toString('hex')}:`, pino({ level: 'silent' }));
  });
  after(async () => {
    const keys = await redis.commands.keys(`${redis.prefix}*`);
    if (keys.length > 0) await redis.commands.del(...keys);
    await redis.close();
  });

  test('occupied on the first node only, vacated by the last node only; a node counts once', async () => {
    const [a, b] = [redisOccupancy(redis, 'a'), redisOccupancy(redis, 'b')];
    assert.equal(await a.occupy('news'), true);
    assert.equal(await a.occupy('news'), false, 'the same node again changes nothing');
    assert.equal(await b.occupy('news'), false);
    assert.equal(await a.vacate('news'), false);
    assert.equal(await a.vacate('news'), false, 'a node that no longer holds it changes nothing');
    assert.equal(await b.vacate('news'), true);
    assert.equal(await a.occupy('news'), true, 'occupied again after being vacated');
    assert.equal(await a.vacate('news'), true);
  });

  test('a node that withdraws vacates the channels only it held', async () => {
    const [a, b] = [redisOccupancy(redis, 'wa'), redisOccupancy(redis, 'wb')];
    await a.occupy('only-a');
    await a.occupy('shared');
    await b.occupy('shared');
    assert.deepEqual(await a.withdraw(), ['only-a']);
    assert.equal(await b.vacate('shared'), true);
  });

  test("a dead node's channels are vacated by another node's sweep", async () => {
    const [dead, alive] = [redisOccupancy(redis, 'dead'), redisOccupancy(redis, 'alive')];
    await dead.occupy('ghost');
    await dead.occupy('both');
    await alive.occupy('both');
    assert.deepEqual(await alive.sweep(), [], 'a live node is not swept');
    await redis.commands.zadd(`${slotGroup(redis.prefix, 'occupied')}:nodes`, Date.now() - NODE_TIMEOUT_MS - 1000, 'dead');
    assert.deepEqual(await alive.sweep(), ['ghost']);
    assert.equal(await alive.vacate('both'), true);
  });
});
