// Pusher webhooks from two real Parley processes sharing one Redis: channel_occupied, channel_vacated,
// member_added and member_removed are decided once per cluster, so each is received once however the
// subscribers are spread over the nodes; a client event is sent by its sender's node only. Every delivery
// is checked with the official `pusher` SDK's webhook() (test/support/webhook-receiver.ts).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { Cluster } from '../../testkit/cluster.js';
import type { RedisCluster } from '../../testkit/redis-cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { localPusherOptions, Pusher, type PusherClient } from '../../testkit/pusher.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep, until } from '../../testkit/wait.js';
import { webhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';

const sdk = new PusherServer({ appId: SECRETS.BROADCAST_APP_ID, key: SECRETS.BROADCAST_APP_KEY, secret: SECRETS.BROADCAST_APP_SECRET, host: '127.0.0.1' });
const clients: PusherClient[] = [];

async function connect(node: ParleyNode, userId: string): Promise<PusherClient> {
  const client = new Pusher(SECRETS.BROADCAST_APP_KEY, {
    ...localPusherOptions(node.port),
    channelAuthorization: {
      endpoint: '/unused',
      transport: 'ajax',
      customHandler: ({ socketId, channelName }, callback) =>
        callback(null, channelName.startsWith('presence-') ? sdk.authorizeChannel(socketId, channelName, { user_id: userId }) : sdk.authorizeChannel(socketId, channelName)),
    },
  });
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

for (const backend of REDIS_BACKENDS) describe(`webhooks on two nodes sharing ${backend.name}`, { timeout: 60_000 }, () => {
  let redis: RedisCluster | undefined;
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;
  let receiver: WebhookReceiver;

  /** The webhook events about `channel` received so far, as "name" or "name:user". */
  const about = (channel: string): string[] =>
    receiver.events().filter((e) => e.channel === channel).map((e) => (typeof e.user_id === 'string' ? `${String(e.name)}:${e.user_id}` : String(e.name)));

  before(async () => {
    receiver = await webhookReceiver({ key: SECRETS.BROADCAST_APP_KEY, secret: SECRETS.BROADCAST_APP_SECRET });
    redis = await backend.start();
    cluster = await Cluster.start({ redis, nodes: 2, env: { BROADCAST_WEBHOOK_URLS: receiver.url } });
    [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
  });

  afterEach(async (t) => {
    for (const client of clients.splice(0)) client.disconnect();
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
    assert.deepEqual(receiver.invalid, []);
  });

  after(async () => {
    await cluster?.close();
    await redis?.close();
    await receiver?.close();
  });

  test('a channel with subscribers on both nodes is occupied once and vacated once, when the last one leaves', async () => {
    const a = await connect(node1, 'a');
    const b = await connect(node2, 'b');
    await subscribed(a, 'both-nodes');
    await subscribed(b, 'both-nodes');
    await until(() => about('both-nodes').length >= 1, 5_000, () => JSON.stringify(about('both-nodes')));
    a.unsubscribe('both-nodes');
    await sleep(500); // node1 leaves: the channel is still occupied on node2
    assert.deepEqual(about('both-nodes'), ['channel_occupied']);
    b.unsubscribe('both-nodes');
    await until(() => about('both-nodes').length >= 2, 5_000, () => JSON.stringify(about('both-nodes')));
    await sleep(300); // nothing more arrives
    assert.deepEqual(about('both-nodes'), ['channel_occupied', 'channel_vacated']);
  });

  test("one user's tabs on two nodes are added once and removed once; another user is added and removed on its own", async () => {
    const channel = 'presence-webhooks';
    const tab1 = await connect(node1, 'carol');
    const tab2 = await connect(node2, 'carol');
    const dave = await connect(node2, 'dave');
    await subscribed(tab1, channel);
    await subscribed(tab2, channel);
    await subscribed(dave, channel);
    await until(() => about(channel).length >= 3, 5_000, () => JSON.stringify(about(channel)));
    await sleep(300);
    // Each node posts its own webhooks: node1's (occupied, then carol) keep their order, node2's (dave) may
    // arrive before or between them.
    assert.deepEqual([...about(channel)].sort(), ['channel_occupied', 'member_added:carol', 'member_added:dave']);
    assert.ok(about(channel).indexOf('channel_occupied') < about(channel).indexOf('member_added:carol'), JSON.stringify(about(channel)));

    tab1.disconnect();
    await sleep(500); // carol is still there on node2
    assert.equal(about(channel).length, 3);
    tab2.disconnect();
    dave.disconnect();
    await until(() => about(channel).length >= 6, 5_000, () => JSON.stringify(about(channel)));
    await sleep(300);
    assert.deepEqual(about(channel).slice(3).sort(), ['channel_vacated', 'member_removed:carol', 'member_removed:dave']);
    assert.equal(about(channel).at(-1), 'channel_vacated');
  });

  test('a client event is sent once, by its sender\'s node, with the sender\'s user_id on a presence channel', async () => {
    const channel = 'presence-whispers';
    const ann = await connect(node1, 'ann');
    const bob = await connect(node2, 'bob');
    await subscribed(ann, channel);
    await subscribed(bob, channel);
    const heard = new Promise((resolve) => bob.channel(channel).bind('client-wave', resolve));
    assert.ok(ann.channel(channel).trigger('client-wave', { hi: 'bob' }));
    assert.deepEqual(await heard, { hi: 'bob' });
    await until(() => receiver.events().some((e) => e.name === 'client_event' && e.channel === channel), 5_000, () => JSON.stringify(receiver.events()));
    await sleep(300);
    const events = receiver.events().filter((e) => e.name === 'client_event' && e.channel === channel);
    assert.equal(events.length, 1);
    assert.deepEqual({ ...events[0], socket_id: undefined }, { name: 'client_event', channel, event: 'client-wave', data: '{"hi":"bob"}', socket_id: undefined, user_id: 'ann' });
    assert.equal(events[0]!.socket_id, ann.connection.socket_id);
  });
});
