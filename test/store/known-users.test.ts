// What a node remembers of its users (store/known-users.ts), and how the nodes make each other forget: a read
// begun before a forget is not remembered after it; a forget on one node reaches the others through Redis; a node
// that cannot hear the others remembers nothing. The database handles are stand-ins: the cache only keys on them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import type { DB } from '../../src/store/database.js';
import { forgetKnownUser, knownUser, readGeneration, rememberUser, shareForgetting } from '../../src/store/known-users.js';
import { openRedis, type RedisConnections } from '../../src/redis/connections.js';
import { MACHINE_REDIS_URL } from '../../testkit/redis.js';
import { until } from '../../testkit/wait.js';

const node = (): DB => ({ isTransaction: false }) as DB;
const alice = { name: 'Alice', avatar_url: null };

describe('known users', () => {
  test('a read begun before a forget is not remembered after it', () => {
    const db = node();
    const since = readGeneration(db);
    forgetKnownUser(db, 1); // a ban commits while the read is on its way
    rememberUser(db, 1, alice, since);
    assert.equal(knownUser(db, 1), undefined);
    rememberUser(db, 1, alice, readGeneration(db));
    assert.deepEqual(knownUser(db, 1), alice);
    assert.equal(knownUser({ isTransaction: true } as DB, 1), undefined, 'nothing inside a transaction');
  });

  describe('shared through Redis', () => {
    const logger = pino({ level: 'silent' });
    const prefix = `test-known-${randomUUID()}:`;
    const connections: RedisConnections[] = [];
    before(async () => {
      for (let i = 0; i < 2; i++) connections.push(await openRedis(MACHINE_REDIS_URL, prefix, logger));
    });
    after(async () => {
      await Promise.all(connections.map((c) => c.close()));
    });

    test('a forget on one node reaches the other; a node whose subscription is down remembers nothing', async () => {
      const [one, two] = [node(), node()];
      const forgetEverywhere = await shareForgetting(one, connections[0]!, logger);
      await shareForgetting(two, connections[1]!, logger);
      rememberUser(one, 7, alice, readGeneration(one));
      rememberUser(two, 7, alice, readGeneration(two));
      await forgetEverywhere(7);
      assert.equal(knownUser(one, 7), undefined, 'at once here');
      await until(() => knownUser(two, 7) === undefined, 1_000, () => 'node two still knows user 7');

      connections[1]!.subscriber.disconnect(true); // it reconnects by itself
      await until(() => connections[1]!.subscriber.status !== 'ready', 1_000, () => 'still connected');
      rememberUser(two, 8, alice, readGeneration(two));
      assert.equal(knownUser(two, 8), undefined, 'deaf: not remembered');
      await until(() => connections[1]!.subscriber.status === 'ready', 5_000, () => 'not reconnected');
      await until(() => (rememberUser(two, 9, alice, readGeneration(two)), knownUser(two, 9) !== undefined), 2_000, () => 'remembers nothing after reconnecting');
      await forgetEverywhere(9);
      await until(() => knownUser(two, 9) === undefined, 1_000, () => 'node two no longer hears forgets after reconnecting');
    });
  });
});
