// The rate limiter on its own: a sliding minute (at most N in any 60 s, Retry-After when the oldest leaves it),
// refused requests not counted, 0 off; in memory with a fake clock, and in Redis (shared by two limiters as by
// two nodes, and falling back to the node's own count while Redis is away).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { ChatError } from '../../src/contract/api-errors.js';
import { memoryRateLimiter, NO_RATE_LIMITS, redisRateLimiter, WINDOW_MS, type RateLimiter, type RateLimits } from '../../src/chat/rate-limiter.js';
import { openRedis, type RedisConnections } from '../../src/redis/connections.js';
import { deleteKeys, MACHINE_REDIS_URL, RedisServer } from '../../testkit/redis.js';

const LIMITS: RateLimits = { ...NO_RATE_LIMITS, edit: 3, upload: 1, group_create: 2 };

/** The Retry-After of a refusal, or null when the request was counted. */
async function attempt(limiter: RateLimiter, action: 'edit' | 'upload' | 'send' | 'group_create', subject: number | string): Promise<number | null> {
  try {
    await limiter.consume(action, subject);
    return null;
  } catch (err) {
    assert.ok(err instanceof ChatError, String(err));
    assert.equal(err.code, 'rate_limited');
    assert.equal(err.status, 429);
    return err.details.retryAfterSeconds!;
  }
}

/** The same behaviour, whatever keeps the counts. clock.t is the time every limiter made by make() sees. */
function behaves(make: (clock: { t: number }) => Promise<RateLimiter>): void {
  test('N in any 60 s: the next is refused with Retry-After until the oldest leaves the window', async () => {
    const clock = { t: 1_000_000 * WINDOW_MS + 50_000 }; // 10 s before a minute turns: the window slides over it
    const limiter = await make(clock);
    assert.equal(await attempt(limiter, 'edit', 1), null);
    clock.t += 20_000;
    assert.equal(await attempt(limiter, 'edit', 1), null);
    assert.equal(await attempt(limiter, 'edit', 1), null);
    assert.equal(await attempt(limiter, 'edit', 1), 40, 'the first one leaves the window in 40 s');
    clock.t += 39_000;
    assert.equal(await attempt(limiter, 'edit', 1), 1, 'refused ones are not counted: still the first one');
    clock.t += 1_000;
    assert.equal(await attempt(limiter, 'edit', 1), null, 'exactly 60 s after the first');
    assert.equal(await attempt(limiter, 'edit', 1), 20, 'then the second and third, 20 s later');
    assert.equal(await attempt(limiter, 'edit', 2), null, 'another user has a count of their own');
    assert.equal(await attempt(limiter, 'upload', 1), null, 'and another action too');
    assert.equal(await attempt(limiter, 'upload', 1), 60);
  });

  test('creating groups counts over a sliding hour: kept across the turns of minutes, Retry-After up to an hour', async () => {
    const hour = 60 * WINDOW_MS;
    const clock = { t: 1_000 * hour + 10 * WINDOW_MS };
    const limiter = await make(clock);
    assert.equal(await attempt(limiter, 'group_create', 1), null);
    clock.t += 30 * WINDOW_MS;
    assert.equal(await attempt(limiter, 'group_create', 1), null);
    clock.t += 5 * WINDOW_MS;
    assert.equal(await attempt(limiter, 'group_create', 1), 25 * 60, 'the first leaves the hour in 25 minutes');
    clock.t += 25 * WINDOW_MS - 1_000;
    assert.equal(await attempt(limiter, 'group_create', 1), 1);
    clock.t += 1_000;
    assert.equal(await attempt(limiter, 'group_create', 1), null, 'an hour after the first');
    assert.equal(await attempt(limiter, 'group_create', 1), 30 * 60);
    assert.equal(await attempt(limiter, 'edit', 1), null, 'the per-minute limits are not affected');
  });

  test('a limit of 0 is off', async () => {
    const limiter = await make({ t: Date.now() });
    for (let i = 0; i < 1000; i++) assert.equal(await attempt(limiter, 'send', 1), null);
  });
}

describe('in memory', () => {
  behaves(async (clock) => memoryRateLimiter(LIMITS, () => clock.t));

  test('a key unused for a minute is forgotten; its requests had left the window anyway', async () => {
    const clock = { t: 5 * WINDOW_MS };
    const limiter = memoryRateLimiter({ ...NO_RATE_LIMITS, edit: 1 }, () => clock.t);
    assert.equal(await attempt(limiter, 'edit', 1), null);
    clock.t += WINDOW_MS - 1;
    assert.equal(await attempt(limiter, 'edit', 1), 1);
    clock.t += 2 * WINDOW_MS;
    assert.equal(await attempt(limiter, 'edit', 1), null);
  });
});

describe('in Redis', () => {
  const prefix = `parley-test-ratelimit-${randomBytes(4).toString('hex')}:`;
  const connections: RedisConnections[] = [];
  const connect = async (url = MACHINE_REDIS_URL) => {
    const redis = await openRedis(url, prefix, pino({ level: 'silent' }));
    connections.push(redis);
    return redis;
  };
  after(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await deleteKeys(MACHINE_REDIS_URL, prefix);
  });

  let round = 0;
  // A subject space of each test's own, as the clock of a test starts where it likes.
  behaves(async (clock) => {
    const redis = await connect();
    await deleteKeys(MACHINE_REDIS_URL, prefix);
    round++;
    return redisRateLimiter(redis, LIMITS, { now: () => clock.t, onError: (err) => assert.fail(`Redis failed: ${String(err)} (round ${round})`) });
  });

  test('two limiters on one Redis, as two nodes, share one count', async () => {
    const [a, b] = [redisRateLimiter(await connect(), LIMITS), redisRateLimiter(await connect(), LIMITS)];
    const user = 9001;
    assert.equal(await attempt(a, 'edit', user), null);
    assert.equal(await attempt(b, 'edit', user), null);
    assert.equal(await attempt(a, 'edit', user), null);
    assert.ok((await attempt(b, 'edit', user))! >= 59, 'the fourth, on the other node, is refused');
    assert.ok((await attempt(a, 'edit', user))! >= 59);
  });

  test('Redis away: each node limits on its own meanwhile (fail open to the per-node limit), and says so', async () => {
    const server = await RedisServer.start();
    let redis: RedisConnections | undefined;
    try {
      const errors: unknown[] = [];
      redis = await openRedis(server.url, prefix, pino({ level: 'silent' }));
      const limiter = redisRateLimiter(redis, LIMITS, { onError: (err) => errors.push(err) });
      assert.equal(await attempt(limiter, 'edit', 7), null);
      await server.kill();
      assert.equal(await attempt(limiter, 'edit', 7), null, 'no 503: the node counts by itself');
      assert.equal(await attempt(limiter, 'edit', 7), null);
      assert.equal(await attempt(limiter, 'edit', 7), null);
      assert.ok((await attempt(limiter, 'edit', 7))! >= 59, 'and still limits: 3 counted by the node alone');
      assert.ok(errors.length >= 4, 'every fallback is reported');
    } finally {
      await server.kill();
      // quit() would wait for a Redis that is gone: drop the connections (and their reconnect timers) at once.
      redis?.commands.disconnect();
      redis?.subscriber.disconnect();
    }
  });
});
