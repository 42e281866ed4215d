// The Redis broker between nodes (src/realtime/broker/redis.ts), seen from a receiving node's handler: a dispatch
// that went to every node as one message per Redis server (a group's MessageSent beside its members' InboxUpdated)
// is handed over whole, in one turn of the event loop and in order, so each socket gets its frames in one write;
// a channel's later events wait behind it; a part that never comes holds the rest only DISPATCH_HOLD_MS. A small
// group's message travels on its channels' own topics, each channel's events in order. On the
// machine's one Redis and on a Redis Cluster of this file's own, where a dispatch's parts come from three masters.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { DISPATCH_HOLD_MS, EACH_AS_ONE_FROM, redisBroker } from '../../src/realtime/broker/redis.js';
import type { Broker, Publication } from '../../src/realtime/index.js';
import { openRedis, type RedisConnections } from '../../src/redis/connections.js';
import { MACHINE_REDIS_URL } from '../../testkit/redis.js';
import type { RedisCluster } from '../../testkit/redis-cluster.js';
import { until } from '../../testkit/wait.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';

const silent = pino({ level: 'silent' });

/** What a node's handler was handed: each channel's event, with the turn of the event loop it came in. */
interface Handed {
  readonly turn: number;
  readonly channel: string;
  readonly event: string;
  readonly data: string;
}

/** A broker whose handler records what it is handed; turns are counted as the event loop goes round. */
async function receivingNode(redis: RedisConnections) {
  const handed: Handed[] = [];
  let turn = 0;
  let turnOpen = false;
  const broker = redisBroker(redis, randomUUID(), silent);
  await broker.start({
    publication(channels, p: Publication) {
      if (!turnOpen) {
        turnOpen = true;
        turn++;
        setImmediate(() => (turnOpen = false));
      }
      channels.forEach((channel, i) => {
        const data = p.kind === 'each' ? `${p.head}${p.middles[i]}${p.tail}` : p.kind === 'event' ? p.data : p.frame;
        handed.push({ turn, channel, event: p.kind === 'frame' ? '(frame)' : p.event, data });
      });
    },
    command() {},
    occupancy: () => new Map(),
  });
  return { broker, handed };
}

/** A group's message as the broadcaster publishes it: MessageSent to the conversation, then each member's InboxUpdated. */
function groupMessage(sender: Broker, conversation: string, members: readonly string[], n: number): Promise<unknown> {
  return sender.batch!(() =>
    Promise.all([
      sender.publish([conversation], { kind: 'event', event: 'MessageSent', data: `{"n":${n}}` }),
      sender.publish(members, { kind: 'each', event: 'InboxUpdated', head: `{"n":${n},"unread_count":`, tail: '}', middles: members.map((_, i) => String(i)) }),
    ]),
  );
}

for (const backend of REDIS_BACKENDS) {
  describe(`the Redis broker between nodes, on ${backend.name}`, () => {
    let server: RedisCluster | undefined;
    const connections: RedisConnections[] = [];
    const prefix = `parley-test-${randomBytes(4).toString('hex')}:`;
    const connect = async () => {
      const target = server === undefined ? MACHINE_REDIS_URL : { kind: 'cluster' as const, nodes: server.ports.map((port) => ({ host: '127.0.0.1', port })) };
      const redis = await openRedis(target, prefix, silent);
      connections.push(redis);
      return redis;
    };
    let sender: Broker;
    let receiver: Awaited<ReturnType<typeof receivingNode>>;
    let group = 0;
    /** A fresh group of `size` members' user channels and its conversation channel. */
    const newGroup = (size: number) => {
      group++;
      return { conversation: `private-chat.conversation.${group}`, members: Array.from({ length: size }, (_, i) => `private-chat.user.${group}-${i}`) };
    };

    before(async () => {
      server = await backend.start();
      sender = redisBroker(await connect(), randomUUID(), silent);
      await sender.start({ publication() {}, command() {}, occupancy: () => new Map() });
      receiver = await receivingNode(await connect());
    });
    after(async () => {
      await Promise.all(connections.map((redis) => redis.close()));
      await server?.close();
    });

    test(`a group of ${EACH_AS_ONE_FROM + 6}'s message reaches another node whole: MessageSent and every InboxUpdated in one turn, ten times out of ten, each channel's in order`, async () => {
      const { conversation, members } = newGroup(EACH_AS_ONE_FROM + 6);
      const received0 = receiver.broker.received();
      for (let n = 1; n <= 10; n++) await groupMessage(sender, conversation, members, n);
      await until(() => receiver.handed.filter((h) => h.channel === members.at(-1)).length === 10, 5_000, () => 'not every message arrived');

      for (let n = 1; n <= 10; n++) {
        const mine = receiver.handed.filter((h) => h.data.startsWith(`{"n":${n},`) || h.data === `{"n":${n}}`);
        // Channels apart keep no order between them (a Cluster's parts come from three masters in any order).
        assert.deepEqual(
          mine.map((h) => h.channel).sort(),
          [conversation, ...members].sort(),
          `message ${n}: MessageSent and each member's InboxUpdated, once`,
        );
        assert.equal(new Set(mine.map((h) => h.turn)).size, 1, `message ${n} came in ${new Set(mine.map((h) => h.turn)).size} turns`);
        const own = new Map(mine.map((h) => [h.channel, h.data]));
        assert.deepEqual(members.map((m) => own.get(m)), members.map((_, i) => `{"n":${n},"unread_count":${i}}`), 'each member its own part');
      }
      // And each channel's events in the order of the messages.
      for (const channel of [conversation, ...members]) {
        const order = receiver.handed.filter((h) => h.channel === channel).map((h) => Number(/"n":(\d+)/.exec(h.data)![1]));
        assert.deepEqual(order, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], channel);
      }
      assert.equal(receiver.broker.received() - received0, 10 * (members.length + 1), 'counted once per channel');
    });

    test('a group of 10’s message reaches another node on its channels’ own topics: each channel’s events in order, each member its own part', async () => {
      const { conversation, members } = newGroup(10);
      const channels = [conversation, ...members];
      await Promise.all(channels.map((c) => receiver.broker.subscribe(c)));
      try {
        for (let n = 1; n <= 10; n++) void groupMessage(sender, conversation, members, n);
        await until(() => receiver.handed.filter((h) => h.channel === members.at(-1)).length === 10, 5_000, () => 'not every message arrived');
        for (const channel of channels) {
          const order = receiver.handed.filter((h) => h.channel === channel).map((h) => Number(/"n":(\d+)/.exec(h.data)![1]));
          assert.deepEqual(order, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], channel);
        }
        const own = receiver.handed.filter((h) => h.channel === members[3]).map((h) => h.data);
        assert.deepEqual(own, Array.from({ length: 10 }, (_, i) => `{"n":${i + 1},"unread_count":3}`));
      } finally {
        channels.forEach((c) => receiver.broker.unsubscribe(c));
      }
    });

    test('a member’s later event on its own channel does not overtake the group message held for its other parts', async () => {
      const { conversation, members } = newGroup(EACH_AS_ONE_FROM);
      // The later events travel on the members' own topics: the receiver listens to them.
      await Promise.all(members.map((m) => receiver.broker.subscribe(m)));
      for (let n = 1; n <= 10; n++) {
        void groupMessage(sender, conversation, members, n);
        // At once after it, not in the batch: on its channel's topic, maybe on another server than its group part.
        void sender.publish([members[n]!], { kind: 'event', event: 'Later', data: `{"after":${n}}` });
      }
      await until(() => receiver.handed.filter((h) => h.event === 'Later').length === 10, 5_000, () => 'not every later event arrived');
      for (let n = 1; n <= 10; n++) {
        const own = receiver.handed.filter((h) => h.channel === members[n]).map((h) => h.data);
        assert.ok(own.indexOf(`{"n":${n},"unread_count":${n}}`) < own.indexOf(`{"after":${n}}`), `member ${n}: ${own.join(' ')}`);
      }
      members.forEach((m) => receiver.broker.unsubscribe(m));
    });

    test(`a dispatch whose other part never comes is delivered after ${DISPATCH_HOLD_MS} ms, and the late part when it comes`, async () => {
      const redis = connections[0]!;
      const topic = redis.pubsub.shardTopics(`${prefix}each:`)[0]!;
      const header = (id: number) => JSON.stringify({ node: 'elsewhere', kind: 'dispatch', id, parts: 2 });
      const part = (event: string) => JSON.stringify([{ channels: ['private-lonely'], kind: 'event', event, data: '{}' }]);
      const sentAt = performance.now();
      await redis.pubsub.publish(topic, `${header(1)}\n${part('First part')}`);
      await until(() => receiver.handed.some((h) => h.event === 'First part'), 2_000, () => 'never delivered');
      const heldMs = performance.now() - sentAt;
      assert.ok(heldMs >= DISPATCH_HOLD_MS - 5, `held ${heldMs.toFixed(1)} ms`);

      await redis.pubsub.publish(topic, `${header(1)}\n${part('Late part')}`);
      await until(() => receiver.handed.some((h) => h.event === 'Late part'), 2_000, () => 'the late part never delivered');
      // Nothing is waited for now: an unrelated one-part dispatch goes through at once.
      await redis.pubsub.publish(topic, `${JSON.stringify({ node: 'elsewhere', kind: 'dispatch', id: 2, parts: 1 })}\n${part('Whole')}`);
      await until(() => receiver.handed.some((h) => h.event === 'Whole'), 2_000, () => 'never delivered');
      await sleep(0);
    });

    test('garbage on a dispatch topic is dropped, and what follows still arrives', async () => {
      const redis = connections[0]!;
      const topic = redis.pubsub.shardTopics(`${prefix}each:`)[0]!;
      for (const raw of ['no header line', '{"node":"x","kind":"dispatch","id":9,"parts":1}\n[{"channels":"nope"}]', '{"node":"x","kind":"dispatch"}\n{not json']) await redis.pubsub.publish(topic, raw);
      await redis.pubsub.publish(topic, `${JSON.stringify({ node: 'x', kind: 'dispatch', id: 10, parts: 1 })}\n${JSON.stringify([{ channels: ['c'], kind: 'event', event: 'After garbage', data: '1' }])}`);
      await until(() => receiver.handed.some((h) => h.event === 'After garbage'), 2_000, () => 'never delivered');
    });
  });
}
