// A service-wide ban as a connected user lives it (docs/api.md "User bans"), with real Laravel Echo clients over
// real WebSockets: PUT /users/{id}/ban closes each of their sockets at once (pusher:error 4009, then the close,
// and pusher-js does not reconnect), whether the socket is signed in or only holds their own channel; their token
// then answers 403 user_banned, also at the channel auth endpoint; once DELETE /users/{id}/ban has answered they
// connect, subscribe and hear their events again. Nobody else's socket is touched.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.js';
import { EchoClient, EchoClients } from '../support/echo.js';
import { sleep } from '../../testkit/wait.js';

/** What pusher-js told of its connection: the pusher:error codes it got and the states it went through. */
function watch(client: EchoClient): { errors: number[]; states: string[] } {
  const seen = { errors: [] as number[], states: [] as string[] };
  const connection = client.echo.connector.pusher.connection;
  connection.bind('error', (e: { data?: { code?: number } }) => void (e.data?.code !== undefined && seen.errors.push(e.data.code)));
  connection.bind('state_change', ({ current }: { current: string }) => void seen.states.push(current));
  return seen;
}

describe('a service-wide ban and the banned user\'s sockets', () => {
  let app: TestApp;
  const clients = new EchoClients(() => app);
  let nextUserId = 7600;
  const server = (method: string, path: string, body?: unknown) => app.request(null, method, path, body, { 'x-chat-server-key': app.config.serverKey });

  before(async () => {
    app = await startTestApp({ database: 'pglite' });
  });
  afterEach(async () => {
    await clients.disconnectAll();
  });
  after(async () => {
    await clients.disconnectAll();
    await app?.close();
  });

  test('the ban closes their sockets at once (4009, no reconnection), their token answers 403 user_banned; after the unban they connect again', async () => {
    const [banned, friend] = [nextUserId++, nextUserId++];
    for (const id of [banned, friend]) assert.equal((await app.request(id, 'GET', '/conversations')).status, 200);
    const dm = (await app.request(friend, 'POST', '/conversations', { user_id: banned })).body.data.id as number;

    const signedIn = await clients.connect(banned, { signin: true });
    await signedIn.subscribeUser();
    const subscribedOnly = await clients.listening(banned, [dm]);
    const bystander = await clients.listening(friend, [dm]);
    const tabs = [signedIn, subscribedOnly].map((client) => ({ client, seen: watch(client) }));
    const bystanderSeen = watch(bystander);

    const ban = await server('PUT', `/users/${banned}/ban`, { reason: 'spam' });
    assert.equal(ban.status, 200, JSON.stringify(ban.body));
    // At once: closed by the time the ban has answered and the close frame has crossed the loopback.
    await sleep(200);
    for (const { client, seen } of tabs) {
      assert.ok(seen.errors.length > 0 && seen.errors.every((code) => code === 4009), `pusher:error 4009, the code pusher-js does not reconnect after: ${seen.errors.join(', ')}`);
      assert.notEqual(client.echo.connector.pusher.connection.state, 'connected');
    }
    // And it stays closed: pusher-js would have reconnected within a second.
    await sleep(1500);
    for (const { client, seen } of tabs) {
      assert.notEqual(client.echo.connector.pusher.connection.state, 'connected');
      assert.ok(!seen.states.includes('connecting'), `no reconnection: ${seen.states.join(' → ')}`);
    }
    assert.deepEqual(bystanderSeen.errors, []);
    assert.equal(bystander.echo.connector.pusher.connection.state, 'connected', 'nobody else is disconnected');

    // Their token is refused everywhere, the channel auth endpoint included: no new socket hears anything.
    for (const [method, path] of [['GET', '/conversations'], ['POST', `/conversations/${dm}/messages`]] as const) {
      const res = await app.request(banned, method, path, method === 'POST' ? { body: 'let me back' } : undefined);
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'user_banned');
    }
    const again = await clients.connect(banned);
    const refused = await again.trySubscribe(`chat.user.${banned}`);
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.error.status, 403);
    await again.disconnect();

    assert.equal((await server('DELETE', `/users/${banned}/ban`)).status, 204);
    const back = await clients.listening(banned, [dm]);
    const sent = await app.request(friend, 'POST', `/conversations/${dm}/messages`, { body: 'welcome back' });
    assert.equal(sent.status, 201);
    const heard = await back.waitFor('MessageSent', (p) => p.body === 'welcome back');
    assert.equal(heard.channel, `chat.conversation.${dm}`);
    assert.equal((await app.request(banned, 'POST', `/conversations/${dm}/messages`, { body: 'thanks' })).status, 201);
  });
});
