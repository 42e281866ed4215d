// Presence members shared through a real Redis (src/realtime/presence/redis.ts): what several nodes see
// when they join and leave, the member limit, and a dead node's members removed by the others' sweep.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { NODE_TIMEOUT_MS, redisPresence } from '../../src/realtime/presence/redis.js';
import { openRedis, slotGroup, type RedisConnections } from '../../src/redis/connections.js';
import { MACHINE_REDIS_URL } from '../../testkit/redis.js';

describe('presence members shared through Redis', () => {
  let redis: RedisConnections;
  let channelNo = 0;
  const channel = () => `presence-test-${++channelNo}`;

  before(async () => {
    redis = await openRedis(MACHINE_REDIS_URL, `parley-test-${randomBytes(4).toString('hex')}:`, pino({ level: 'silent' }));
  });
  after(async () => {
    const keys = await redis.commands.keys(`${redis.prefix}*`);
    if (keys.length > 0) await redis.commands.del(...keys);
    await redis.close();
  });

  test('a user held by two nodes is first on the first and gone only when both left', async () => {
    const [a, b] = [redisPresence(redis, randomUUID()), redisPresence(redis, randomUUID())];
    const room = channel();
    const first = await a.join(room, { userId: 'u1', info: { name: 'Ann' } }, 100);
    assert.deepEqual(first, { full: false, first: true, members: { ids: ['u1'], hash: { u1: { name: 'Ann' } }, count: 1 } });
    const second = await b.join(room, { userId: 'u1', info: { name: 'Other tab' } }, 100);
    assert.deepEqual(second, { full: false, first: false, members: { ids: ['u1'], hash: { u1: { name: 'Ann' } }, count: 1 } });

    assert.equal(await a.leave(room, 'u1'), false);
    assert.equal(await a.leave(room, 'u1'), false, 'a node that no longer holds the user changes nothing');
    assert.equal(await b.leave(room, 'u1'), true);
    assert.deepEqual(await a.members(room), { ids: [], hash: {}, count: 0 });
  });

  test('a node counts a user once however often it joins', async () => {
    const a = redisPresence(redis, randomUUID());
    const room = channel();
    await a.join(room, { userId: 'u1', info: null }, 100);
    assert.equal((await a.join(room, { userId: 'u1', info: null }, 100)).full, false);
    assert.equal(await a.leave(room, 'u1'), true);
  });

  test('a full channel refuses a new user but not another node of a present one', async () => {
    const [a, b] = [redisPresence(redis, randomUUID()), redisPresence(redis, randomUUID())];
    const room = channel();
    await a.join(room, { userId: 'u1', info: null }, 2);
    await a.join(room, { userId: 'u2', info: null }, 2);
    assert.deepEqual(await b.join(room, { userId: 'u3', info: null }, 2), { full: true });
    assert.equal((await b.join(room, { userId: 'u2', info: null }, 2)).full, false);
    assert.deepEqual((await b.members(room)).ids.sort(), ['u1', 'u2']);
  });

  test("a node that stopped heartbeating has its members removed by another node's sweep", async () => {
    const [dead, alive] = [redisPresence(redis, randomUUID()), redisPresence(redis, randomUUID())];
    const room = channel();
    await dead.join(room, { userId: 'gone', info: null }, 100);
    await dead.join(room, { userId: 'shared', info: null }, 100);
    await alive.join(room, { userId: 'shared', info: null }, 100);
    await alive.sweep();
    assert.deepEqual((await alive.members(room)).ids.sort(), ['gone', 'shared'], 'a live node is not swept');

    // The dead node (the only one holding "gone") last heartbeat, backdated past the timeout.
    const group = slotGroup(redis.prefix, 'presence');
    const nodes = `${group}:nodes`;
    const holders: string[] = [];
    for (const id of await redis.commands.zrange(nodes, '0', '-1')) {
      if (await redis.commands.sismember(`${group}:node:${id}`, `${room}\ngone`)) holders.push(id);
    }
    assert.equal(holders.length, 1);
    await redis.commands.zadd(nodes, Date.now() - NODE_TIMEOUT_MS - 1000, holders[0]!);
    assert.deepEqual(await alive.sweep(), [{ channel: room, userId: 'gone' }]);
    assert.deepEqual((await alive.members(room)).ids, ['shared']);
    assert.deepEqual(await alive.sweep(), [], 'swept once');
  });

  test('withdraw removes what a shutting-down node held and reports who is gone', async () => {
    const [leaving, staying] = [redisPresence(redis, randomUUID()), redisPresence(redis, randomUUID())];
    const room = channel();
    await leaving.join(room, { userId: 'only-here', info: null }, 100);
    await leaving.join(room, { userId: 'both', info: null }, 100);
    await staying.join(room, { userId: 'both', info: null }, 100);
    assert.deepEqual(await leaving.withdraw(), [{ channel: room, userId: 'only-here' }]);
    assert.deepEqual((await staying.members(room)).ids, ['both']);
  });
});
