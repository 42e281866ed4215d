// Read replicas (DATABASE_REPLICA_URLS, docs/deployment.md "Read replicas") on a real PostgreSQL primary and a
// streaming replica of it (pg_basebackup -R), two nodes sharing Redis. A replica's answers are told apart from
// the primary's by pausing its replay (pg_wal_replay_pause): what is written meanwhile is on the primary only.
// PostgreSQL only (the embedded database has no replicas); one primary and replica pair for the file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import { freePort } from '../../testkit/ports.js';
import { deleteKeys, MACHINE_REDIS_URL } from '../../testkit/redis.js';
import { PostgresServer, withClient, type FreshDatabase } from '../../testkit/postgres.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep, until } from '../../testkit/wait.js';
import { DATABASES, freshPostgres, startTestApp, type TestApp } from '../support/app.js';
import { direct, group, history, newUsers, register, send } from './helpers.js';

// Long enough that the steps of a test that rely on a paused replica still being within the max lag finish
// inside it on a busy machine (about 0.3 s on the 2-core machine the tests were written on).
const MAX_LAG_MS = 2500;
const skip = !DATABASES.includes('postgres') ? 'PostgreSQL is not among TEST_DATABASES' : (PostgresServer.unavailable() ?? false);

describe('read replicas (postgres)', { skip, timeout: 90_000 }, () => {
  let primary: PostgresServer;
  let replica: PostgresServer;
  let database: FreshDatabase;
  let node1: TestApp;
  let node2: TestApp;
  const prefix = `parley-test-${randomBytes(4).toString('hex')}:`;

  const replicaAdminUrl = () => `postgres://postgres@127.0.0.1:${replica.port}/postgres`;
  const onReplica = (statement: string) => withClient(replicaAdminUrl(), (c) => c.query(statement));
  const stats = (node: TestApp) => node.app.chat.replicas!.stats();
  const bodies = (items: { body: string | null }[]) => items.map((m) => m.body);

  /** Until the replica has replayed all the primary has written now, and both nodes use it again. */
  async function caughtUp(): Promise<void> {
    const { rows } = await withClient(primary.adminUrl, (c) => c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn'));
    await until(
      async () => (await onReplica(`select pg_last_wal_replay_lsn() >= '${rows[0]!.lsn}'::pg_lsn as done`)).rows[0].done === true,
      10_000,
      () => 'the replica did not catch up',
    );
    await until(() => stats(node1).usable === 1 && stats(node2).usable === 1, 10_000, () => `replicas usable: ${stats(node1).usable}, ${stats(node2).usable}`);
  }

  before(async () => {
    primary = await PostgresServer.start();
    database = await freshPostgres(primary.adminUrl, 'parley_replicas');
    replica = await primary.startReplica();
    const replicaUrl = new URL(database.url);
    replicaUrl.port = String(replica.port);
    const env = {
      DATABASE_URL: database.url,
      DATABASE_REPLICA_URLS: replicaUrl.toString(),
      DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      REDIS_URL: MACHINE_REDIS_URL,
      REDIS_PREFIX: prefix,
    };
    node1 = await startTestApp({ env });
    node2 = await startTestApp({ env });
  });

  afterEach(async () => {
    // Every test leaves the replica replaying (a test that paused it may have failed before resuming).
    await onReplica('select pg_wal_replay_resume()').catch(() => {});
  });

  after(async () => {
    await node1?.close();
    await node2?.close();
    await replica?.destroy();
    await primary?.destroy();
    await deleteKeys(MACHINE_REDIS_URL, prefix).catch(() => {});
  });

  test('history, search, user search and exports are read on the replica; the writer reads their own write at once, on either node', async () => {
    const [alice, bob, carol] = newUsers(3);
    const conversationId = await direct(node1, bob!, alice!); // Bob writes, Alice only reads
    await send(node1, bob!, conversationId, 'before the pause');
    await register(node1, carol!);
    await caughtUp();
    const served = stats(node1).replicaReads;

    await onReplica('select pg_wal_replay_pause()');
    await send(node1, bob!, conversationId, 'written while paused');
    const groupId = await group(node1, bob!, [alice!, carol!], 'Paused group');

    // Alice did not write: her reads go to the replica, which has not replayed Bob's message nor his group.
    assert.deepEqual(bodies((await history(node1, alice!, conversationId)).data), ['before the pause']);
    assert.deepEqual(bodies((await history(node2, alice!, conversationId)).data), ['before the pause']);
    const search = await node1.request(alice!, 'GET', `/search/messages?q=${encodeURIComponent('paused')}`);
    assert.equal(search.status, 200, JSON.stringify(search.body));
    assert.deepEqual(search.body.data, [], 'search on the replica does not find the message written while paused');
    const users = await node1.request(alice!, 'GET', `/users?query=${encodeURIComponent(`User ${carol}`)}`);
    assert.equal(users.status, 200, JSON.stringify(users.body));
    const exported = await fetch(`${node1.api}/users/${carol}/export`, { headers: { 'X-Chat-Server-Key': SECRETS.CHAT_SERVER_KEY } });
    assert.equal(exported.status, 200);
    const document = (await exported.json()) as { conversations: { id: number }[] };
    assert.ok(!document.conversations.some((c) => c.id === groupId), 'the export read on the replica has no group created while paused');
    assert.ok(stats(node1).replicaReads >= served + 4, `replica reads ${stats(node1).replicaReads}, before ${served}`);

    // The group's history is a 404 on the replica (Alice is no member there): the primary answers instead.
    const groupHistory = await history(node1, alice!, groupId);
    assert.deepEqual(groupHistory.data, []);
    assert.ok(stats(node1).primaryReads.replica_failed >= 1);

    // Bob wrote: his reads go to the primary for the max lag, on the node he wrote through and on the other (Redis).
    const ownWrites = stats(node2).primaryReads.own_write;
    assert.deepEqual(bodies((await history(node1, bob!, conversationId)).data), ['written while paused', 'before the pause']);
    assert.deepEqual(bodies((await history(node2, bob!, conversationId)).data), ['written while paused', 'before the pause']);
    assert.equal(stats(node2).primaryReads.own_write, ownWrites + 1);
  });

  test('a replica further behind than DATABASE_REPLICA_MAX_LAG_MS is skipped; caught up, it serves reads again', async () => {
    const [alice, bob] = newUsers(2);
    const conversationId = await direct(node1, bob!, alice!); // Bob writes, Alice only reads
    await caughtUp();
    await onReplica('select pg_wal_replay_pause()');
    await send(node1, bob!, conversationId, 'late');
    await sleep(MAX_LAG_MS + 300);
    const skipped = stats(node1).primaryReads.no_replica;
    assert.equal(stats(node1).usable, 0);
    assert.deepEqual(bodies((await history(node1, alice!, conversationId)).data), ['late'], 'read on the primary');
    assert.equal(stats(node1).primaryReads.no_replica, skipped + 1);

    await onReplica('select pg_wal_replay_resume()');
    await caughtUp();
    await onReplica('select pg_wal_replay_pause()');
    await send(node1, bob!, conversationId, 'again');
    assert.deepEqual(bodies((await history(node1, alice!, conversationId)).data), ['late'], 'read on the replica again');
  });

  test('a node starts with its replica down (or not a replica at all) and reads on the primary', async () => {
    const closedPort = await freePort(); // nothing listens there
    const down = new URL(database.url);
    down.port = String(closedPort);
    const node = await startTestApp({
      env: { DATABASE_URL: database.url, DATABASE_REPLICA_URLS: `${down},${database.url}`, DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS) },
    });
    try {
      const [alice, bob] = newUsers(2);
      const conversationId = await direct(node, bob!, alice!);
      await send(node, bob!, conversationId, 'hello');
      assert.deepEqual(bodies((await history(node, alice!, conversationId)).data), ['hello']);
      const { usable, primaryReads } = node.app.chat.replicas!.stats();
      assert.equal(usable, 0, 'a closed port and the primary itself (not in recovery) are no usable replicas');
      assert.equal(primaryReads.no_replica, 1);
    } finally {
      await node.close();
    }
  });

  test('a replica killed: every read is answered by the primary without an error; started again, it serves reads again', async () => {
    const [alice, bob] = newUsers(2);
    const conversationId = await direct(node1, bob!, alice!); // Bob writes, Alice only reads
    await send(node1, bob!, conversationId, 'first');
    await caughtUp();

    // Reads keep coming while the replica dies: the ones that reach it before a probe sees it gone are retried.
    let reading = true;
    const failures: string[] = [];
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        const res = await node1.request(alice!, 'GET', `/conversations/${conversationId}/messages`);
        reads++;
        if (res.status !== 200 || res.body.data[0]?.body !== 'first') failures.push(`${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }
    })();
    await sleep(100);
    await replica.stop('immediate');
    await sleep(500);
    reading = false;
    await reader;
    assert.deepEqual(failures, [], `${failures.length} of ${reads} reads failed`);
    assert.equal(stats(node1).usable, 0);
    await send(node1, bob!, conversationId, 'while the replica is down');
    assert.deepEqual(bodies((await history(node1, alice!, conversationId)).data), ['while the replica is down', 'first']);

    await replica.start();
    await caughtUp();
    await onReplica('select pg_wal_replay_pause()');
    await send(node1, bob!, conversationId, 'after the restart');
    assert.deepEqual(bodies((await history(node1, alice!, conversationId)).data), ['while the replica is down', 'first'], 'read on the replica again');
  });
});
