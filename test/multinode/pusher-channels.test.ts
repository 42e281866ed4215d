// Presence channels and client events across real Parley processes sharing one Redis: a user's tabs may sit on
// different nodes and still count as one member; whispers reach subscribers on every node. The clients are
// stock pusher-js, their subscriptions signed with the official `pusher` server SDK, as a host app would.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { Cluster } from '../../testkit/cluster.js';
import type { RedisCluster } from '../../testkit/redis-cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { localPusherOptions, Pusher, type PusherClient } from '../../testkit/pusher.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep, until } from '../../testkit/wait.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';

/** The host app's server side: signs subscriptions with the shared app secret. */
const sdk = new PusherServer({ appId: SECRETS.BROADCAST_APP_ID, key: SECRETS.BROADCAST_APP_KEY, secret: SECRETS.BROADCAST_APP_SECRET, host: '127.0.0.1' });

interface Member {
  id: string;
  info: unknown;
}

/** One browser tab: a pusher-js client on one node, present as `userId`, recording what it hears. */
class Tab {
  readonly memberEvents: string[] = [];
  readonly whispers: unknown[] = [];
  members: Member[] = [];

  private constructor(readonly client: PusherClient) {}

  static async open(node: ParleyNode, userId: string, name = `User ${userId}`): Promise<Tab> {
    const client = new Pusher(SECRETS.BROADCAST_APP_KEY, {
      ...localPusherOptions(node.port),
      channelAuthorization: {
        endpoint: '/unused',
        transport: 'ajax',
        customHandler: ({ socketId, channelName }, callback) =>
          callback(null, channelName.startsWith('presence-') ? sdk.authorizeChannel(socketId, channelName, { user_id: userId, user_info: { name } }) : sdk.authorizeChannel(socketId, channelName)),
      },
    });
    tabs.push(client);
    await new Promise<void>((resolve) => client.connection.bind('connected', () => resolve()));
    return new Tab(client);
  }

  /** Joins a presence channel and resolves with the members it was told of. */
  join(channel: string): Promise<void> {
    const subscribed = this.client.subscribe(channel);
    subscribed.bind('pusher:member_added', (m: Member) => this.memberEvents.push(`+${m.id}`));
    subscribed.bind('pusher:member_removed', (m: Member) => this.memberEvents.push(`-${m.id}`));
    subscribed.bind('client-wave', (data: unknown) => this.whispers.push(data));
    return new Promise((resolve, reject) => {
      subscribed.bind('pusher:subscription_succeeded', (members: { each(cb: (m: Member) => void): void }) => {
        this.members = [];
        members.each((m) => this.members.push(m));
        resolve();
      });
      subscribed.bind('pusher:subscription_error', (e: unknown) => reject(new Error(`subscription refused: ${JSON.stringify(e)}`)));
    });
  }

  whisper(channel: string, data: unknown): void {
    assert.ok(this.client.channel(channel).trigger('client-wave', data));
  }

  close(): void {
    this.client.disconnect();
  }
}

const tabs: PusherClient[] = [];

for (const backend of REDIS_BACKENDS) describe(`presence channels and client events on two nodes sharing ${backend.name}`, { timeout: 60_000 }, () => {
  let redis: RedisCluster | undefined;
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;
  let channelNo = 0;
  const freshChannel = () => `presence-room-${++channelNo}`;

  before(async () => {
    redis = await backend.start();
    cluster = await Cluster.start({ redis, nodes: 2 });
    [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
  });

  afterEach(async (t) => {
    for (const client of tabs.splice(0)) client.disconnect();
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });

  after(async () => {
    await cluster?.close();
    await redis?.close();
  });

  test('a member on another node is in the list, and joining is announced across nodes', async () => {
    const channel = freshChannel();
    const ann = await Tab.open(node1, 'ann', 'Ann');
    await ann.join(channel);
    const bob = await Tab.open(node2, 'bob', 'Bob');
    await bob.join(channel);

    assert.deepEqual(bob.members.map((m) => m.id).sort(), ['ann', 'bob']);
    assert.deepEqual(bob.members.find((m) => m.id === 'ann')?.info, { name: 'Ann' });
    await until(() => ann.memberEvents.length === 1, 5_000, () => `ann heard ${JSON.stringify(ann.memberEvents)}`);
    assert.deepEqual(ann.memberEvents, ['+bob']);
  });

  test('two tabs of one user on two nodes are one member: added once, removed only when the last tab leaves', async () => {
    const channel = freshChannel();
    const watcher = await Tab.open(node1, 'watcher');
    await watcher.join(channel);
    const tab1 = await Tab.open(node1, 'carol');
    await tab1.join(channel);
    const tab2 = await Tab.open(node2, 'carol');
    await tab2.join(channel);
    assert.deepEqual(tab2.members.map((m) => m.id).sort(), ['carol', 'watcher']);

    await until(() => watcher.memberEvents.length >= 1, 5_000, () => 'no member_added');
    tab1.close();
    await sleep(500); // room for a wrong member_removed to arrive
    assert.deepEqual(watcher.memberEvents, ['+carol']);

    tab2.close();
    await until(() => watcher.memberEvents.length === 2, 5_000, () => `watcher heard ${JSON.stringify(watcher.memberEvents)}`);
    assert.deepEqual(watcher.memberEvents, ['+carol', '-carol']);
  });

  test('a whisper reaches the other subscribers on both nodes and never its sender', async () => {
    const channel = freshChannel();
    const [sender, sameNode, otherNode] = await Promise.all([Tab.open(node1, 'dan'), Tab.open(node1, 'eve'), Tab.open(node2, 'fay')]);
    for (const tab of [sender, sameNode, otherNode]) await tab.join(channel);

    sender.whisper(channel, { hello: 'all' });
    await until(() => sameNode.whispers.length === 1 && otherNode.whispers.length === 1, 5_000, () => 'whisper not delivered everywhere');
    assert.deepEqual(otherNode.whispers, [{ hello: 'all' }]);
    await sleep(200);
    assert.deepEqual(sender.whispers, []);
  });

  test('the members of a node that shuts down leave the channel for the other nodes at once', async () => {
    const node3 = await cluster.startNode();
    const channel = freshChannel();
    const watcher = await Tab.open(node1, 'gus');
    await watcher.join(channel);
    const leaving = await Tab.open(node3, 'hal');
    await leaving.join(channel);
    await until(() => watcher.memberEvents.includes('+hal'), 5_000, () => 'no member_added');

    assert.equal(await node3.stop('SIGTERM'), 0);
    await until(() => watcher.memberEvents.includes('-hal'), 5_000, () => `watcher heard ${JSON.stringify(watcher.memberEvents)}`);
  });
});
