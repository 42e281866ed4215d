// Scale-out that does not send every event to every node: with three Parley processes on one Redis, a
// channel's events reach only the nodes that have subscribers of it (each channel has a pub/sub topic a
// node subscribes to while it has subscribers). Shown from each node's
// parley_cluster_channel_messages_received_total, with stock pusher-js clients and the official `pusher` SDK.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { Redis } from 'ioredis';
import { Cluster } from '../../testkit/cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { localPusherOptions, Pusher, type PusherClient } from '../../testkit/pusher.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep, until } from '../../testkit/wait.js';

const clients: PusherClient[] = [];

const sdkOn = (node: ParleyNode): PusherServer =>
  new PusherServer({ appId: SECRETS.BROADCAST_APP_ID, key: SECRETS.BROADCAST_APP_KEY, secret: SECRETS.BROADCAST_APP_SECRET, host: '127.0.0.1', port: String(node.port), useTLS: false });

async function connect(node: ParleyNode): Promise<PusherClient> {
  const client = new Pusher(SECRETS.BROADCAST_APP_KEY, localPusherOptions(node.port));
  clients.push(client);
  await new Promise<void>((resolve) => client.connection.bind('connected', () => resolve()));
  return client;
}

function subscribed(client: PusherClient, channel: string): Promise<void> {
  const c = client.subscribe(channel);
  return new Promise((resolve, reject) => {
    c.bind('pusher:subscription_succeeded', () => resolve());
    c.bind('pusher:subscription_error', (e: unknown) => reject(new Error(JSON.stringify(e))));
  });
}

/** Every `event` received on `channel`, as its data. */
function received(client: PusherClient, channel: string, event: string): unknown[] {
  const got: unknown[] = [];
  client.channel(channel).bind(event, (data: unknown) => got.push(data));
  return got;
}

/** A /metrics counter of a node. */
async function counterOf(node: ParleyNode, name: string): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const match = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  assert.ok(match, `${node.name}'s /metrics has ${name}`);
  return Number(match[1]);
}

/** What a node has received from the others so far. */
const receivedBy = (node: ParleyNode) => counterOf(node, 'parley_cluster_channel_messages_received_total');
/** Of those, what reached at least one of its sockets. */
const deliveredBy = (node: ParleyNode) => counterOf(node, 'parley_cluster_channel_messages_delivered_total');

describe('three nodes: a channel’s events go only to the nodes subscribed to it', { timeout: 90_000 }, () => {
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;
  let node3: ParleyNode;

  before(async () => {
    cluster = await Cluster.start({ nodes: 3 });
    [node1, node2, node3] = cluster.nodes as [ParleyNode, ParleyNode, ParleyNode];
  });

  afterEach(async (t) => {
    for (const client of clients.splice(0)) client.disconnect();
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });

  after(async () => {
    await cluster?.close();
  });

  test('events triggered on node 3 reach node 1 only for node 1’s channel and node 2 only for node 2’s; node 3 receives none', async () => {
    const [on1, on2] = await Promise.all([connect(node1), connect(node2)]);
    await Promise.all([subscribed(on1, 'news-one'), subscribed(on2, 'news-two')]);
    const before = await Promise.all([node1, node2, node3].map(receivedBy));
    const deliveredBefore = await Promise.all([node1, node2, node3].map(deliveredBy));
    const one = received(on1, 'news-one', 'item');
    const two = received(on2, 'news-two', 'item');

    const sdk = sdkOn(node3);
    for (let i = 0; i < 20; i++) {
      await sdk.trigger('news-one', 'item', { i });
      await sdk.trigger('news-two', 'item', { i });
    }
    await until(() => one.length === 20 && two.length === 20, 10_000, () => `received ${one.length} and ${two.length} of 20`);
    await sleep(300);
    const after = await Promise.all([node1, node2, node3].map(receivedBy));
    assert.deepEqual(
      after.map((n, i) => n - before[i]!),
      [20, 20, 0],
      'messages received from Redis by node 1, node 2, node 3',
    );
    const deliveredAfter = await Promise.all([node1, node2, node3].map(deliveredBy));
    assert.deepEqual(deliveredAfter.map((n, i) => n - deliveredBefore[i]!), [20, 20, 0], 'of those, delivered to a socket: all of them');
    assert.deepEqual(one, Array.from({ length: 20 }, (_, i) => ({ i })));
  });

  test('a node whose last subscriber left stops receiving the channel', async () => {
    const on1 = await connect(node1);
    await subscribed(on1, 'short-lived');
    on1.unsubscribe('short-lived');
    await sleep(300); // the unsubscribe reaches node 1, which drops the channel's topic
    const before = await receivedBy(node1);
    for (let i = 0; i < 10; i++) await sdkOn(node2).trigger('short-lived', 'item', { i });
    await sleep(300);
    assert.equal((await receivedBy(node1)) - before, 0);
  });

  test('a message received from another node that reaches none of this node’s sockets counts as received, not delivered', async () => {
    const on1 = await connect(node1);
    await subscribed(on1, 'all-but-me');
    const got = received(on1, 'all-but-me', 'item');
    const [received0, delivered0] = [await receivedBy(node1), await deliveredBy(node1)];
    // Its only subscriber here is the socket the event excepts (as an app excludes the sender's own socket).
    await sdkOn(node2).trigger('all-but-me', 'item', { i: 0 }, { socket_id: on1.connection.socket_id });
    await sdkOn(node2).trigger('all-but-me', 'item', { i: 1 });
    await until(() => got.length === 1, 5_000, () => 'the event without socket_id did not arrive');
    await sleep(300);
    assert.deepEqual(got, [{ i: 1 }]);
    assert.equal((await receivedBy(node1)) - received0, 2);
    assert.equal((await deliveredBy(node1)) - delivered0, 1);
  });

  test('a payload crosses the nodes as it was triggered, character for character; the earlier release\'s form still arrives', async () => {
    const on1 = await connect(node1);
    await subscribed(on1, 'exact');
    const got: string[] = [];
    on1.connection.bind('message', (m: { event: string; data: unknown }) => m.event === 'item' && got.push(JSON.stringify(m.data)));
    // Quotes, backslashes, line breaks and non-ASCII in the data: the topic's message carries it unencoded after its header line.
    const tricky = { text: 'a "quoted"\nline\\ and \u2028 ünïcödé 🎉', nested: { list: [1, '2', null] } };
    await sdkOn(node2).trigger('exact', 'item', tricky);
    // A node of the previous release wrote the whole message as one JSON object.
    const redis = new Redis(cluster.redisUrl);
    try {
      const old = { node: 'a-node-of-the-previous-release', kind: 'event', event: 'item', data: JSON.stringify({ from: 'before' }) };
      await redis.publish(`${cluster.redisPrefix}ch:{exact}`, JSON.stringify(old));
    } finally {
      redis.disconnect();
    }
    await until(() => got.length === 2, 5_000, () => `received ${got.length} of 2`);
    assert.deepEqual(got.map((g) => JSON.parse(g)), [tricky, { from: 'before' }]);
  });

  test('an event triggered on another node right after subscription_succeeded is received (every time)', async () => {
    const client = await connect(node2);
    const sdk = sdkOn(node1);
    for (let i = 0; i < 25; i++) {
      const channel = `fresh-${i}`;
      await subscribed(client, channel);
      const got = received(client, channel, 'first');
      await sdk.trigger(channel, 'first', { i });
      await until(() => got.length === 1, 5_000, () => `the event to ${channel} right after subscribing was lost`);
    }
  });

  test('presence members, whispers and occupancy still cross the nodes', async () => {
    const sdk = sdkOn(node1);
    const member = (node: ParleyNode, userId: string) => {
      const client = new Pusher(SECRETS.BROADCAST_APP_KEY, {
        ...localPusherOptions(node.port),
        channelAuthorization: {
          endpoint: '/unused',
          transport: 'ajax',
          customHandler: ({ socketId, channelName }, callback) => callback(null, sdk.authorizeChannel(socketId, channelName, { user_id: userId })),
        },
      });
      clients.push(client);
      return client;
    };
    const ann = member(node1, 'ann');
    const ben = member(node3, 'ben');
    await subscribed(ann, 'presence-room');
    const joined: unknown[] = [];
    ann.channel('presence-room').bind('pusher:member_added', (m: unknown) => joined.push(m));
    await subscribed(ben, 'presence-room');
    await until(() => joined.length === 1, 5_000, () => 'ann did not see ben join from another node');
    const whispers = received(ann, 'presence-room', 'client-typing');
    ben.channel('presence-room').trigger('client-typing', { who: 'ben' });
    await until(() => whispers.length === 1, 5_000, () => 'ben’s whisper did not cross to node 1');
    // Occupancy is asked of every node, so node 2 (no subscriber of the channel, no topic of it) answers for all.
    const users = (await (await sdkOn(node2).get({ path: '/channels/presence-room/users' })).json()) as { users: { id: string }[] };
    assert.deepEqual(users.users.map((u) => u.id).sort(), ['ann', 'ben']);
    const info = await (await sdkOn(node2).get({ path: '/channels/presence-room', params: { info: 'user_count,subscription_count' } })).json();
    assert.deepEqual(info, { occupied: true, user_count: 2, subscription_count: 2 });
  });
});
