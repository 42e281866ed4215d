// Faults survived without restarting Parley, on real node processes: Redis killed and started again (cross-node
// delivery resumes by itself), PostgreSQL stopped and started again under a send load (503 with Retry-After,
// never a hang; every message answered 201 is in the database), and a node stopped with SIGTERM (its sockets
// closed with 4200, exit 0, the other node carries on). Redis and PostgreSQL here are instances of the test's
// own, started as child processes, so killing them disturbs nothing else on the machine.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, afterEach, before, describe, test } from 'node:test';
import pg from 'pg';
import { Cluster } from '../../testkit/cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { PostgresServer } from '../../testkit/postgres.js';
import { RedisServer } from '../../testkit/redis.js';
import { sleep, until } from '../../testkit/wait.js';
import { EchoClient } from '../support/echo.js';

/** Figures worth seeing in the run's output. */
const report = (line: string) => console.log(`[faults] ${line}`);

/** Shared by the suites: clients, users, conversations, sends. */
function harness(getCluster: () => Cluster) {
  const clients: EchoClient[] = [];
  let nextUserId = 7000;

  async function ok(node: ParleyNode, userId: number, method: string, path: string, body?: unknown, status = 200) {
    const res = await node.request(userId, method, path, body);
    assert.equal(res.status, status, `${node.name} ${method} ${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  return {
    clients,
    ok,
    async users(count: number): Promise<number[]> {
      const ids = Array.from({ length: count }, () => nextUserId++);
      for (const id of ids) await ok(getCluster().nodes[0]!, id, 'GET', '/conversations');
      return ids;
    },
    async direct(node: ParleyNode, a: number, b: number): Promise<number> {
      return (await ok(node, a, 'POST', '/conversations', { user_id: b }, 201)).data.id;
    },
    async send(node: ParleyNode, userId: number, conversationId: number, body: string): Promise<Record<string, any>> {
      return (await ok(node, userId, 'POST', `/conversations/${conversationId}/messages`, { body }, 201)).data;
    },
    async listening(node: ParleyNode, userId: number, conversationIds: readonly number[]): Promise<EchoClient> {
      const client = await EchoClient.connect(node, userId);
      clients.push(client);
      await client.subscribeUser();
      for (const id of conversationIds) await client.subscribeConversation(id);
      return client;
    },
    async disconnectAll(): Promise<void> {
      await Promise.all(clients.splice(0).map((c) => c.disconnect()));
    },
  };
}

/**
 * A multipart upload whose body is sent in two halves: the first at once, the second on finish(). Meanwhile the
 * request is in flight on the node.
 */
async function slowUpload(node: ParleyNode, token: string): Promise<{ finish(): Promise<{ status: number; body: string }> }> {
  const boundary = 'parley-slow-upload';
  const content = 'x'.repeat(64 * 1024);
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\n`;
  const body = Buffer.from(`${head}${content}\r\n--${boundary}--\r\n`);
  const half = Math.floor(body.length / 2);
  const request = httpRequest(`${node.api}/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
    timeout: 10_000,
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.once('error', reject);
    });
    request.once('error', reject);
    request.once('timeout', () => request.destroy(new Error('the upload got no answer within 10 s')));
  });
  response.catch(() => {}); // observed by finish()
  request.write(body.subarray(0, half));
  return {
    finish() {
      request.end(body.subarray(half));
      return response;
    },
  };
}

/** Records every connection state change of an Echo client (a socket that stays open records none). */
function stateChanges(client: EchoClient): string[] {
  const changes: string[] = [];
  client.echo.connector.pusher.connection.bind('state_change', ({ previous, current }: { previous: string; current: string }) =>
    changes.push(`${previous}→${current}`),
  );
  return changes;
}

// -----------------------------------------------------------------------------------------------

describe('Redis killed and started again while two nodes run', { timeout: 90_000 }, () => {
  let redis: RedisServer;
  let cluster: Cluster;
  const h = harness(() => cluster);

  before(async () => {
    redis = await RedisServer.start();
    cluster = await Cluster.start({ nodes: 2, redisUrl: redis.url });
  });

  afterEach(async (t) => {
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });

  after(async () => {
    await h.disconnectAll();
    await cluster?.close();
    await redis?.kill();
  });

  test('while Redis is away sends still answer 201 and reach sockets on the same node; once it is back, cross-node delivery resumes by itself', async () => {
    const [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
    const [alice, bob] = await h.users(2);
    const conversationId = await h.direct(node1, alice, bob);
    const b = await h.listening(node1, bob, [conversationId]);
    const changes = stateChanges(b);
    const first = await h.send(node2, alice, conversationId, 'before the outage');
    await b.waitFor('MessageSent', (p) => p.id === first.id);

    await redis.kill();
    await until(async () => (await node1.ready()) === 503 && (await node2.ready()) === 503, 5_000, () => '/readyz should say 503 without Redis');
    const readiness = (await (await fetch(`${node1.baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) })).json()) as any;
    assert.equal(readiness.checks.database, 'ok');
    assert.match(readiness.checks.redis, /^unavailable/);

    // Without Redis: the writes are answered 201 and the node's own sockets hear them.
    const DURING = 5;
    const sameNode: number[] = [];
    const crossNode: number[] = [];
    for (let i = 0; i < DURING; i++) {
      sameNode.push((await h.send(node1, alice, conversationId, `same node ${i}`)).id);
      crossNode.push((await h.send(node2, alice, conversationId, `other node ${i}`)).id);
    }
    for (const id of sameNode) await b.waitFor('MessageSent', (p) => p.id === id);
    await sleep(200);
    const crossHeard = crossNode.filter((id) => b.events('MessageSent', (p) => p.id === id).length > 0).length;
    report(`Redis down: ${2 * DURING} sends answered 201; same-node delivered ${sameNode.length}/${DURING}, cross-node delivered ${crossHeard}/${DURING} (at-most-once, caught up over HTTP)`);
    // What needs Redis says so: 503 with Retry-After, at once (no hang); /metrics reports it.
    const heartbeat = await node2.request(alice, 'POST', '/presence/heartbeat', undefined, {}, 5_000);
    assert.equal(heartbeat.status, 503, JSON.stringify(heartbeat.body));
    assert.ok(heartbeat.headers.get('retry-after'));
    // An authorization for another node's socket is kept in Redis: 503. One for the answering node's own socket
    // stays in its memory (realtime/authorizations/local-first.ts) and needs no Redis.
    const authorize = async (node: typeof node1) =>
      fetch(`${node.api}/broadcasting/auth`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await node.token(bob)}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ socket_id: b.socketId(), channel_name: `private-chat.conversation.${conversationId}` }).toString(),
        signal: AbortSignal.timeout(5_000),
      });
    const elsewhere = await authorize(node2);
    assert.equal(elsewhere.status, 503, await elsewhere.text());
    assert.ok(elsewhere.headers.get('retry-after'));
    const here = await authorize(node1);
    assert.equal(here.status, 200, await here.text());
    const metrics = await (await fetch(`${node1.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    assert.match(metrics, /^parley_redis_up 0$/m);

    await redis.start();
    const restartedAt = Date.now();
    // The first send through node 2 is retried until node 1 hears one: the reconnections take a moment.
    let probes = 0;
    await until(
      async () => {
        probes++;
        const probe = await node2.request(alice, 'POST', `/conversations/${conversationId}/messages`, { body: `probe ${probes}` });
        assert.equal(probe.status, 201, JSON.stringify(probe.body));
        await sleep(100);
        return b.events('MessageSent', (p) => p.id === probe.body.data.id).length > 0;
      },
      15_000,
      () => `cross-node delivery did not resume after ${probes} probes`,
      150,
    );
    const resumedAfter = Date.now() - restartedAt;

    const AFTER = 30;
    const ids: number[] = [];
    for (let i = 0; i < AFTER; i++) ids.push((await h.send(node2, alice, conversationId, `after ${i}`)).id);
    await until(
      () => ids.every((id) => b.events('MessageSent', (p) => p.id === id).length > 0),
      5_000,
      () => `only ${ids.filter((id) => b.events('MessageSent', (p) => p.id === id).length > 0).length}/${AFTER} delivered after the restart`,
    );
    const delivered = ids.filter((id) => b.events('MessageSent', (p) => p.id === id).length === 1).length;
    report(`Redis restarted: cross-node delivery resumed ${resumedAfter} ms after the restart (${probes} probe(s)); then ${delivered}/${AFTER} sends through node 2 delivered on node 1, each once`);
    assert.equal(delivered, AFTER);

    await until(async () => (await node1.ready()) === 200 && (await node2.ready()) === 200, 5_000, () => '/readyz should be 200 again');
    assert.deepEqual(changes, [], 'the client’s socket stayed open throughout');
    // The features that need Redis work again too: channel authorization and presence.
    await h.ok(node2, alice, 'POST', '/presence/heartbeat');
    await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === true);
  });
});

// -----------------------------------------------------------------------------------------------

const postgresUnavailable = PostgresServer.unavailable();

describe('PostgreSQL stopped and started again under a send load on two nodes', { skip: postgresUnavailable ?? false, timeout: 90_000 }, () => {
  let postgres: PostgresServer;
  let cluster: Cluster;
  const h = harness(() => cluster);

  before(async () => {
    postgres = await PostgresServer.start();
    cluster = await Cluster.start({ nodes: 2, adminDatabaseUrl: postgres.adminUrl, env: { CHAT_RATE_SENDS_PER_MINUTE: '100000' } });
  });

  afterEach(async (t) => {
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });

  after(async () => {
    await h.disconnectAll();
    await cluster?.close();
    await postgres?.destroy();
  });

  test('every send ends with 201 or 503 + Retry-After, sockets stay open, and every message answered 201 is in the database', async () => {
    const [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
    const [alice, bob] = await h.users(2);
    const conversationId = await h.direct(node1, alice, bob);
    const a = await h.listening(node2, alice, [conversationId]);
    const b = await h.listening(node1, bob, [conversationId]);
    const changes = [stateChanges(a), stateChanges(b)];

    const TOTAL = 300;
    const WORKERS = 6;
    const REQUEST_TIMEOUT_MS = 15_000;
    const acknowledged: number[] = []; // ids of the messages answered 201
    const refused: { n: number; sender: number }[] = []; // sends answered 503, to retry
    // Each send carries a client_message_id, so that a retry after a 503 cannot store it twice.
    const payload = (n: number) => ({ body: `load ${n}`, client_message_id: `load-${n}` });
    const outcomes = { created: 0, unavailable: 0, unavailableWithoutRetryAfter: 0, timedOut: 0, other: [] as string[] };
    let started = 0;
    let finished = 0;
    let phase: 'before' | 'down' | 'after' = 'before';
    const byPhase = { before: { created: 0, unavailable: 0 }, down: { created: 0, unavailable: 0 }, after: { created: 0, unavailable: 0 } };

    async function worker(index: number): Promise<void> {
      let lastWasUnavailable = false;
      while (started < TOTAL) {
        const n = started++;
        const node = (index + n) % 2 === 0 ? node1 : node2;
        const sender = n % 2 === 0 ? alice : bob;
        const at = phase;
        lastWasUnavailable = false;
        try {
          const res = await node.request(sender, 'POST', `/conversations/${conversationId}/messages`, payload(n), {}, REQUEST_TIMEOUT_MS);
          if (res.status === 201) {
            outcomes.created++;
            byPhase[at].created++;
            acknowledged.push(res.body.data.id);
          } else if (res.status === 503) {
            outcomes.unavailable++;
            byPhase[at].unavailable++;
            lastWasUnavailable = true;
            refused.push({ n, sender });
            if (!res.headers.get('retry-after')) outcomes.unavailableWithoutRetryAfter++;
          } else {
            outcomes.other.push(`${res.status} ${JSON.stringify(res.body)}`);
          }
        } catch (err) {
          if ((err as Error).name === 'TimeoutError') outcomes.timedOut++;
          else outcomes.other.push(`${(err as Error).name}: ${(err as Error).message}`);
        }
        finished++;
        // A steady load that spans the outage: a short pause, a longer one after a 503 (as a client backs off).
        await sleep(lastWasUnavailable ? 150 : 20);
      }
    }

    async function restart(): Promise<{ downMs: number }> {
      await until(() => finished >= 60, 20_000, () => `the load did not get going (${finished} finished)`);
      phase = 'down';
      const stoppedAt = Date.now();
      await postgres.stop('fast');
      await sleep(1_500);
      await postgres.start();
      phase = 'after';
      return { downMs: Date.now() - stoppedAt };
    }

    const loadStartedAt = Date.now();
    const [{ downMs }] = await Promise.all([restart(), ...Array.from({ length: WORKERS }, (_, i) => worker(i))]);
    const loadMs = Date.now() - loadStartedAt;

    // Recovery is automatic: both nodes answer sends again (bounded; the pool replaces its dead connections).
    const recovered: number[] = [];
    for (const node of [node1, node2]) {
      await until(
        async () => {
          const res = await node.request(alice, 'POST', `/conversations/${conversationId}/messages`, { body: `after ${node.name}` }, {}, 5_000);
          if (res.status === 201) recovered.push(res.body.data.id);
          return res.status === 201;
        },
        15_000,
        () => `${node.name} did not recover`,
        200,
      );
    }
    for (const client of [a, b]) await client.waitFor('MessageSent', (p) => p.id === recovered[1], 5_000);

    // The clients retry what was refused, with the same client_message_id: 201 when it was not stored, 200 when
    // the 503 came after the commit (the answer was lost, not the message).
    const retried = { created: 0, found: 0 };
    for (const { n, sender } of refused) {
      const res = await node1.request(sender, 'POST', `/conversations/${conversationId}/messages`, payload(n), {}, 5_000);
      assert.ok(res.status === 201 || res.status === 200, `retry of send ${n}: ${res.status} ${JSON.stringify(res.body)}`);
      if (res.status === 201) retried.created++;
      else retried.found++;
    }

    // Count what the database holds.
    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    let stored: number;
    let storedAcknowledged: number;
    let afterRetries: number;
    try {
      stored = Number((await db.query(`select count(*) as n from messages where conversation_id = $1 and body like 'load %'`, [conversationId])).rows[0].n);
      storedAcknowledged = Number((await db.query(`select count(*) as n from messages where id = any($1::bigint[])`, [acknowledged])).rows[0].n);
      afterRetries = Number(
        (await db.query(`select count(distinct client_message_id) as n from messages where conversation_id = $1 and client_message_id like 'load-%'`, [conversationId])).rows[0].n,
      );
    } finally {
      await db.end();
    }

    report(
      `PostgreSQL restart under load: ${TOTAL} sends by ${WORKERS} workers over ${loadMs} ms, PostgreSQL down ${downMs} ms; ` +
        `201: ${outcomes.created}, 503: ${outcomes.unavailable} (without Retry-After: ${outcomes.unavailableWithoutRetryAfter}), ` +
        `timed out: ${outcomes.timedOut}, other: ${outcomes.other.length}; by phase ${JSON.stringify(byPhase)}; ` +
        `in the database: ${storedAcknowledged}/${acknowledged.length} acknowledged; the ${refused.length} refused sends retried: ` +
        `${retried.created} stored now (201), ${retried.found} had been stored already (200); ${stored} load messages in all, ${afterRetries} distinct`,
    );
    assert.deepEqual(outcomes.other, [], 'every send ends with 201 or 503');
    assert.equal(outcomes.timedOut, 0, 'no send hangs');
    assert.equal(outcomes.created + outcomes.unavailable, TOTAL);
    assert.ok(outcomes.unavailable > 0, 'the outage was seen by the load (503s)');
    assert.ok(byPhase.after.created > 0, 'sends succeed again under the load once PostgreSQL is back');
    assert.equal(outcomes.unavailableWithoutRetryAfter, 0, 'every 503 carries Retry-After');
    assert.equal(storedAcknowledged, acknowledged.length, 'every message answered 201 is in the database');
    // A 503 may come after a commit whose answer was lost (the retry finds it), never a 201 without a commit;
    // with the retries every send is stored exactly once.
    assert.equal(stored, TOTAL);
    assert.equal(afterRetries, TOTAL);
    assert.equal(retried.found + retried.created, outcomes.unavailable);
    assert.deepEqual(changes, [[], []], 'the sockets stayed open throughout');
    assert.equal((await node1.ready()) === 200 && (await node2.ready()) === 200, true, '/readyz is 200 again');
  });

  test('a conversation channel authorized while PostgreSQL is down is 503 + Retry-After (retry), never 403 (pusher-js would give up on the channel)', async () => {
    const [node1] = cluster.nodes as [ParleyNode, ParleyNode];
    const [alice, bob] = await h.users(2);
    const conversationId = await h.direct(node1, alice, bob);
    const b = await h.listening(node1, bob, []);
    const token = await node1.token(bob);
    const authorize = () =>
      fetch(`${node1.api}/broadcasting/auth`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ socket_id: b.socketId(), channel_name: `private-chat.conversation.${conversationId}` }).toString(),
        signal: AbortSignal.timeout(15_000),
      });
    assert.equal((await authorize()).status, 200);
    await postgres.stop('fast');
    try {
      const down = await authorize();
      assert.equal(down.status, 503, await down.text());
      assert.ok(down.headers.get('retry-after'));
    } finally {
      await postgres.start();
    }
    await until(async () => (await authorize()).status === 200, 15_000, () => 'authorization did not recover', 200);
  });
});

// -----------------------------------------------------------------------------------------------

describe('a node stopped with SIGTERM', { timeout: 90_000 }, () => {
  let cluster: Cluster;
  const h = harness(() => cluster);

  before(async () => {
    cluster = await Cluster.start({ nodes: 2 });
  });

  afterEach(async (t) => {
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });

  after(async () => {
    await h.disconnectAll();
    await cluster?.close();
  });

  test('closes its sockets with 4200 and exits 0, while a client on the other node carries on receiving', async () => {
    const [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
    const [alice, bob] = await h.users(2);
    const conversationId = await h.direct(node1, alice, bob);
    const leaving = await h.listening(node2, alice, [conversationId]);
    const staying = await h.listening(node1, bob, [conversationId]);
    const stayingChanges = stateChanges(staying);
    const closeCodes: number[] = [];
    leaving.echo.connector.pusher.connection.bind('error', (error: { type?: string; data?: { code?: number } }) => {
      if (error?.type === 'PusherError' && typeof error.data?.code === 'number') closeCodes.push(error.data.code);
    });
    const leavingStates: string[] = [];
    leaving.echo.connector.pusher.connection.bind('state_change', ({ current }: { current: string }) => leavingStates.push(current));

    const before = await h.send(node2, alice, conversationId, 'before the shutdown');
    await staying.waitFor('MessageSent', (p) => p.id === before.id);

    // An upload in flight on node 2 when it is told to stop: its body is half sent.
    const upload = await slowUpload(node2, await node2.token(alice));
    await sleep(200);

    const stoppedAt = Date.now();
    const stopping = node2.stop('SIGTERM', 10_000);
    await until(() => closeCodes.length > 0, 3_000, () => 'the client of node 2 saw no close code');
    assert.equal(closeCodes[0], 4200);
    // The sockets are closed, but the node waits for the request it accepted: send the rest of the body.
    await sleep(300);
    assert.equal(node2.running, true, 'node 2 waits for its in-flight request');
    const uploaded = await upload.finish();
    const answeredAt = Date.now();
    const code = await stopping;
    const exitAfterAnswer = Date.now() - answeredAt;
    report(
      `SIGTERM: node 2 exited ${code} after ${Date.now() - stoppedAt} ms, ${exitAfterAnswer} ms after answering its in-flight upload (${uploaded.status}); ` +
        `close codes its client saw: ${JSON.stringify(closeCodes)}; its states: ${leavingStates.join(' → ')}`,
    );
    assert.equal(uploaded.status, 201, uploaded.body);
    assert.equal(code, 0, `node 2 exits 0:\n${node2.logs()}`);
    // The upload's connection is kept alive by the client; the node does not wait for the client to drop it.
    assert.ok(exitAfterAnswer < 2_000, `node 2 took ${exitAfterAnswer} ms to exit after its last request`);
    assert.notEqual(leavingStates[0], undefined, 'the client of node 2 lost its connection');

    // The node is gone: nothing answers on its port.
    await assert.rejects(fetch(`${node2.baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) }));
    // The other node carries on, and its client hears what happens, without a reconnection.
    const message = await h.send(node1, alice, conversationId, 'after the shutdown');
    await staying.waitFor('MessageSent', (p) => p.id === message.id);
    assert.deepEqual(stayingChanges, []);
    // A client that left node 2 reconnects to the one still running (as behind a load balancer).
    const moved = await h.listening(node1, alice, [conversationId]);
    const reply = await h.send(node1, bob, conversationId, 'welcome back');
    await moved.waitFor('MessageSent', (p) => p.id === reply.id);
  });
});
