// The Pusher HTTP API of the built-in server, black-box: the official `pusher` server SDK pointed at a running
// Parley (host, port, key, secret, app id; no TLS) triggers events, reads channels and users and ends users'
// connections, and raw `ws` clients assert the exact frames that arrive. Requests the SDK would never send
// (bad signatures, stale timestamps, oversize or malformed bodies) are made with fetch and a signer written
// here from Pusher's specification.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { once } from 'node:events';
import { after, afterEach, before, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { WebSocket } from 'ws';
import { localPusherOptions, Pusher } from '../../testkit/pusher.js';
import { MACHINE_REDIS_URL } from '../../testkit/redis.js';
import { until } from '../../testkit/wait.js';
import { startTestApp, type TestApp } from '../support/app.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** The host app's server SDK, configured as the README says. */
function sdkFor(app: TestApp): PusherServer {
  const { appId, appKey, appSecret } = app.config.broadcast;
  return new PusherServer({ appId, key: appKey, secret: appSecret, host: '127.0.0.1', port: String(app.port), useTLS: false });
}

/** A raw WebSocket client that keeps every text frame in order, so tests assert exact JSON. */
class RawClient {
  readonly closed: Promise<{ code: number; reason: string }>;
  socketId = '';
  private readonly frames: string[] = [];
  private readonly waiters: ((frame: string) => void)[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const frame = data.toString();
      const waiter = this.waiters.shift();
      if (waiter) waiter(frame);
      else this.frames.push(frame);
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** Connects to app's socket server and reads pusher:connection_established. */
  static async connect(app: TestApp): Promise<RawClient> {
    const ws = new WebSocket(`ws://127.0.0.1:${app.port}/app/${app.config.broadcast.appKey}?protocol=7&client=js&version=8.6.0`);
    const client = new RawClient(ws);
    cleanups.push(() => ws.terminate());
    await once(ws, 'open');
    const hello = JSON.parse(await client.next()) as { event: string; data: string };
    assert.equal(hello.event, 'pusher:connection_established');
    client.socketId = (JSON.parse(hello.data) as { socket_id: string }).socket_id;
    return client;
  }

  next(timeoutMs = 2000): Promise<string> {
    const queued = this.frames.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const onFrame = (frame: string): void => {
        clearTimeout(timer);
        resolve(frame);
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(onFrame), 1);
        reject(new Error(`no frame within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(onFrame);
    });
  }

  send(frame: unknown): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** Subscribes and waits for the server's answer (subscription_succeeded, or the error frame). */
  async subscribe(channel: string, auth?: { auth: string; channel_data?: string }): Promise<string> {
    this.send({ event: 'pusher:subscribe', data: { channel, ...auth } });
    return this.next();
  }

  /** Proves nothing else was queued for this socket: the very next frame is the answer to a ping. */
  async assertNothingElse(): Promise<void> {
    this.send({ event: 'pusher:ping', data: {} });
    assert.equal(await this.next(), '{"event":"pusher:pong","data":{}}');
  }
}

const succeeded = (channel: string): string => `{"event":"pusher_internal:subscription_succeeded","channel":${JSON.stringify(channel)},"data":"{}"}`;
/** The frame a subscriber gets for an event whose data string is `data`. */
const eventFrame = (event: string, channel: string, data: string): string => JSON.stringify({ event, channel, data });

async function subscribed(app: TestApp, ...channels: string[]): Promise<RawClient> {
  const client = await RawClient.connect(app);
  for (const channel of channels) assert.equal(await client.subscribe(channel), succeeded(channel));
  return client;
}

/** A raw client present on a presence channel as userId, its subscription signed by the SDK as a host app does. */
async function present(app: TestApp, channel: string, userId: string): Promise<RawClient> {
  const client = await RawClient.connect(app);
  const answer = JSON.parse(await client.subscribe(channel, sdkFor(app).authorizeChannel(client.socketId, channel, { user_id: userId, user_info: { name: `User ${userId}` } }))) as { event: string };
  assert.equal(answer.event, 'pusher_internal:subscription_succeeded');
  return client;
}

/** A raw client signed in (pusher:signin) as userId, signed by the SDK's authenticateUser. */
async function signedIn(app: TestApp, userId: string): Promise<RawClient> {
  const client = await RawClient.connect(app);
  const { auth, user_data } = sdkFor(app).authenticateUser(client.socketId, { id: userId });
  client.send({ event: 'pusher:signin', data: { auth, user_data } });
  assert.equal(await client.next(), JSON.stringify({ event: 'pusher:signin_success', data: { user_data } }));
  return client;
}

interface SignOptions {
  key?: string;
  secret?: string;
  /** Unix seconds; default now. */
  timestamp?: number;
  /** Overrides the body_md5 sent (null: none). */
  bodyMd5?: string | null;
  version?: string;
  params?: Record<string, string>;
}

/** A request signed as Pusher specifies: HMAC-SHA256 over "METHOD\npath\nsorted query", body_md5 over the raw body. */
async function signedRequest(app: TestApp, method: string, path: string, body?: string, options: SignOptions = {}) {
  const { appKey, appSecret } = app.config.broadcast;
  const params: Record<string, string> = {
    auth_key: options.key ?? appKey,
    auth_timestamp: String(options.timestamp ?? Math.floor(Date.now() / 1000)),
    auth_version: options.version ?? '1.0',
    ...options.params,
  };
  const md5 = options.bodyMd5 === undefined ? (body === undefined ? null : createHash('md5').update(body).digest('hex')) : options.bodyMd5;
  if (md5 !== null) params.body_md5 = md5;
  const query = Object.keys(params).sort().map((k) => `${k}=${params[k]}`).join('&');
  const signature = createHmac('sha256', options.secret ?? appSecret).update(`${method}\n${path}\n${query}`).digest('hex');
  const response = await fetch(`${app.baseUrl}${path}?${query}&auth_signature=${signature}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : (JSON.parse(text) as any) };
}

const postEvents = (app: TestApp, event: unknown, options?: SignOptions) =>
  signedRequest(app, 'POST', `/apps/${app.config.broadcast.appId}/events`, JSON.stringify(event), options);

describe('the Pusher HTTP API, with the official server SDK against a running Parley', () => {
  let app: TestApp;
  let sdk: PusherServer;

  before(async () => {
    app = await startTestApp({ env: { BROADCAST_MAX_EVENT_BYTES: '1000', BROADCAST_MAX_API_BODY_BYTES: '20000' } });
    sdk = sdkFor(app);
  });
  after(async () => {
    await app?.close();
  });

  describe('triggering events', () => {
    test('an event triggered on one channel reaches its subscribers as the exact frame, data passed through verbatim', async () => {
      const client = await subscribed(app, 'orders');
      const response = await sdk.trigger('orders', 'order-shipped', '{"id":7,  "note":"spacing kept"}');
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), {});
      assert.equal(await client.next(), eventFrame('order-shipped', 'orders', '{"id":7,  "note":"spacing kept"}'));

      // Not JSON at all: Pusher's data is any string.
      await sdk.trigger('orders', 'note', 'plain text, not JSON');
      assert.equal(await client.next(), eventFrame('note', 'orders', 'plain text, not JSON'));
      // An object is JSON-encoded by the SDK, and arrives as that text.
      await sdk.trigger('orders', 'order-paid', { id: 8, total: 12.5 });
      assert.equal(await client.next(), eventFrame('order-paid', 'orders', '{"id":8,"total":12.5}'));
      await client.assertNothingElse();
    });

    test('an event triggered on several channels reaches each channel once, and a socket on two of them twice', async () => {
      const [a, b, both, neither] = await Promise.all([subscribed(app, 'room-a'), subscribed(app, 'room-b'), subscribed(app, 'room-a', 'room-b'), subscribed(app, 'room-c')]);
      await sdk.trigger(['room-a', 'room-b', 'room-a'], 'ping', { n: 1 });
      assert.equal(await a.next(), eventFrame('ping', 'room-a', '{"n":1}'));
      assert.equal(await b.next(), eventFrame('ping', 'room-b', '{"n":1}'));
      assert.deepEqual([await both.next(), await both.next()].sort(), [eventFrame('ping', 'room-a', '{"n":1}'), eventFrame('ping', 'room-b', '{"n":1}')]);
      for (const client of [a, b, both, neither]) await client.assertNothingElse();
    });

    test('an event with socket_id reaches every subscriber except that socket', async () => {
      const [sender, other] = await Promise.all([subscribed(app, 'chat'), subscribed(app, 'chat')]);
      await sdk.trigger('chat', 'said', { text: 'hi' }, { socket_id: sender.socketId });
      assert.equal(await other.next(), eventFrame('said', 'chat', '{"text":"hi"}'));
      await sender.assertNothingElse();
    });

    test('a stock pusher-js client receives the triggered data, parsed', async () => {
      const client = new Pusher(app.config.broadcast.appKey, localPusherOptions(app.port));
      cleanups.push(() => client.disconnect());
      const heard: unknown[] = [];
      const channel = client.subscribe('news');
      channel.bind('headline', (data: unknown) => heard.push(data));
      await new Promise<void>((resolve) => channel.bind('pusher:subscription_succeeded', () => resolve()));
      await sdk.trigger('news', 'headline', { title: 'Parley speaks Pusher' });
      await until(() => heard.length === 1, 2000, () => 'pusher-js heard nothing');
      assert.deepEqual(heard, [{ title: 'Parley speaks Pusher' }]);
    });

    test('info=subscription_count,user_count answers per channel; user_count only for presence channels', async () => {
      await Promise.all([subscribed(app, 'counted'), subscribed(app, 'counted'), present(app, 'presence-lobby', '1'), present(app, 'presence-lobby', '1'), present(app, 'presence-lobby', '2')]);
      const response = await sdk.trigger(['counted', 'presence-lobby', 'empty'], 'tick', '{}', { info: 'subscription_count,user_count' });
      assert.deepEqual(await response.json(), {
        channels: {
          counted: { subscription_count: 2 },
          'presence-lobby': { subscription_count: 3, user_count: 2 },
          empty: { subscription_count: 0 },
        },
      });
    });

    test('a batch delivers each of its events and answers one entry per event, with the info asked for', async () => {
      const [x, y] = await Promise.all([subscribed(app, 'batch-x'), subscribed(app, 'batch-y')]);
      const response = await sdk.triggerBatch([
        { channel: 'batch-x', name: 'first', data: { n: 1 } },
        { channel: 'batch-y', name: 'second', data: 'two', info: 'subscription_count' },
        { channel: 'batch-x', name: 'third', data: { n: 3 }, socket_id: x.socketId },
      ]);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { batch: [{}, { subscription_count: 1 }, {}] });
      assert.equal(await x.next(), eventFrame('first', 'batch-x', '{"n":1}'));
      assert.equal(await y.next(), eventFrame('second', 'batch-y', 'two'));
      await x.assertNothingElse(); // the third excluded x's own socket
      await y.assertNothingElse();
    });

    test('a batch where no event asks for info is answered with exactly {}', async () => {
      const x = await subscribed(app, 'batch-plain');
      const response = await sdk.triggerBatch([
        { channel: 'batch-plain', name: 'first', data: { n: 1 } },
        { channel: 'batch-plain', name: 'second', data: { n: 2 } },
      ]);
      assert.equal(response.status, 200);
      assert.equal(await response.text(), '{}');
      assert.equal(await x.next(), eventFrame('first', 'batch-plain', '{"n":1}'));
      assert.equal(await x.next(), eventFrame('second', 'batch-plain', '{"n":2}'));
    });

    test("sendToUser reaches the user's signed-in sockets and no one else's", async () => {
      const [seven, eight] = await Promise.all([signedIn(app, '7'), signedIn(app, '8')]);
      const response = await sdk.sendToUser('7', 'notice', { text: 'for 7' });
      assert.equal(response.status, 200);
      assert.equal(await seven.next(), eventFrame('notice', '#server-to-user-7', '{"text":"for 7"}'));
      await eight.assertNothingElse();
    });
  });

  describe('reading channels and users', () => {
    test('the channel list holds the occupied channels starting with filter_by_prefix, with user_count for presence-', async () => {
      await Promise.all([subscribed(app, 'list-one'), subscribed(app, 'list-two', 'other'), present(app, 'presence-list', '5'), present(app, 'presence-list', '6')]);
      const all = await (await sdk.get({ path: '/channels' })).json();
      for (const channel of ['list-one', 'list-two', 'other', 'presence-list']) assert.deepEqual(all.channels[channel], {}, channel);

      const listed = await (await sdk.get({ path: '/channels', params: { filter_by_prefix: 'list-' } })).json();
      assert.deepEqual(listed, { channels: { 'list-one': {}, 'list-two': {} } });

      const presence = await (await sdk.get({ path: '/channels', params: { filter_by_prefix: 'presence-list', info: 'user_count' } })).json();
      assert.deepEqual(presence, { channels: { 'presence-list': { user_count: 2 } } });
    });

    test('user_count in a channel list needs filter_by_prefix=presence- (400)', async () => {
      const response = await signedRequest(app, 'GET', `/apps/${app.config.broadcast.appId}/channels`, undefined, { params: { info: 'user_count' } });
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'bad_request');
      assert.equal(typeof response.body.message, 'string');
    });

    test('channel info tells whether a channel is occupied and, when asked, its subscription and user counts', async () => {
      await Promise.all([subscribed(app, 'info-room'), subscribed(app, 'info-room'), present(app, 'presence-info', '1'), present(app, 'presence-info', '1')]);
      assert.deepEqual(await (await sdk.get({ path: '/channels/info-room' })).json(), { occupied: true });
      assert.deepEqual(await (await sdk.get({ path: '/channels/info-room', params: { info: 'subscription_count' } })).json(), { occupied: true, subscription_count: 2 });
      assert.deepEqual(await (await sdk.get({ path: '/channels/presence-info', params: { info: 'subscription_count,user_count' } })).json(), {
        occupied: true,
        subscription_count: 2,
        user_count: 1,
      });
      assert.deepEqual(await (await sdk.get({ path: '/channels/nobody-here', params: { info: 'subscription_count' } })).json(), { occupied: false, subscription_count: 0 });

      const refused = await signedRequest(app, 'GET', `/apps/${app.config.broadcast.appId}/channels/info-room`, undefined, { params: { info: 'user_count' } });
      assert.equal(refused.status, 400, 'user_count of a channel that is not a presence channel');
    });

    test('the users of a presence channel are listed once each, however many sockets they have; other channels are a 400', async () => {
      await Promise.all([present(app, 'presence-team', '11'), present(app, 'presence-team', '12'), present(app, 'presence-team', '11')]);
      const users = await (await sdk.get({ path: '/channels/presence-team/users' })).json();
      assert.deepEqual(
        users.users.map((u: { id: string }) => u.id).sort(),
        ['11', '12'],
      );
      assert.deepEqual(Object.keys(users.users[0]), ['id']);
      assert.deepEqual(await (await sdk.get({ path: '/channels/presence-nobody/users' })).json(), { users: [] });

      const refused = await signedRequest(app, 'GET', `/apps/${app.config.broadcast.appId}/channels/public-room/users`);
      assert.equal(refused.status, 400);
      assert.equal(refused.body.code, 'bad_request');
    });

    test('a socket that leaves is no longer counted', async () => {
      const leaving = await subscribed(app, 'short-stay');
      assert.deepEqual(await (await sdk.get({ path: '/channels/short-stay' })).json(), { occupied: true });
      leaving.ws.close();
      await leaving.closed;
      await until(async () => (await (await sdk.get({ path: '/channels/short-stay' })).json()).occupied === false, 2000, () => 'still occupied');
    });
  });

  describe('terminating a user’s connections', () => {
    test("closes every socket signed in as that user with 4009, and leaves other users' sockets open", async () => {
      const [first, second, other] = await Promise.all([signedIn(app, '21'), signedIn(app, '21'), signedIn(app, '22')]);
      const response = await sdk.terminateUserConnections('21');
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), {});
      for (const client of [first, second]) {
        const error = JSON.parse(await client.next()) as { event: string; data: { code: number } };
        assert.equal(error.event, 'pusher:error');
        assert.equal(error.data.code, 4009);
        assert.equal((await client.closed).code, 4009);
      }
      await other.assertNothingElse();
    });

    test('a user id with characters the URL must encode is terminated too', async () => {
      const client = await signedIn(app, 'ann smith');
      assert.equal((await sdk.terminateUserConnections('ann smith')).status, 200);
      assert.equal((await client.closed).code, 4009);
    });
  });

  describe('request signing', () => {
    const event = { name: 'signed', channels: ['signing'], data: '{}' };

    test('a correctly signed request made without the SDK is accepted', async () => {
      const client = await subscribed(app, 'signing');
      const response = await postEvents(app, event);
      assert.deepEqual(response, { status: 200, body: {} });
      assert.equal(await client.next(), eventFrame('signed', 'signing', '{}'));
    });

    test('a wrong signature, an unknown key, a stale or future timestamp, a wrong or missing body_md5 are 401s, and nothing is delivered', async () => {
      const client = await subscribed(app, 'signing');
      const now = Math.floor(Date.now() / 1000);
      const refusals: [string, SignOptions][] = [
        ['wrong secret', { secret: 'not-the-secret' }],
        ['unknown key', { key: 'someone-else' }],
        ['timestamp 610 s old', { timestamp: now - 610 }],
        ['timestamp 610 s ahead', { timestamp: now + 610 }],
        ['body_md5 of another body', { bodyMd5: createHash('md5').update('{}').digest('hex') }],
        ['no body_md5 with a body', { bodyMd5: null }],
        ['auth_version 2.0', { version: '2.0' }],
      ];
      for (const [why, options] of refusals) {
        const response = await postEvents(app, event, options);
        assert.equal(response.status, 401, why);
        assert.equal(response.body.code, 'unauthenticated', why);
        assert.equal(typeof response.body.message, 'string', why);
      }
      // Within the window, either way, is fine.
      assert.equal((await postEvents(app, event, { timestamp: now - 590 })).status, 200);
      assert.equal(await client.next(), eventFrame('signed', 'signing', '{}'));
      await client.assertNothingElse();
    });

    test('a request with the signature or auth parameters missing, or a query changed after signing, is a 401', async () => {
      const { appId, appKey } = app.config.broadcast;
      const unsigned = await fetch(`${app.baseUrl}/apps/${appId}/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
      assert.equal(unsigned.status, 401);
      const noSignature = await fetch(`${app.baseUrl}/apps/${appId}/channels?auth_key=${appKey}&auth_timestamp=${Math.floor(Date.now() / 1000)}&auth_version=1.0`);
      assert.equal(noSignature.status, 401);

      // The signature covers the query too: a parameter added after signing fails it.
      const path = `/apps/${appId}/channels`;
      const params = { auth_key: appKey, auth_timestamp: String(Math.floor(Date.now() / 1000)), auth_version: '1.0' };
      const query = Object.entries(params).map(([k, v]) => `${k}=${v}`).join('&');
      const signature = createHmac('sha256', app.config.broadcast.appSecret).update(`GET\n${path}\n${query}`).digest('hex');
      assert.equal((await fetch(`${app.baseUrl}${path}?${query}&auth_signature=${signature}`)).status, 200);
      assert.equal((await fetch(`${app.baseUrl}${path}?${query}&auth_signature=${signature}&filter_by_prefix=x`)).status, 401);
      assert.equal((await fetch(`${app.baseUrl}${path}?${query}&auth_signature=${signature.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`)).status, 401);
    });

    test('an unknown app id is a 404', async () => {
      const response = await signedRequest(app, 'POST', '/apps/999999/events', JSON.stringify(event));
      assert.equal(response.status, 404);
      assert.equal(response.body.code, 'not_found');
    });
  });

  describe('validation', () => {
    test('bad requests are 400s with {message, code}, and deliver nothing', async () => {
      const client = await subscribed(app, 'valid');
      const ok = { name: 'e', channels: ['valid'], data: '{}' };
      const cases: [string, unknown][] = [
        ['101 channels', { ...ok, channels: Array.from({ length: 101 }, (_, i) => `c${i}`) }],
        ['no channels', { ...ok, channels: [] }],
        ['neither channels nor channel', { name: 'e', data: '{}' }],
        ['an invalid channel name', { ...ok, channels: ['valid', 'not valid!'] }],
        ['a channel name of 165 characters', { ...ok, channels: ['c'.repeat(165)] }],
        ['a reserved event name (pusher:)', { ...ok, name: 'pusher:subscribe' }],
        ['a reserved event name (pusher_internal:)', { ...ok, name: 'pusher_internal:member_added' }],
        ['an event name of 201 characters', { ...ok, name: 'e'.repeat(201) }],
        ['no event name', { ...ok, name: undefined }],
        ['data that is not a string', { ...ok, data: { a: 1 } }],
        ['an invalid socket_id', { ...ok, socket_id: 'abc' }],
        ['an encrypted channel with another', { ...ok, channels: ['private-encrypted-x', 'valid'] }],
        ['a body that is an array', [ok]],
      ];
      for (const [why, body] of cases) {
        const response = await postEvents(app, body);
        assert.equal(response.status, 400, why);
        assert.equal(response.body.code, 'bad_request', why);
        assert.equal(typeof response.body.message, 'string', why);
      }
      const malformed = await signedRequest(app, 'POST', `/apps/${app.config.broadcast.appId}/events`, '{"name": "e", "channels": [');
      assert.equal(malformed.status, 400, 'malformed JSON');
      assert.equal(malformed.body.code, 'bad_request');
      await client.assertNothingElse();
    });

    test('an encrypted channel alone is accepted and relayed as sent', async () => {
      const sealed = '{"nonce":"bm9uY2U=","ciphertext":"c2VhbGVk"}';
      const response = await postEvents(app, { name: 'secret', channels: ['private-encrypted-vault'], data: sealed });
      assert.equal(response.status, 200);
    });

    test('data above BROADCAST_MAX_EVENT_BYTES (in bytes, not characters) is a 413; at the limit it is sent', async () => {
      const client = await subscribed(app, 'sized');
      const atLimit = 'é'.repeat(500); // 1000 bytes in UTF-8
      assert.equal((await postEvents(app, { name: 'big', channel: 'sized', data: atLimit })).status, 200);
      assert.equal(await client.next(), eventFrame('big', 'sized', atLimit));
      const over = await postEvents(app, { name: 'big', channel: 'sized', data: `${atLimit}x` });
      assert.equal(over.status, 413);
      assert.equal(over.body.code, 'payload_too_large');
      await client.assertNothingElse();
    });

    test('a body above BROADCAST_MAX_API_BODY_BYTES is a 413', async () => {
      const batch = Array.from({ length: 10 }, () => ({ channel: 'sized', name: 'e', data: 'x'.repeat(2100) }));
      const response = await signedRequest(app, 'POST', `/apps/${app.config.broadcast.appId}/batch_events`, JSON.stringify({ batch }));
      assert.equal(response.status, 413);
      assert.equal(response.body.code, 'payload_too_large');
    });

    test('a batch of more than 10 events, or with one bad event, is refused whole', async () => {
      const client = await subscribed(app, 'batched');
      const good = { channel: 'batched', name: 'e', data: '{}' };
      const path = `/apps/${app.config.broadcast.appId}/batch_events`;
      const eleven = await signedRequest(app, 'POST', path, JSON.stringify({ batch: Array.from({ length: 11 }, () => good) }));
      assert.equal(eleven.status, 400);
      const oneBad = await signedRequest(app, 'POST', path, JSON.stringify({ batch: [good, { ...good, channel: 'bad channel' }] }));
      assert.equal(oneBad.status, 400);
      const tooBig = await signedRequest(app, 'POST', path, JSON.stringify({ batch: [good, { ...good, data: 'x'.repeat(1001) }] }));
      assert.equal(tooBig.status, 413);
      assert.equal((await signedRequest(app, 'POST', path, JSON.stringify({ batch: 'no' }))).status, 400);
      await client.assertNothingElse();
    });

    test('a channel name of 164 characters in a path is read; 165 characters is a 400', async () => {
      const longest = 'c'.repeat(164);
      await subscribed(app, longest);
      assert.deepEqual(await (await sdk.get({ path: `/channels/${longest}` })).json(), { occupied: true });
      const response = await signedRequest(app, 'GET', `/apps/${app.config.broadcast.appId}/channels/${'c'.repeat(165)}`);
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'bad_request');
    });
  });
});

describe('the Pusher HTTP API with BROADCAST_DRIVER=log', () => {
  test('is not served: there is no built-in socket server to publish to', async () => {
    const app = await startTestApp({ env: { BROADCAST_DRIVER: 'log' } });
    cleanups.push(() => app.close());
    const response = await signedRequest(app, 'POST', `/apps/${app.config.broadcast.appId}/events`, JSON.stringify({ name: 'e', channel: 'c', data: '{}' }));
    assert.equal(response.status, 404);
  });
});

describe('the Pusher HTTP API on two nodes sharing a Redis', () => {
  let first: TestApp;
  let second: TestApp;

  before(async () => {
    const env = { REDIS_URL: MACHINE_REDIS_URL, REDIS_PREFIX: `parley-api-test-${process.pid}-${Date.now()}:` };
    first = await startTestApp({ env });
    second = await startTestApp({ env });
  });
  after(async () => {
    await first?.close();
    await second?.close();
  });

  test('an event triggered on one node reaches the subscribers on the other', async () => {
    const [here, there] = await Promise.all([subscribed(first, 'everywhere'), subscribed(second, 'everywhere')]);
    await sdkFor(first).trigger('everywhere', 'hello', { from: 'first' });
    assert.equal(await here.next(), eventFrame('hello', 'everywhere', '{"from":"first"}'));
    assert.equal(await there.next(), eventFrame('hello', 'everywhere', '{"from":"first"}'));
  });

  test('channel info, the channel list and presence users count the sockets and users of every node', async () => {
    await Promise.all([subscribed(first, 'spread'), subscribed(second, 'spread'), subscribed(second, 'spread-b')]);
    await Promise.all([present(first, 'presence-spread', 'u1'), present(second, 'presence-spread', 'u1'), present(second, 'presence-spread', 'u2')]);
    const sdk = sdkFor(first);
    assert.deepEqual(await (await sdk.get({ path: '/channels/spread', params: { info: 'subscription_count' } })).json(), { occupied: true, subscription_count: 2 });
    assert.deepEqual(await (await sdk.get({ path: '/channels/spread-b' })).json(), { occupied: true }, 'a channel occupied only on the other node');
    assert.deepEqual(await (await sdk.get({ path: '/channels', params: { filter_by_prefix: 'spread' } })).json(), { channels: { spread: {}, 'spread-b': {} } });
    assert.deepEqual(await (await sdk.get({ path: '/channels/presence-spread', params: { info: 'subscription_count,user_count' } })).json(), {
      occupied: true,
      subscription_count: 3,
      user_count: 2,
    });
    const users = await (await sdk.get({ path: '/channels/presence-spread/users' })).json();
    assert.deepEqual(users.users.map((u: { id: string }) => u.id).sort(), ['u1', 'u2']);
    const response = await sdk.trigger(['spread', 'presence-spread'], 'counted', '{}', { info: 'subscription_count,user_count' });
    assert.deepEqual(await response.json(), { channels: { spread: { subscription_count: 2 }, 'presence-spread': { subscription_count: 3, user_count: 2 } } });
  });

  test("terminate_connections on one node closes the user's sockets on the other", async () => {
    const there = await signedIn(second, '31');
    assert.equal((await sdkFor(first).terminateUserConnections('31')).status, 200);
    assert.equal((await there.closed).code, 4009);
  });
});
