// pusher:signin for chat users: POST /api/chat/v1/broadcasting/user-auth signs a socket in as the token's user,
// so the host app can send to that user and end its connections through the Pusher HTTP API. Real pusher-js
// clients (userAuthentication endpoint, as a browser app configures it) against a running Parley.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { localPusherOptions, Pusher, type PusherClient } from '../../testkit/pusher.js';
import { until } from '../../testkit/wait.js';
import { startTestApp, type TestApp } from '../support/app.js';

describe('signing chat users in on their sockets', () => {
  let app: TestApp;
  const clients: PusherClient[] = [];

  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    for (const client of clients) client.disconnect();
    await app?.close();
  });

  /** A pusher-js client whose userAuthentication endpoint is Parley's, with the user's chat token. */
  async function signedIn(userId: number): Promise<PusherClient> {
    const client = new Pusher(app.config.broadcast.appKey, {
      ...localPusherOptions(app.port),
      userAuthentication: {
        endpoint: `${app.api}/broadcasting/user-auth`,
        transport: 'ajax',
        headers: { Authorization: `Bearer ${await app.token(userId)}` },
      },
    });
    clients.push(client);
    const done = new Promise<void>((resolve) => client.connection.bind('connected', () => resolve()));
    client.signin();
    await done;
    return client;
  }

  test('a signed-in socket receives what is sent to its user, and only its user', async () => {
    const [ann, bob] = await Promise.all([signedIn(71), signedIn(72)]);
    const heard: Record<string, unknown[]> = { ann: [], bob: [] };
    ann.user.bind('Notice', (data: unknown) => heard.ann!.push(data));
    bob.user.bind('Notice', (data: unknown) => heard.bob!.push(data));
    await until(async () => (await app.app.realtime!.occupancy({ channel: '#server-to-user-71' })).has('#server-to-user-71'), 5_000, () => 'user 71 never signed in');

    app.app.realtime!.publish(['#server-to-user-71'], 'Notice', JSON.stringify({ text: 'for Ann' }));
    await until(() => heard.ann!.length === 1, 5_000, () => 'Ann heard nothing');
    assert.deepEqual(heard, { ann: [{ text: 'for Ann' }], bob: [] });
  });

  test("ending a user's connections closes that user's sockets with 4009 and no one else's", async () => {
    const [first, second, other] = await Promise.all([signedIn(81), signedIn(81), signedIn(82)]);
    await until(async () => (await app.app.realtime!.occupancy({ channel: '#server-to-user-81' })).get('#server-to-user-81')?.subscriptionCount === 2, 5_000, () => 'user 81 not signed in twice');
    // pusher-js reports the pusher:error frame and the close that follows; each socket must have been told 4009.
    const codes = new Set<string>();
    [first, second].forEach((client, i) => client.connection.bind('error', (e: { data?: { code?: number } }) => e.data?.code !== undefined && codes.add(`${i}:${e.data.code}`)));

    await app.app.realtime!.terminateUserConnections('81');
    await until(() => first.connection.state !== 'connected' && second.connection.state !== 'connected', 5_000, () => 'still connected');
    assert.deepEqual([...codes].sort(), ['0:4009', '1:4009']);
    assert.equal(other.connection.state, 'connected');
  });

  test('the endpoint answers {auth, user_data} for the token user, and refuses without a token or with a bad socket id', async () => {
    const form = (socketId: string) => ({ 'content-type': 'application/x-www-form-urlencoded', body: new URLSearchParams({ socket_id: socketId }) });
    const signed = await fetch(`${app.api}/broadcasting/user-auth`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${await app.token(90)}` },
      body: form('123.456').body,
    });
    assert.equal(signed.status, 200);
    const body = (await signed.json()) as { auth: string; user_data: string };
    assert.equal(body.user_data, '{"id":"90"}');
    assert.match(body.auth, new RegExp(`^${app.config.broadcast.appKey}:[0-9a-f]{64}$`));

    const anonymous = await fetch(`${app.api}/broadcasting/user-auth`, { method: 'POST', headers: { 'content-type': form('1.2')['content-type'] }, body: form('1.2').body });
    assert.equal(anonymous.status, 401);
    const badSocket = await app.request(90, 'POST', '/broadcasting/user-auth', { socket_id: 'abc' });
    assert.equal(badSocket.status, 403);
    assert.equal(badSocket.body.code, 'forbidden');
  });
});
