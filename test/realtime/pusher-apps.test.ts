// Several Pusher apps on one Parley (BROADCAST_APPS_FILE): each app is isolated. Black-box, as a host app
// sees it: stock pusher-js clients on each app's key, the official `pusher` server SDK with each app's
// credentials, and a webhook receiver per app validating with the SDK's webhook() checker.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { localPusherOptions, Pusher, type PusherClient } from '../../testkit/pusher.js';
import { sleep, until } from '../../testkit/wait.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { webhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

interface AppCredentials {
  readonly id: string;
  readonly key: string;
  readonly secret: string;
}

const APP_B: AppCredentials = { id: 'b', key: 'key-of-app-b', secret: 'secret-of-app-b-with-32-bytes-at-least' };
const APP_C: AppCredentials = { id: '77', key: 'key-of-app-c', secret: 'secret-of-app-c-with-32-bytes-at-least' };

let parley: TestApp;
let receiverB: WebhookReceiver;
const clients: PusherClient[] = [];

before(async () => {
  receiverB = await webhookReceiver(APP_B);
  const file = join(mkdtempSync(join(tmpdir(), 'parley-apps-')), 'apps.json');
  writeFileSync(
    file,
    JSON.stringify([
      { ...APP_B, webhook_urls: [receiverB.url] },
      { id: 77, key: APP_C.key, secret: APP_C.secret, client_events: false, max_connections: 1 },
    ]),
  );
  parley = await startTestApp({ env: { BROADCAST_APPS_FILE: file } });
});

after(async () => {
  await parley.close();
  await receiverB.close();
});

afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

const defaultApp = (): AppCredentials => ({ id: parley.config.broadcast.appId, key: parley.config.broadcast.appKey, secret: parley.config.broadcast.appSecret });

/** The host app's server SDK for one app, configured as docs/pusher-server.md says. */
const sdkFor = (app: AppCredentials): PusherServer =>
  new PusherServer({ appId: app.id, key: app.key, secret: app.secret, host: '127.0.0.1', port: String(parley.port), useTLS: false });

/** pusher-js on `app`'s key; private and presence channels are authorized with `app`'s secret, as its backend would. */
async function connect(app: AppCredentials, userId = '1'): Promise<PusherClient> {
  const sdk = sdkFor(app);
  const client = new Pusher(app.key, {
    ...localPusherOptions(parley.port),
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

/** Every `event` received on `channel`, as its data. */
function received(client: PusherClient, channel: string, event: string): unknown[] {
  const got: unknown[] = [];
  client.channel(channel).bind(event, (data: unknown) => got.push(data));
  return got;
}

describe('several Pusher apps from BROADCAST_APPS_FILE', { timeout: 30_000 }, () => {
  test('an event triggered with one app’s credentials reaches that app’s subscribers only, on the same channel name', async () => {
    const [onDefault, onB] = await Promise.all([connect(defaultApp()), connect(APP_B)]);
    await Promise.all([subscribed(onDefault, 'news'), subscribed(onB, 'news'), subscribed(onDefault, 'private-room'), subscribed(onB, 'private-room')]);
    const defaultNews = received(onDefault, 'news', 'headline');
    const bNews = received(onB, 'news', 'headline');
    const bRoom = received(onB, 'private-room', 'said');

    await sdkFor(APP_B).trigger(['news', 'private-room'], 'headline', { from: 'b' });
    await sdkFor(APP_B).trigger('private-room', 'said', { from: 'b' });
    await sdkFor(defaultApp()).trigger(['news', 'private-room'], 'said', { from: 'default' });
    await until(() => bNews.length === 1 && bRoom.length === 1, 3000, () => `b received ${JSON.stringify({ bNews, bRoom })}`);
    await sleep(200);
    assert.deepEqual(bNews, [{ from: 'b' }]);
    assert.deepEqual(bRoom, [{ from: 'b' }]);
    assert.deepEqual(defaultNews, [], 'the default app’s subscriber of "news" got app b’s event');
  });

  test('one app’s key and secret reach nothing of another: its HTTP API answers 401, its channel signatures are refused', async () => {
    const forged = new PusherServer({ appId: APP_B.id, key: APP_C.key, secret: APP_C.secret, host: '127.0.0.1', port: String(parley.port), useTLS: false });
    await assert.rejects(forged.trigger('news', 'x', {}), (err: { status?: number }) => err.status === 401);
    await assert.rejects(forged.get({ path: '/channels' }), (err: { status?: number }) => err.status === 401);
    const unknownApp = new PusherServer({ appId: 'nope', key: APP_B.key, secret: APP_B.secret, host: '127.0.0.1', port: String(parley.port), useTLS: false });
    await assert.rejects(unknownApp.trigger('news', 'x', {}), (err: { status?: number }) => err.status === 404);

    // A signature made with the default app's secret does not open app b's private channel.
    const onB = await connect(APP_B);
    const defaultSdk = sdkFor(defaultApp());
    const stolen = new Pusher(APP_B.key, {
      ...localPusherOptions(parley.port),
      channelAuthorization: { endpoint: '/unused', transport: 'ajax', customHandler: ({ socketId, channelName }, callback) => callback(null, defaultSdk.authorizeChannel(socketId, channelName)) },
    });
    clients.push(stolen);
    await assert.rejects(subscribed(stolen, 'private-room'), /Invalid channel signature/);
    await subscribed(onB, 'private-room');
  });

  test('channels and presence are listed per app', async () => {
    const [alice, bob] = await Promise.all([connect(defaultApp(), 'alice'), connect(APP_B, 'bob')]);
    await Promise.all([subscribed(alice, 'presence-lobby'), subscribed(bob, 'presence-lobby'), subscribed(bob, 'only-in-b')]);

    const usersOf = async (app: AppCredentials) => ((await (await sdkFor(app).get({ path: '/channels/presence-lobby/users' })).json()) as { users: unknown[] }).users;
    assert.deepEqual(await usersOf(defaultApp()), [{ id: 'alice' }]);
    assert.deepEqual(await usersOf(APP_B), [{ id: 'bob' }]);
    const channelsOf = async (app: AppCredentials) => Object.keys(((await (await sdkFor(app).get({ path: '/channels' })).json()) as { channels: object }).channels).sort();
    assert.deepEqual(await channelsOf(APP_B), ['only-in-b', 'presence-lobby']);
    assert.ok(!(await channelsOf(defaultApp())).includes('only-in-b'));

    // Members of one app's presence channel see only that app's members.
    const members = alice.channel('presence-lobby') as unknown as { members: { count: number } };
    assert.equal(members.members.count, 1);
  });

  test('limits and the client-event switch are the app’s own: app 77 allows one socket and no client events', async () => {
    const first = await connect(APP_C);
    await subscribed(first, 'private-x');
    const errors: unknown[] = [];
    first.connection.bind('error', (e: unknown) => errors.push(e));
    first.channel('private-x').trigger('client-hello', { hi: 1 });
    await until(() => errors.length > 0, 3000, () => 'no pusher:error for a client event on app 77');
    assert.match(JSON.stringify(errors[0]), /4301.*Client events are not enabled/);

    // A second socket on app 77 is over its max_connections (4100); the default app still takes sockets.
    const second = new Pusher(APP_C.key, { ...localPusherOptions(parley.port) });
    clients.push(second);
    const refused = new Promise<unknown>((resolve) => second.connection.bind('error', resolve));
    assert.match(JSON.stringify(await refused), /4100/);
    await connect(defaultApp());

    // Client events stay on for app b (the default, BROADCAST_CLIENT_EVENTS).
    const [b1, b2] = await Promise.all([connect(APP_B, 'u1'), connect(APP_B, 'u2')]);
    await Promise.all([subscribed(b1, 'private-y'), subscribed(b2, 'private-y')]);
    const whispers = received(b2, 'private-y', 'client-hello');
    b1.channel('private-y').trigger('client-hello', { hi: 2 });
    await until(() => whispers.length === 1, 3000, () => 'app b’s whisper did not arrive');
  });

  test('webhooks go to the app’s own URLs, signed with its own key and secret', async () => {
    const [onDefault, onB] = await Promise.all([connect(defaultApp()), connect(APP_B)]);
    await Promise.all([subscribed(onDefault, 'default-only'), subscribed(onB, 'b-only')]);
    await until(() => receiverB.events().some((e) => e.channel === 'b-only'), 5000, () => `receiver b got ${JSON.stringify(receiverB.events())}`);
    await sleep(300);
    assert.deepEqual(receiverB.invalid, []);
    assert.ok(!receiverB.events().some((e) => e.channel === 'default-only'), 'app b’s receiver got a webhook of the default app');
    assert.equal(receiverB.deliveries[0]!.headers['x-pusher-key'], APP_B.key);
  });

  test('Parley’s chat events belong to the default app: app b’s subscriber of a chat channel name gets none', async () => {
    await parley.request(2, 'GET', '/conversations'); // a user exists once they have signed in
    const conversation = await parley.request(1, 'POST', '/conversations', { user_id: 2 });
    assert.ok(conversation.status < 300, JSON.stringify(conversation.body));
    const id = (conversation.body as { data: { id: number } }).data.id;
    const onB = await connect(APP_B);
    const channel = `private-chat.conversation.${id}`;
    await subscribed(onB, channel);
    const got = received(onB, channel, 'MessageSent');
    const sent = await parley.request(1, 'POST', `/conversations/${id}/messages`, { body: 'hello' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    await sleep(300);
    assert.deepEqual(got, []);
  });
});
