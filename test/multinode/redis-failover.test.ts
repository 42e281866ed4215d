// Redis failovers survived without restarting Parley, on real node processes and real Redis processes of the
// test's own: a Redis Cluster slot moved to another master (MOVED), a Cluster master killed (its replica takes
// over) and a Sentinel-managed primary killed (the sentinels promote the replica). Throughout, sends keep being answered 201, no message answered 201 is lost,
// the clients' sockets stay open, and cross-node delivery resumes by itself.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Cluster } from '../../testkit/cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { RedisCluster } from '../../testkit/redis-cluster.js';
import { RedisSentinelSet } from '../../testkit/redis-sentinel.js';
import { sleep, until } from '../../testkit/wait.js';
import { EchoClient } from '../support/echo.js';

const report = (line: string) => console.log(`[redis-failover] ${line}`);

interface Sent {
  readonly status: number;
  readonly ms: number;
  readonly id?: number;
}

/**
 * The scenario on two nodes: Bob listens on node 1, Alice sends through both nodes every 100 ms while
 * `failover` kills Redis's primary for the conversation's channel and waits for the promotion.
 */
async function survivesFailover(cluster: Cluster, failover: (channelTopic: string) => Promise<string>): Promise<void> {
  const [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
  const [alice, bob] = [9101, 9102];
  for (const id of [alice, bob]) assert.equal((await node1.request(id, 'GET', '/conversations')).status, 200);
  const conversationId: number = (await node1.request(alice, 'POST', '/conversations', { user_id: bob })).body.data.id;
  const b = await EchoClient.connect(node1, bob);
  try {
    await b.subscribeUser();
    await b.subscribeConversation(conversationId);
    const stateChanges: string[] = [];
    b.echo.connector.pusher.connection.bind('state_change', ({ previous, current }: { previous: string; current: string }) => stateChanges.push(`${previous}→${current}`));
    const send = async (node: ParleyNode, body: string): Promise<Sent> => {
      const started = Date.now();
      const res = await node.request(alice, 'POST', `/conversations/${conversationId}/messages`, { body }, {}, 15_000);
      return { status: res.status, ms: Date.now() - started, id: res.status === 201 ? res.body.data.id : undefined };
    };
    const first = await send(node2, 'before the failover');
    await b.waitFor('MessageSent', (p) => p.id === first.id);

    // Sends through both nodes, every 100 ms, from before the kill until a second after the promotion.
    const sent: Sent[] = [];
    let sending = true;
    const load = (async () => {
      for (let i = 0; sending; i++) {
        sent.push(await send(i % 2 === 0 ? node2 : node1, `during ${i}`));
        await sleep(100);
      }
    })();
    await sleep(300);
    const killedAt = Date.now();
    const promoted = await failover(`${cluster.redisPrefix}ch:{private-chat.conversation.${conversationId}}`);
    const promotedAfter = Date.now() - killedAt;
    await sleep(1_000);
    sending = false;
    await load;

    const refused = sent.filter((s) => s.status !== 201);
    const slowest = Math.max(...sent.map((s) => s.ms));
    report(`${promoted} promoted ${promotedAfter} ms after the kill; ${sent.length} sends meanwhile, ${sent.length - refused.length} answered 201, slowest ${slowest} ms`);
    assert.deepEqual(refused, [], 'every send during the failover is answered 201');
    assert.ok(slowest < 5_000, `no send waits long (slowest ${slowest} ms)`);

    // Cross-node delivery resumes by itself: probes through node 2 until node 1's client hears one.
    const resumeStarted = Date.now();
    let probes = 0;
    await until(
      async () => {
        const probe = await send(node2, `probe ${++probes}`);
        assert.equal(probe.status, 201);
        await sleep(150);
        return b.events('MessageSent', (p) => p.id === probe.id).length > 0;
      },
      20_000,
      () => `cross-node delivery did not resume after ${probes} probes`,
      100,
    );
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) ids.push((await send(node2, `after ${i}`)).id!);
    await until(() => ids.every((id) => b.events('MessageSent', (p) => p.id === id).length === 1), 5_000, () => 'the sends after the failover were not all delivered once');
    report(`cross-node delivery resumed ${Date.now() - resumeStarted} ms after the promotion was seen (${probes} probe(s)); 10/10 later sends delivered once`);

    // No acknowledged message is lost: every send answered 201 is in the history.
    const history = await node1.request(bob, 'GET', `/conversations/${conversationId}/messages?limit=100`);
    assert.equal(history.status, 200);
    const stored = new Set((history.body.data as { id: number }[]).map((m) => m.id));
    const acknowledged = sent.map((s) => s.id!);
    assert.ok(acknowledged.length < 100 - 10 - probes - 1, 'the history page holds them all');
    assert.deepEqual(acknowledged.filter((id) => !stored.has(id)), [], 'every message answered 201 is stored');
    assert.deepEqual(stateChanges, [], 'the client’s socket stayed open throughout');
    await until(async () => (await node1.ready()) === 200 && (await node2.ready()) === 200, 5_000, () => '/readyz should be 200');
  } finally {
    await b.disconnect();
  }
}

describe('a Redis Cluster slot moved and a master killed while two nodes run', { timeout: 120_000 }, () => {
  let redis: RedisCluster;
  let cluster: Cluster;

  before(async () => {
    redis = await RedisCluster.start();
    cluster = await Cluster.start({ nodes: 2, redis });
  });
  afterEach(async (t) => {
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });
  after(async () => {
    await cluster?.close();
    await redis?.close();
  });

  test('a channel’s slot moved to another master (MOVED): its shard channel follows and cross-node delivery goes on', async () => {
    const [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
    const [alice, bob] = [9201, 9202];
    for (const id of [alice, bob]) assert.equal((await node1.request(id, 'GET', '/conversations')).status, 200);
    const conversationId: number = (await node1.request(alice, 'POST', '/conversations', { user_id: bob })).body.data.id;
    const b = await EchoClient.connect(node1, bob);
    try {
      await b.subscribeConversation(conversationId);
      const topic = `${cluster.redisPrefix}ch:{private-chat.conversation.${conversationId}}`;
      const from = redis.masterOf(topic);
      const to = redis.masters().find((port) => port !== from)!;
      redis.moveSlotOf(topic, to);
      const movedAt = Date.now();
      let probes = 0;
      await until(
        async () => {
          const res = await node2.request(alice, 'POST', `/conversations/${conversationId}/messages`, { body: `probe ${++probes}` });
          assert.equal(res.status, 201);
          await sleep(150);
          return b.events('MessageSent', (p) => p.id === res.body.data.id).length > 0;
        },
        10_000,
        () => `cross-node delivery did not go on after the move (${probes} probes)`,
        100,
      );
      report(`slot of ${topic} moved from ${from} to ${to}: delivered again ${Date.now() - movedAt} ms later (${probes} probe(s))`);
      assert.ok(redis.shardChannels().get(to)?.includes(topic), `${topic} is subscribed on ${to} now`);
      assert.ok(!redis.shardChannels().get(from)?.includes(topic), `and no longer on ${from}`);
    } finally {
      await b.disconnect();
    }
  });

  test('its replica takes over: sends keep answering 201, none is lost, and the channel’s shard channel moves to the new master', async () => {
    let newMaster = 0;
    await survivesFailover(cluster, async (topic) => {
      const master = redis.masterOf(topic);
      assert.ok(redis.shardChannels().get(master)?.includes(topic), `${topic} is subscribed on master ${master}`);
      newMaster = await redis.killMaster(master);
      return `replica ${newMaster} of master ${master}`;
    });
    // Node 1 subscribes the conversation's shard channel again, on the master that now serves its slot.
    const topics = redis.shardChannels(`${cluster.redisPrefix}ch:*`).get(newMaster) ?? [];
    assert.ok(topics.some((t) => t.includes('private-chat.conversation.')), `the new master ${newMaster} carries the conversation's shard channel: ${JSON.stringify(topics)}`);
  });
});

describe('the Sentinel-managed Redis primary killed while two nodes run', { timeout: 120_000 }, () => {
  let redis: RedisSentinelSet;
  let cluster: Cluster;

  before(async () => {
    redis = await RedisSentinelSet.start();
    cluster = await Cluster.start({ nodes: 2, redis });
  });
  afterEach(async (t) => {
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });
  after(async () => {
    await cluster?.close();
    await redis?.close();
  });

  test('the sentinels promote the replica: the nodes follow it without a restart, sends keep answering 201 and none is lost', async () => {
    await survivesFailover(cluster, async () => {
      const old = redis.primary();
      const next = await redis.killPrimary();
      return `replica ${next} of primary ${old}`;
    });
  });
});
