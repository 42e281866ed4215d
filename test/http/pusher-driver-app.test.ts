// BROADCAST_DRIVER=pusher in a whole Parley: the configuration it needs, what browsers are told, how channels
// are signed, and what the external server receives when the chat API is used. The external server here is a
// real HTTP server that records signed Pusher HTTP API requests (test/support/pusher-recorder.ts); the same
// with a second Parley as the external server and real Echo clients is test/multinode/pusher-driver.test.ts.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import WebSocket from 'ws';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { until } from '../../testkit/wait.js';
import { PusherRecorder } from '../support/pusher-recorder.js';
import { SECRETS } from '../../testkit/secrets.js';

const PUSHER = { BROADCAST_DRIVER: 'pusher', PUSHER_APP_ID: '1', PUSHER_APP_KEY: 'k', PUSHER_APP_SECRET: 's' } as const;
const load = (env: Record<string, string>) => loadConfig({ CHAT_DATA_DIR: '/tmp/parley-config-test', ...SECRETS, ...env });

describe('BROADCAST_DRIVER=pusher configuration', () => {
  test('the app id, key and secret are required, and the error names the missing ones', () => {
    assert.throws(() => load({ BROADCAST_DRIVER: 'pusher', PUSHER_APP_KEY: 'k' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^BROADCAST_DRIVER=pusher needs PUSHER_APP_ID, PUSHER_APP_KEY, PUSHER_APP_SECRET \(missing: PUSHER_APP_ID, PUSHER_APP_SECRET\)\. Fix: /);
      return true;
    });
  });

  test('without PUSHER_HOST it is hosted Pusher on the cluster: api-{cluster}.pusher.com over https, browsers at ws-{cluster}.pusher.com', () => {
    const { pusher } = load({ ...PUSHER, PUSHER_APP_CLUSTER: 'eu' });
    assert.deepEqual(pusher, {
      appId: '1',
      key: 'k',
      secret: 's',
      host: 'api-eu.pusher.com',
      port: 443,
      scheme: 'https',
      cluster: 'eu',
      maxEventBytes: 10_240,
      client: { host: 'ws-eu.pusher.com', port: 443, tls: true },
    });
    assert.equal(load(PUSHER).pusher!.host, 'api-mt1.pusher.com', 'cluster mt1 by default');
  });

  test('with PUSHER_HOST browsers use the same address, unless PUSHER_CLIENT_* says otherwise', () => {
    const soketi = load({ ...PUSHER, PUSHER_HOST: 'soketi', PUSHER_PORT: '6001', PUSHER_SCHEME: 'http', PUSHER_MAX_EVENT_BYTES: '102400' });
    assert.deepEqual([soketi.pusher!.host, soketi.pusher!.port, soketi.pusher!.scheme, soketi.pusher!.maxEventBytes], ['soketi', 6001, 'http', 102_400]);
    assert.deepEqual(soketi.pusher!.client, { host: 'soketi', port: 6001, tls: false });
    assert.equal(load({ ...PUSHER, PUSHER_HOST: 'reverb', PUSHER_SCHEME: 'http' }).pusher!.port, 80);

    const proxied = load({ ...PUSHER, PUSHER_HOST: 'reverb.internal', PUSHER_PORT: '8080', PUSHER_SCHEME: 'http', PUSHER_CLIENT_HOST: 'ws.example.com', PUSHER_CLIENT_SCHEME: 'https' });
    assert.deepEqual(proxied.pusher!.client, { host: 'ws.example.com', port: 443, tls: true });
    const port = load({ ...PUSHER, PUSHER_HOST: 'h', PUSHER_CLIENT_PORT: '8443' });
    assert.deepEqual(port.pusher!.client, { host: 'h', port: 8443, tls: true });
  });

  test('a bad scheme or port is a configuration error', () => {
    assert.throws(() => load({ ...PUSHER, PUSHER_SCHEME: 'ws' }), /PUSHER_SCHEME must be one of https, http, got "ws"/);
    assert.throws(() => load({ ...PUSHER, PUSHER_HOST: 'h', PUSHER_PORT: '70000' }), /PUSHER_PORT must be a port/);
    assert.throws(() => load({ ...PUSHER, PUSHER_MAX_EVENT_BYTES: '0' }), /PUSHER_MAX_EVENT_BYTES must be an integer ≥ 1 \(bytes\), got "0"/);
  });

  test('other drivers need none of it', () => {
    assert.equal(load({}).pusher, null);
    assert.equal(load({ BROADCAST_DRIVER: 'log' }).pusher, null);
  });

  test('BROADCAST_CHAT_CHANNELS is own by default; relay is for a built-in server, anything else is refused', () => {
    assert.equal(load({}).broadcast.chatChannels, 'own');
    assert.equal(load({ BROADCAST_CHAT_CHANNELS: 'relay' }).broadcast.chatChannels, 'relay');
    assert.throws(() => load({ ...PUSHER, BROADCAST_CHAT_CHANNELS: 'relay' }), /BROADCAST_CHAT_CHANNELS=relay is for the Parley whose built-in server/);
    assert.throws(() => load({ BROADCAST_CHAT_CHANNELS: 'yes' }), /BROADCAST_CHAT_CHANNELS must be one of own, relay/);
  });
});

describe('a Parley with BROADCAST_DRIVER=pusher', () => {
  let server: PusherRecorder;
  let app: TestApp;
  let nextUser = 8100;
  const users = (n: number) => Array.from({ length: n }, () => nextUser++);

  before(async () => {
    server = await PusherRecorder.start();
    app = await startTestApp({ env: { ...server.env(), PUSHER_MAX_EVENT_BYTES: '4000' } });
  });
  after(async () => {
    await app?.close();
    await server?.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  async function ok(userId: number, method: string, path: string, body?: unknown, status = 200, headers?: Record<string, string>) {
    const res = await app.request(userId, method, path, body, headers);
    assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  test('GET /client-config tells browsers the external server’s key, host, port and TLS', async () => {
    const res = await fetch(`${app.api}/client-config`);
    assert.deepEqual(await res.json(), { app_key: server.key, ws_host: '127.0.0.1', ws_port: server.port, force_tls: false, realtime: true, demo: false });
  });

  test('channel and user authorizations are signed with the external app’s key and secret', async () => {
    const [alice] = users(1);
    const channel = `private-chat.user.${alice}`;
    const auth = await ok(alice!, 'POST', '/broadcasting/auth', { socket_id: '12.34', channel_name: channel });
    const signature = createHmac('sha256', server.secret).update(`12.34:${channel}`).digest('hex');
    assert.equal(auth.auth, `${server.key}:${signature}`);

    const signin = await ok(alice!, 'POST', '/broadcasting/user-auth', { socket_id: '12.34' });
    assert.equal(signin.user_data, JSON.stringify({ id: String(alice) }));
    assert.equal(signin.auth, `${server.key}:${createHmac('sha256', server.secret).update(`12.34::user::${signin.user_data}`).digest('hex')}`);
  });

  test('Parley runs no socket server of its own', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${app.port}/app/${server.key}?protocol=7`);
    const outcome = await new Promise<string>((resolve) => {
      socket.once('open', () => resolve('open'));
      socket.once('error', () => resolve('refused'));
    });
    socket.terminate();
    assert.equal(outcome, 'refused');
  });

  test('a message sent through the API reaches the external server: MessageSent on the conversation, InboxUpdated per user, X-Socket-ID as socket_id', async () => {
    const [alice, bob] = users(2);
    await ok(bob!, 'GET', '/conversations');
    const conversation = (await ok(alice!, 'POST', '/conversations', { user_id: bob }, 201)).data;
    server.requests.length = 0;

    const message = (await ok(alice!, 'POST', `/conversations/${conversation.id}/messages`, { body: 'Hi Bob' }, 201, { 'X-Socket-ID': '5.6' })).data;
    // Dispatched before the response: already at the server.
    const events = server.events();
    assert.ok(server.requests.every((r) => r.signatureValid));
    const sent = events.find((e) => e.name === 'MessageSent')!;
    assert.deepEqual(sent.channels, [`private-chat.conversation.${conversation.id}`]);
    const { edited_at: _editedAt, ...payload } = message; // MessageSent carries no edited_at
    assert.deepEqual(JSON.parse(sent.data), payload);
    assert.equal(sent.socket_id, '5.6');
    const inbox = events.filter((e) => e.name === 'InboxUpdated');
    assert.deepEqual(inbox.map((e) => e.channels[0]).sort(), [`private-chat.user.${alice}`, `private-chat.user.${bob}`].sort());
    assert.ok(inbox.every((e) => JSON.parse(e.data).last_message.id === message.id && e.socket_id === '5.6'));
  });

  test('an event above PUSHER_MAX_EVENT_BYTES is not sent, is counted in /metrics, and the message is committed and listed with ?after=', async () => {
    const [alice, bob] = users(2);
    await ok(bob!, 'GET', '/conversations');
    const conversation = (await ok(alice!, 'POST', '/conversations', { user_id: bob }, 201)).data;
    const first = (await ok(alice!, 'POST', `/conversations/${conversation.id}/messages`, { body: 'short' }, 201)).data;
    server.requests.length = 0;

    const long = (await ok(alice!, 'POST', `/conversations/${conversation.id}/messages`, { body: 'x'.repeat(5000) }, 201)).data;
    assert.deepEqual(server.events().filter((e) => e.name === 'MessageSent'), [], 'MessageSent (over 4000 bytes) was not sent');
    assert.deepEqual(server.events().filter((e) => e.name === 'InboxUpdated'), [], 'nor the InboxUpdated events carrying it');

    const metrics = await (await fetch(`${app.baseUrl}/metrics`)).text();
    assert.match(metrics, /^parley_pusher_events_failed_total\{event="MessageSent",reason="too_large"\} 1$/m);
    assert.match(metrics, /^parley_pusher_events_failed_total\{event="InboxUpdated",reason="too_large"\} 2$/m);
    // How a client catches up: everything after the last message it has.
    const caughtUp = await ok(bob!, 'GET', `/conversations/${conversation.id}/messages?after=${first.id}`);
    assert.deepEqual(caughtUp.data.map((m: { id: number }) => m.id), [long.id]);
  });

  test('removing a member terminates that user’s connections on the external server; leaving does not', async () => {
    const [owner, removed, leaver] = users(3);
    await Promise.all([removed, leaver].map((u) => ok(u!, 'GET', '/conversations')));
    const groupId = (await ok(owner!, 'POST', '/groups', { name: 'Team', user_ids: [removed, leaver] }, 201)).data.id;
    server.requests.length = 0;

    await ok(owner!, 'DELETE', `/groups/${groupId}/participants/${removed}`, undefined, 204);
    await ok(leaver!, 'POST', `/groups/${groupId}/leave`, undefined, 204);
    const terminations = server.requests.filter((r) => r.path.endsWith('/terminate_connections')).map((r) => r.path);
    assert.deepEqual(terminations, [`/apps/${server.appId}/users/${removed}/terminate_connections`]);
    // And the events still go out, after the termination.
    await until(() => server.events().some((e) => e.name === 'GroupMembershipRevoked'), 2000, () => 'GroupMembershipRevoked');
    const revoked = server.events().filter((e) => e.name === 'GroupMembershipRevoked').map((e) => JSON.parse(e.data));
    assert.deepEqual(revoked.map((p) => [p.user_id, p.reason]), [[removed, 'removed'], [leaver, 'left']]);
    // The removed member's new authorization is refused by the auth endpoint.
    const again = await app.request(removed!, 'POST', '/broadcasting/auth', { socket_id: '1.2', channel_name: `private-chat.conversation.${groupId}` });
    assert.equal(again.status, 403);
  });
});
