// ParleyClient's socket half against a real Parley over real WebSockets (pusher-js): connect subscribes the
// user's channel with the bearer token, `on` gets every event by its broadcast name, watch subscribes a
// conversation, sync catches up over GET /sync, and after a dropped socket the client catches up by itself
// before it is live again, each handler getting each missed change exactly once, in order.
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { after, afterEach, before, describe, test } from 'node:test';
import { ParleyError, type ConnectionState, type EventMeta, type ParleyClient } from '../../packages/client/src/index.js';
import type { TestApp } from '../support/app.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { clientOf, disconnectClients, eventually, startClientTestApp } from './helpers.js';

/** Every message change a client's handlers got: `MessageSent 12`, `MessageUpdated 12 (body)`, `MessageDeleted 12`. */
function recordMessageChanges(client: ParleyClient): { seen: string[]; sources: string[] } {
  const seen: string[] = [];
  const sources: string[] = [];
  const note = (line: string, meta: EventMeta) => {
    seen.push(line);
    sources.push(`${line}: ${meta.source}`);
  };
  client.on('MessageSent', (m, meta) => note(`MessageSent ${m.id} ${m.body}`, meta));
  client.on('MessageUpdated', (m, meta) => note(`MessageUpdated ${m.id} ${m.body}`, meta));
  client.on('MessageDeleted', (m, meta) => note(`MessageDeleted ${m.id}`, meta));
  return { seen, sources };
}

describe('@parley/client: socket, events and catch-up', () => {
  let app: TestApp;
  let proxy: TcpProxy | null = null;
  before(async () => {
    app = await startClientTestApp();
  });
  afterEach(async () => {
    disconnectClients();
    await proxy?.close();
    proxy = null;
  });
  after(() => app?.close());

  test('connect subscribes the user channel; on() gets live events with typed payloads; off stops them; disconnect', async () => {
    const alice = await clientOf(app, 1);
    const bob = await clientOf(app, 2);
    const states: ConnectionState[] = [];
    bob.onStateChange((s) => states.push(s));
    await bob.connect();
    assert.equal(bob.state, 'live');
    assert.deepEqual(states, ['connecting', 'syncing', 'live']);
    assert.equal(bob.userId, 2);
    assert.match(bob.socketId ?? '', /^\d+\.\d+$/);

    const inbox: number[] = [];
    const off = bob.on('InboxUpdated', (conversation, meta) => {
      assert.equal(meta.source, 'live');
      assert.equal(meta.channel, 'private-chat.user.2');
      inbox.push(conversation.id);
    });
    const { id } = await alice.conversations.openDirect(2);
    await alice.messages.send(id, { body: 'hello' });
    await eventually(() => assert.deepEqual(inbox, [id, id]));
    off();
    await alice.messages.send(id, { body: 'unheard' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(inbox, [id, id], 'off() stopped the handler');

    bob.disconnect();
    assert.equal(bob.state, 'disconnected');
    assert.equal(bob.socketId, null);
  });

  test('watch subscribes the conversation channel: its events arrive live', async () => {
    const alice = await clientOf(app, 1);
    const bob = await clientOf(app, 2);
    const { id } = await alice.conversations.openDirect(2);
    await bob.connect();
    const { seen, sources } = recordMessageChanges(bob);
    const typing: boolean[] = [];
    bob.on('UserTyping', (t) => typing.push(t.is_typing));
    await bob.watch(id);
    const m = await alice.messages.send(id, { body: 'live' });
    await alice.messages.edit(m.id, 'live, edited');
    await alice.messages.delete(m.id);
    await alice.request('POST', `/conversations/${id}/typing`, { body: { is_typing: true } });
    await eventually(() => assert.deepEqual(seen, [`MessageSent ${m.id} live`, `MessageUpdated ${m.id} live, edited`, `MessageDeleted ${m.id}`]));
    assert.ok(sources.every((s) => s.endsWith(': live')));
    await eventually(() => assert.deepEqual(typing, [true]));
  });

  test('sync delivers what happened on channels not watched, through the same handlers, once', async () => {
    const alice = await clientOf(app, 1);
    const carol = await clientOf(app, 3);
    const { id } = await alice.conversations.openDirect(3);
    await carol.connect();
    const { seen, sources } = recordMessageChanges(carol);
    const m = await alice.messages.send(id, { body: 'while carol looks elsewhere' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(seen, [], 'not watched: not live');
    // The InboxUpdated of the send came live on her own channel, and the feed's is the same state: not again.
    assert.equal(await carol.sync(), 1, 'one change delivered: the MessageSent');
    assert.deepEqual(seen, [`MessageSent ${m.id} while carol looks elsewhere`]);
    assert.deepEqual(sources, [`MessageSent ${m.id} while carol looks elsewhere: sync`]);
    assert.equal(await carol.sync(), 0, 'nothing again');
  });

  test('a token function is asked again after a 401, and the call is retried once with the new token', async () => {
    const expired = await new SignJWT({ name: 'Bob' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('2')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(app.config.jwtSecret));
    const fresh = await app.token(2, 'Bob');
    const handed: string[] = [];
    const bob = await clientOf(app, 2, {
      token: async () => {
        const token = handed.length === 0 ? expired : fresh;
        handed.push(token);
        return token;
      },
    });
    await bob.connect();
    assert.deepEqual(handed, [expired, fresh], 'asked once, and once more after the 401');
    assert.equal(bob.state, 'live');
    await bob.conversations.list();
    assert.equal(handed.length, 2, 'the fresh token is kept');
  });

  test('a dropped socket: messages, edits and deletes sent meanwhile reach each handler once, in order, before the client is live again', async () => {
    proxy = await startTcpProxy(app.port);
    const alice = await clientOf(app, 1);
    const bob = await clientOf(app, 2, { wsHost: '127.0.0.1', wsPort: proxy.port });
    const { id } = await alice.conversations.openDirect(2);
    await bob.connect();
    await bob.watch(id);
    const { seen, sources } = recordMessageChanges(bob);
    const states: ConnectionState[] = [];
    bob.onStateChange((s) => states.push(s));

    const m1 = await alice.messages.send(id, { body: 'm1' });
    await eventually(() => assert.equal(seen.length, 1));

    proxy.drop();
    await eventually(() => assert.equal(bob.state, 'connecting'));
    const m2 = await alice.messages.send(id, { body: 'm2' });
    const m3 = await alice.messages.send(id, { body: 'm3' });
    await alice.messages.edit(m1.id, 'm1 edited');
    await alice.messages.delete(m2.id);
    await alice.messages.edit(m3.id, 'm3 edited');
    assert.equal(seen.length, 1, 'nothing arrives while the network is down');

    proxy.restore();
    await eventually(() => assert.equal(bob.state, 'live'));
    assert.deepEqual(states, ['connecting', 'syncing', 'live'], 'synced before it said live again');
    const m4 = await alice.messages.send(id, { body: 'm4' });
    await eventually(() => assert.equal(seen.length, 7));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(seen, [
      `MessageSent ${m1.id} m1`,
      `MessageSent ${m2.id} m2`,
      `MessageSent ${m3.id} m3`,
      `MessageUpdated ${m1.id} m1 edited`,
      `MessageDeleted ${m2.id}`,
      `MessageUpdated ${m3.id} m3 edited`,
      `MessageSent ${m4.id} m4`,
    ]);
    assert.deepEqual(
      sources.map((s) => s.split(': ')[1]),
      ['live', 'sync', 'sync', 'sync', 'sync', 'sync', 'live'],
      'm1 came live and was not repeated by the catch-up (whose cursor is older than m1)',
    );
  });

  test('a socket server that refuses connections for a while: the client tries again by itself and is live soon after it answers', async () => {
    proxy = await startTcpProxy(app.port);
    const bob = await clientOf(app, 2, { wsHost: '127.0.0.1', wsPort: proxy.port });
    await bob.connect();
    proxy.drop({ refuse: true });
    await eventually(() => assert.equal(bob.state, 'connecting'));
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // pusher-js's own attempts fail meanwhile
    const opened = proxy.opened;
    proxy.restore();
    const restoredAt = Date.now();
    await eventually(() => assert.equal(bob.state, 'live'), 10_000);
    const took = Date.now() - restoredAt;
    assert.ok(took < 5_000, `live again ${took} ms after the server answered (pusher-js alone: up to 15 s)`);
    assert.ok(proxy.opened > opened, 'through a new connection');
  });

  test('connect twice at once opens one socket; watch waits for connect; disconnect while connecting stops it', async () => {
    proxy = await startTcpProxy(app.port);
    const alice = await clientOf(app, 1);
    const bob = await clientOf(app, 2, { wsHost: '127.0.0.1', wsPort: proxy.port });
    const { id } = await alice.conversations.openDirect(2);
    const first = bob.connect();
    const watched = bob.watch(id);
    await Promise.all([first, bob.connect(), watched]);
    assert.equal(proxy.opened, 1, 'one socket');
    const { seen } = recordMessageChanges(bob);
    const m = await alice.messages.send(id, { body: 'to the one socket' });
    await eventually(() => assert.deepEqual(seen, [`MessageSent ${m.id} to the one socket`]));

    const carol = await clientOf(app, 3, { wsHost: '127.0.0.1', wsPort: proxy.port });
    const opening = carol.connect();
    carol.disconnect();
    await assert.rejects(opening);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(carol.state, 'disconnected');
    assert.equal(proxy.opened, 1, 'the disconnected opening opened no socket');
  });

  test('a token function that fails is asked again by the next call', async () => {
    let calls = 0;
    const token = await app.token(3, 'Carol');
    const carol = await clientOf(app, 3, {
      token: async () => {
        if (calls++ === 0) throw new Error('the sign-in service is down');
        return token;
      },
    });
    await assert.rejects(carol.conversations.list(), /the sign-in service is down/);
    await carol.conversations.list();
    assert.equal(calls, 2);
  });

  test('while live the client syncs every syncEveryMs by itself: a change of a conversation it does not watch arrives', async () => {
    const alice = await clientOf(app, 1);
    const carol = await clientOf(app, 3, { syncEveryMs: 300 });
    const { id } = await alice.conversations.openDirect(3);
    await carol.connect();
    const { sources } = recordMessageChanges(carol);
    const m = await alice.messages.send(id, { body: 'unwatched' });
    await eventually(() => assert.deepEqual(sources, [`MessageSent ${m.id} unwatched: sync`]), 3_000);
  });

  test('excludeOwnSocket: no live event for my own request (X-Socket-ID); the next sync brings it, once', async () => {
    const bob = await clientOf(app, 2, { excludeOwnSocket: true });
    const { id } = await bob.conversations.openDirect(1);
    await bob.connect();
    await bob.watch(id);
    const { sources } = recordMessageChanges(bob);
    const m = await bob.messages.send(id, { body: 'mine' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(sources, [], 'not live to the acting socket');
    await bob.sync();
    await bob.sync();
    assert.deepEqual(sources, [`MessageSent ${m.id} mine: sync`]);
  });

  test('live events that arrive while a sync runs wait for it: dropped if the sync had them, else delivered after its changes', async () => {
    const alice = await clientOf(app, 1);
    // Bob's client holds the answer of its next GET /sync while `during` runs (a live event gets there meanwhile).
    let during: ((answer: () => Promise<Response>) => Promise<Response>) | null = null;
    const bob = await clientOf(app, 2, {
      fetch: async (input, init) => {
        const hook = during;
        if (!hook || !String(input).includes('/sync?since=')) return fetch(input, init);
        during = null;
        return hook(() => fetch(input, init));
      },
    });
    const { id } = await alice.conversations.openDirect(2);
    const other = await alice.request<{ data: { id: number } }>('POST', '/groups', { body: { name: 'Unwatched', user_ids: [2] } });
    await bob.connect();
    await bob.watch(id);
    const { sources } = recordMessageChanges(bob);
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

    // The sync reads after the send: it has the message, and the live copy that waited is dropped.
    let m1 = 0;
    during = async (answer) => {
      m1 = (await alice.messages.send(id, { body: 'both' })).id;
      await settle();
      return answer();
    };
    await bob.sync();
    await settle();
    assert.deepEqual(sources, [`MessageSent ${m1} both: sync`]);

    // The sync reads before the send: its own change (a message of a group Bob does not watch) comes first, then
    // the live one that waited.
    sources.length = 0;
    const missed = await alice.messages.send(other.data.id, { body: 'missed' });
    let m2 = 0;
    during = async (answer) => {
      const response = await answer();
      await response.clone().text();
      m2 = (await alice.messages.send(id, { body: 'live after' })).id;
      await settle();
      return response;
    };
    await bob.sync();
    await settle();
    assert.deepEqual(sources, [`MessageSent ${missed.id} missed: sync`, `MessageSent ${m2} live after: live`]);
  });

  test('a catch-up that fails is said through onError and tried again until the client is live', async () => {
    proxy = await startTcpProxy(app.port);
    let refuseSync = false;
    const bob = await clientOf(app, 2, {
      wsHost: '127.0.0.1',
      wsPort: proxy.port,
      // A server that refuses the catch-up for a while (as a proxy in front of it might).
      fetch: async (input, init) =>
        refuseSync && String(input).includes('/sync?since=')
          ? new Response(JSON.stringify({ message: 'Not now.', code: 'forbidden' }), { status: 403, headers: { 'Content-Type': 'application/json' } })
          : fetch(input, init),
    });
    await bob.connect();
    const errors: unknown[] = [];
    bob.onError((err) => errors.push(err));
    refuseSync = true;
    proxy.drop();
    await eventually(() => assert.equal(bob.state, 'connecting'));
    proxy.restore();
    await eventually(() => assert.ok(errors.length > 0));
    assert.ok(errors[0] instanceof ParleyError && errors[0].status === 403 && errors[0].code === 'forbidden');
    assert.equal(bob.state, 'syncing', 'not live before it caught up');
    refuseSync = false;
    await eventually(() => assert.equal(bob.state, 'live'), 5_000);
  });
});
