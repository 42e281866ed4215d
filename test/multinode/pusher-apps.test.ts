// Several Pusher apps (BROADCAST_APPS_FILE) on two real Parley processes sharing one Redis: an app's events,
// presence and channel lists reach across nodes within that app and never into another app, although the
// apps use the same channel names.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { Cluster } from '../../testkit/cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { localPusherOptions, Pusher, type PusherClient } from '../../testkit/pusher.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep, until } from '../../testkit/wait.js';

interface AppCredentials {
  readonly id: string;
  readonly key: string;
  readonly secret: string;
}

const DEFAULT_APP: AppCredentials = { id: SECRETS.BROADCAST_APP_ID, key: SECRETS.BROADCAST_APP_KEY, secret: SECRETS.BROADCAST_APP_SECRET };
const APP_B: AppCredentials = { id: 'b', key: 'key-of-app-b', secret: 'secret-of-app-b-with-32-bytes-at-least' };
const clients: PusherClient[] = [];

const sdkFor = (app: AppCredentials, node: ParleyNode): PusherServer =>
  new PusherServer({ appId: app.id, key: app.key, secret: app.secret, host: '127.0.0.1', port: String(node.port), useTLS: false });

async function connect(app: AppCredentials, node: ParleyNode, userId: string): Promise<PusherClient> {
  const sdk = sdkFor(app, node);
  const client = new Pusher(app.key, {
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

describe('several apps on two nodes', { timeout: 60_000 }, () => {
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;

  before(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'parley-apps-')), 'apps.json');
    writeFileSync(file, JSON.stringify([APP_B]));
    cluster = await Cluster.start({ nodes: 2, env: { BROADCAST_APPS_FILE: file } });
    [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
  });

  afterEach(async (t) => {
    for (const client of clients.splice(0)) client.disconnect();
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });

  after(async () => {
    await cluster?.close();
  });

  test('an event triggered on one node reaches the app’s subscribers on the other node, and no other app’s', async () => {
    const [bOnNode2, defaultOnNode2] = await Promise.all([connect(APP_B, node2, '1'), connect(DEFAULT_APP, node2, '1')]);
    await Promise.all([subscribed(bOnNode2, 'private-room'), subscribed(defaultOnNode2, 'private-room')]);
    const toB: unknown[] = [];
    const toDefault: unknown[] = [];
    bOnNode2.channel('private-room').bind('said', (data: unknown) => toB.push(data));
    defaultOnNode2.channel('private-room').bind('said', (data: unknown) => toDefault.push(data));

    await sdkFor(APP_B, node1).trigger('private-room', 'said', { text: 'to b' });
    await until(() => toB.length === 1, 5000, () => 'app b’s event did not cross to node 2');
    await sleep(300);
    assert.deepEqual(toB, [{ text: 'to b' }]);
    assert.deepEqual(toDefault, []);
  });

  test('presence and channel lists span the nodes within one app only', async () => {
    const [b1, b2, d2] = await Promise.all([connect(APP_B, node1, 'ann'), connect(APP_B, node2, 'ben'), connect(DEFAULT_APP, node2, 'dee')]);
    await Promise.all([subscribed(b1, 'presence-lobby'), subscribed(b2, 'presence-lobby'), subscribed(d2, 'presence-lobby')]);
    const users = async (app: AppCredentials, node: ParleyNode) =>
      (((await (await sdkFor(app, node).get({ path: '/channels/presence-lobby/users' })).json()) as { users: { id: string }[] }).users).map((u) => u.id).sort();
    await until(async () => (await users(APP_B, node1)).length === 2, 5000, () => 'app b’s users did not add up over the nodes');
    assert.deepEqual(await users(APP_B, node1), ['ann', 'ben']);
    assert.deepEqual(await users(DEFAULT_APP, node1), ['dee']);

    // ann (node 1) sees ben (node 2) join and leave; dee's app b namesake channel is not hers.
    const members = b1.channel('presence-lobby') as unknown as { members: { count: number } };
    await until(() => members.members.count === 2, 5000, () => `ann sees ${members.members.count} members`);
    b2.disconnect();
    await until(() => members.members.count === 1, 5000, () => 'ben’s leaving did not reach node 1');
    const dMembers = d2.channel('presence-lobby') as unknown as { members: { count: number } };
    assert.equal(dMembers.members.count, 1);
  });
});
