// Black-box tests of the embedded Pusher protocol v7 server: a real node:http server, real
// sockets (the `ws` client for exact frames, pusher-js and Laravel Echo as the apps use them).

import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { afterEach, describe, test } from 'node:test';
import Echo from 'laravel-echo';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { isValidSocketId } from '../../src/realtime/index.js';
import { signChannel } from '../../src/realtime/pusher/signature.js';
import {
  APP_KEY,
  APP_SECRET,
  PONG,
  RawClient,
  SOCKET_ID,
  cleanup,
  connected,
  pusherClient,
  pusherError,
  start,
  subscriptionError,
  succeeded,
  waitFor,
} from '../support/realtime.js';

afterEach(cleanup);

// ---------------------------------------------------------------------------------------------

describe('connecting', () => {
  test('a client on /app/{key} gets pusher:connection_established with a socket id and activity_timeout', async () => {
    const h = await start();
    const client = await RawClient.connect(h.url());
    const frame = await client.next();
    const { data } = JSON.parse(frame) as { data: string };
    const { socket_id } = JSON.parse(data) as { socket_id: string };
    assert.match(socket_id, SOCKET_ID);
    assert.ok(isValidSocketId(socket_id));
    assert.equal(
      frame,
      `{"event":"pusher:connection_established","data":"{\\"socket_id\\":\\"${socket_id}\\",\\"activity_timeout\\":30}"}`,
    );
  });

  test('activity_timeout is the configured one', async () => {
    const h = await start({ activityTimeoutSeconds: 120 });
    const client = await RawClient.connect(h.url());
    const { data } = JSON.parse(await client.next()) as { data: string };
    assert.equal((JSON.parse(data) as { activity_timeout: number }).activity_timeout, 120);
  });

  test('every connection gets its own socket id', async () => {
    const h = await start();
    const ids = await Promise.all([1, 2, 3, 4, 5].map(async () => (await RawClient.established(h.url())).socketId));
    assert.equal(new Set(ids).size, ids.length);
  });

  test('a wrong app key is answered with pusher:error 4001 and the socket is closed with 4001', async () => {
    const h = await start();
    const client = await RawClient.connect(h.url('/app/not-the-key?protocol=7'));
    assert.equal(await client.next(), pusherError(4001, 'Application does not exist'));
    assert.equal((await client.closed).code, 4001);
  });

  test('a path under /app/ that is not /app/{key} is closed with 4005', async () => {
    const h = await start();
    const client = await RawClient.connect(h.url(`/app/${APP_KEY}/extra`));
    assert.equal(await client.next(), pusherError(4005, 'Path not found'));
    assert.equal((await client.closed).code, 4005);
  });

  test('a malformed protocol version is closed with 4006 and an unsupported one with 4007', async () => {
    const h = await start();
    const malformed = await RawClient.connect(h.url(`/app/${APP_KEY}?protocol=seven`));
    assert.equal((await malformed.closed).code, 4006);
    const unsupported = await RawClient.connect(h.url(`/app/${APP_KEY}?protocol=3`));
    assert.equal((await unsupported.closed).code, 4007);
  });

  test('an upgrade to a path outside /app/ is answered with HTTP 404, not a dropped socket', async () => {
    const h = await start();
    const ws = new WebSocket(h.url('/elsewhere'));
    const [, res] = (await once(ws, 'unexpected-response')) as [ClientRequest, IncomingMessage];
    assert.equal(res.statusCode, 404);
    res.resume(); // the server ends the response and the connection itself
    assert.equal(h.rt.stats().connections, 0);
  });
});

describe('pusher:* events', () => {
  test('pusher:ping is answered with pusher:pong', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.send({ event: 'pusher:ping', data: {} });
    assert.equal(await client.next(), PONG);
  });

  test('invalid JSON, a non-object and a frame without event each get a non-fatal pusher:error', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.send('{not json');
    assert.equal(await client.next(), pusherError(4300, 'Invalid JSON'));
    client.send('[1,2]');
    assert.equal(await client.next(), pusherError(4300, 'A frame must be a JSON object'));
    client.send({ data: {} });
    assert.equal(await client.next(), pusherError(4300, 'A frame must have a string "event"'));
    await client.assertNextIsPong();
  });

  test('a deeply nested frame gets one non-fatal pusher:error and nothing is logged above debug', async () => {
    const lines: { level: number; msg: string; err?: unknown }[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const h = await start({ logger });
    const { client } = await RawClient.established(h.url());
    // 18 KB of nested arrays in data (below maxMessageBytes): JSON.parse reads it, encoding it again would overflow the stack.
    const nested = `${'['.repeat(9000)}${']'.repeat(9000)}`;
    for (const event of ['client-x', 'pusher:subscribe', 'pusher:ping']) {
      client.send(`{"event":"${event}","channel":"private-a","data":${nested}}`);
      assert.equal(await client.next(), pusherError(4300, '"data" is nested too deeply (more than 64 levels)'));
    }
    // A presence member whose user_info is as deep is refused like any bad channel_data (it is encoded for every subscriber).
    const { client: member, socketId } = await RawClient.established(h.url());
    const channelData = `{"user_id":"1","user_info":${nested}}`;
    member.send({ event: 'pusher:subscribe', data: { channel: 'presence-room', auth: `${APP_KEY}:${signChannel(APP_SECRET, socketId, `presence-room:${channelData}`)}`, channel_data: channelData } });
    assert.equal(
      await member.next(),
      subscriptionError('presence-room', 'InvalidChannelData', 'channel_data must be a JSON object with a user_id', 400),
    );
    // Shallow enough is fine.
    client.send({ event: 'pusher:subscribe', data: { channel: 'news', deep: JSON.parse(`${'['.repeat(60)}${']'.repeat(60)}`) } });
    assert.equal(await client.next(), succeeded('news'));
    await client.assertNextIsPong();
    assert.deepEqual(lines.filter((line) => line.level > 20), [], 'no line above debug');
    assert.ok(lines.every((line) => line.err === undefined), 'no stack trace');
  });

  test('an unknown pusher: event gets a non-fatal pusher:error', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.send({ event: 'pusher:teleport', data: {} });
    assert.equal(await client.next(), pusherError(4300, 'Unknown event: pusher:teleport'));
    await client.assertNextIsPong();
  });

  test('with client events switched off, a client event is refused with pusher:error 4301 and delivered to no one', async () => {
    const h = await start({ clientEvents: { enabled: false } });
    const a = await RawClient.established(h.url());
    const b = await RawClient.established(h.url());
    for (const { client, socketId } of [a, b]) {
      client.subscribe('private-room', h.authorize(socketId, 'private-room'));
      assert.equal(await client.next(), succeeded('private-room'));
    }
    a.client.send({ event: 'client-typing', channel: 'private-room', data: { typing: true } });
    assert.equal(await a.client.next(), pusherError(4301, 'Client events are not enabled on this server'));
    await b.client.assertNextIsPong();
  });

  test('data sent as a JSON string is accepted like an object', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.send({ event: 'pusher:subscribe', data: JSON.stringify({ channel: 'news' }) });
    assert.equal(await client.next(), succeeded('news'));
  });
});

describe('subscriptions', () => {
  test('a public channel subscription succeeds with the exact subscription_succeeded frame', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.subscribe('news');
    assert.equal(await client.next(), '{"event":"pusher_internal:subscription_succeeded","channel":"news","data":"{}"}');
  });

  test('a private channel subscription with the signature from authorize() succeeds', async () => {
    const h = await start();
    const { client, socketId } = await RawClient.established(h.url());
    const channel = 'private-chat.user.7';
    const auth = h.authorize(socketId, channel);
    assert.match(auth, new RegExp(`^${APP_KEY}:[0-9a-f]{64}$`));
    client.subscribe(channel, auth);
    assert.equal(await client.next(), succeeded(channel));
  });

  test('a forged channel signature is refused with subscription_error and the socket stays open', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.subscribe('private-chat.user.7', `${APP_KEY}:${'0'.repeat(64)}`);
    assert.equal(
      await client.next(),
      '{"event":"pusher:subscription_error","channel":"private-chat.user.7","data":{"type":"AuthError","error":"Invalid channel signature","status":401}}',
    );
    await client.assertNextIsPong();
    assert.equal(h.rt.stats().subscriptions, 0);
  });

  test('a signature issued for another socket or another channel is refused', async () => {
    const h = await start();
    const a = await RawClient.established(h.url());
    const b = await RawClient.established(h.url());
    b.client.subscribe('private-chat.user.7', h.authorize(a.socketId, 'private-chat.user.7'));
    assert.equal(JSON.parse(await b.client.next()).event, 'pusher:subscription_error');
    a.client.subscribe('private-chat.user.7', h.authorize(a.socketId, 'private-chat.user.8'));
    assert.equal(JSON.parse(await a.client.next()).event, 'pusher:subscription_error');
    a.client.subscribe('private-chat.user.7');
    assert.equal(JSON.parse(await a.client.next()).event, 'pusher:subscription_error');
  });

  test('subscribing twice to the same channel succeeds again and counts once', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.subscribe('news');
    assert.equal(await client.next(), succeeded('news'));
    client.subscribe('news');
    assert.equal(await client.next(), succeeded('news'));
    assert.deepEqual(h.rt.stats(), { connections: 1, channels: 1, subscriptions: 1, clusterReceived: 0, clusterDelivered: 0 });
  });

  test('an invalid channel name is refused with subscription_error 400', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.subscribe('bad channel!');
    const frame = JSON.parse(await client.next()) as { event: string; data: { status: number } };
    assert.equal(frame.event, 'pusher:subscription_error');
    assert.equal(frame.data.status, 400);
  });

  test('a subscription beyond maxChannelsPerConnection is refused with 429', async () => {
    const h = await start({ maxChannelsPerConnection: 2 });
    const { client } = await RawClient.established(h.url());
    for (const channel of ['a', 'b']) {
      client.subscribe(channel);
      assert.equal(await client.next(), succeeded(channel));
    }
    client.subscribe('c');
    const frame = JSON.parse(await client.next()) as { event: string; data: { status: number } };
    assert.equal(frame.event, 'pusher:subscription_error');
    assert.equal(frame.data.status, 429);
    client.subscribe('a'); // re-subscribing to a channel it holds is not a new one
    assert.equal(await client.next(), succeeded('a'));
  });

  test('pusher:subscribe without data.channel gets a non-fatal pusher:error', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.send({ event: 'pusher:subscribe', data: {} });
    assert.equal(await client.next(), pusherError(4300, 'pusher:subscribe needs data.channel'));
    await client.assertNextIsPong();
  });

  test('a closed connection leaves no subscriptions behind', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.subscribe('news');
    await client.next();
    assert.deepEqual(h.rt.stats(), { connections: 1, channels: 1, subscriptions: 1, clusterReceived: 0, clusterDelivered: 0 });
    client.ws.close();
    await client.closed;
    await waitFor(() => h.rt.stats().connections === 0);
    assert.deepEqual(h.rt.stats(), { connections: 0, channels: 0, subscriptions: 0, clusterReceived: 0, clusterDelivered: 0 });
  });
});

describe('publishing', () => {
  test('publish reaches every subscriber with the same frame, except the excepted socket id', async () => {
    const h = await start();
    const channel = 'private-chat.conversation.1';
    const clients = await Promise.all([1, 2, 3].map(() => RawClient.established(h.url())));
    for (const { client, socketId } of clients) {
      client.subscribe(channel, h.authorize(socketId, channel));
      assert.equal(await client.next(), succeeded(channel));
    }
    const [sender, r1, r2] = clients;
    h.rt.publish([channel], 'MessageSent', JSON.stringify({ id: 1, body: 'hé "quoted"' }), sender!.socketId);

    const expected = `{"event":"MessageSent","channel":"${channel}","data":${JSON.stringify(JSON.stringify({ id: 1, body: 'hé "quoted"' }))}}`;
    const [f1, f2] = await Promise.all([r1!.client.next(), r2!.client.next()]);
    assert.equal(f1, expected);
    assert.equal(f2, f1);
    await sender!.client.assertNextIsPong(); // the sender got nothing before its pong
  });

  test('publish to several channels sends one frame per channel to each of its subscribers', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    for (const channel of ['a', 'b']) {
      client.subscribe(channel);
      await client.next();
    }
    h.rt.publish(['a', 'b', 'nobody-here'], 'Ping', JSON.stringify({}));
    assert.deepEqual([JSON.parse(await client.next()).channel, JSON.parse(await client.next()).channel], ['a', 'b']);
    await client.assertNextIsPong();
  });

  test('after pusher:unsubscribe a socket no longer receives the channel', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.subscribe('news');
    await client.next();
    client.send({ event: 'pusher:unsubscribe', data: { channel: 'news' } });
    await client.assertNextIsPong(); // unsubscribe has no answer; the pong proves it was processed
    h.rt.publish(['news'], 'Headline', JSON.stringify({ n: 1 }));
    await client.assertNextIsPong();
    assert.equal(h.rt.stats().subscriptions, 0);
  });

  test('publish refuses reserved pusher event names', async () => {
    const h = await start();
    assert.throws(() => h.rt.publish(['news'], 'pusher_internal:subscription_succeeded', JSON.stringify({})), TypeError);
  });
});

describe('dropping a user', () => {
  test('unsubscribeUser stops delivery to every socket of that user only', async () => {
    const h = await start();
    const channel = 'private-chat.conversation.9';
    const marker = 'private-chat.user.marker';
    const subscribeAs = async (userId: string) => {
      const c = await RawClient.established(h.url());
      h.authorizations.remember(c.socketId, channel, userId);
      c.client.subscribe(channel, h.authorize(c.socketId, channel));
      assert.equal(await c.client.next(), succeeded(channel));
      c.client.subscribe(marker, h.authorize(c.socketId, marker));
      assert.equal(await c.client.next(), succeeded(marker));
      return c;
    };
    const alicePhone = await subscribeAs('alice');
    const aliceLaptop = await subscribeAs('alice');
    const bob = await subscribeAs('bob');

    h.rt.unsubscribeUser(channel, 'alice');
    h.rt.publish([channel], 'MessageSent', JSON.stringify({ id: 2 }));
    h.rt.publish([marker], 'Marker', JSON.stringify({}));

    // Frames arrive in order, so the marker coming first proves MessageSent was not sent.
    for (const alice of [alicePhone, aliceLaptop]) assert.equal(JSON.parse(await alice.client.next()).event, 'Marker');
    assert.equal(JSON.parse(await bob.client.next()).event, 'MessageSent');
    assert.equal(JSON.parse(await bob.client.next()).event, 'Marker');
    assert.equal(h.rt.stats().subscriptions, 4); // bob's two and alice's two marker subscriptions
  });

  test('a subscription without a remembered user is not dropped by unsubscribeUser', async () => {
    const h = await start();
    const channel = 'private-chat.conversation.3';
    const { client, socketId } = await RawClient.established(h.url());
    h.authorizations.remember(socketId, 'private-chat.conversation.other', 'alice'); // another channel
    client.subscribe(channel, h.authorize(socketId, channel));
    await client.next();
    h.rt.unsubscribeUser(channel, 'alice');
    h.rt.publish([channel], 'MessageSent', JSON.stringify({ id: 3 }));
    assert.equal(JSON.parse(await client.next()).event, 'MessageSent');
  });
});

describe('keepalive, limits and shutdown', () => {
  test('an idle socket gets pusher:ping and is closed with 4201 when it never answers', async () => {
    const h = await start({ activityTimeoutSeconds: 0.1, pongTimeoutSeconds: 0.1 });
    // autoPong off: this client answers neither the pusher:ping nor the WebSocket ping.
    const { client } = await RawClient.established(h.url(), { autoPong: false });
    assert.equal(await client.next(), '{"event":"pusher:ping","data":"{}"}');
    assert.equal(await client.next(), pusherError(4201, 'Pong reply not received'));
    assert.equal((await client.closed).code, 4201);
  });

  test('a socket that answers pusher:ping with pusher:pong stays open', async () => {
    const h = await start({ activityTimeoutSeconds: 0.1, pongTimeoutSeconds: 0.1 });
    const { client } = await RawClient.established(h.url());
    for (let i = 0; i < 3; i++) {
      assert.equal(await client.next(), '{"event":"pusher:ping","data":"{}"}');
      client.send({ event: 'pusher:pong', data: {} });
    }
    assert.equal(client.ws.readyState, WebSocket.OPEN);
  });

  test('the idle ping is a pusher:ping and a WebSocket ping together', async () => {
    const h = await start({ activityTimeoutSeconds: 0.1, pongTimeoutSeconds: 0.1 });
    const { client } = await RawClient.established(h.url());
    const wsPing = once(client.ws, 'ping');
    assert.equal(await client.next(), '{"event":"pusher:ping","data":"{}"}');
    await wsPing;
  });

  test('a client that answers only WebSocket pings (ws answers them itself) is never closed with 4201', async () => {
    const h = await start({ activityTimeoutSeconds: 0.1, pongTimeoutSeconds: 0.1 });
    const { client } = await RawClient.established(h.url());
    let pings = 0;
    client.ws.on('ping', () => pings++);
    // It never sends a frame: only the automatic WebSocket pongs reach the server.
    await waitFor(() => pings >= 4, 3000);
    assert.equal(client.ws.readyState, WebSocket.OPEN);
  });

  test('a frame larger than maxMessageBytes gets a pusher:error naming the limit, close 1009 with that reason, and the server carries on', async () => {
    const h = await start({ maxMessageBytes: 1_000 });
    const { client } = await RawClient.established(h.url());
    client.send({ event: 'pusher:subscribe', data: { channel: 'x'.repeat(1_500) } });
    assert.equal(await client.next(), pusherError(4300, 'Message too big (limit 1000 bytes)'));
    assert.deepEqual(await client.closed, { code: 1009, reason: 'Message too big (limit 1000 bytes)' });
    const other = await RawClient.established(h.url());
    await other.client.assertNextIsPong();
  });

  test('a frame far above the limit is not even read: close 1009 as soon as its length is known', async () => {
    const h = await start({ maxMessageBytes: 1_000 });
    const { client } = await RawClient.established(h.url());
    client.send({ event: 'pusher:subscribe', data: { channel: 'x'.repeat(5_000) } });
    assert.equal((await client.closed).code, 1009);
  });

  test('a socket that does not read is closed with 4100 instead of buffering without bound', async () => {
    const h = await start({ maxBufferedBytes: 64 * 1024 });
    const { client } = await RawClient.established(h.url());
    client.subscribe('firehose');
    await client.next();
    // The client shares our event loop, so it cannot read while this loop runs.
    const payload = { blob: 'x'.repeat(64 * 1024) };
    for (let i = 0; i < 400; i++) h.rt.publish(['firehose'], 'Blob', JSON.stringify(payload));
    const { code } = await client.closed;
    assert.equal(code, 4100);
    await waitFor(() => h.rt.stats().connections === 0);
  });

  test('close() closes every socket with 4200, refuses new ones and empties the registry', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    client.subscribe('news');
    await client.next();
    await h.rt.close();
    assert.equal((await client.closed).code, 4200);
    assert.deepEqual(h.rt.stats(), { connections: 0, channels: 0, subscriptions: 0, clusterReceived: 0, clusterDelivered: 0 });
    const late = new WebSocket(h.url());
    const [req, res] = (await once(late, 'unexpected-response')) as [ClientRequest, IncomingMessage];
    assert.equal(res.statusCode, 503);
    req.destroy();
  });

  test('close() accepts another code', async () => {
    const h = await start();
    const { client } = await RawClient.established(h.url());
    await h.rt.close(4100);
    assert.equal((await client.closed).code, 4100);
  });
});

describe('real clients', () => {
  test('pusher-js subscribes to a private channel and receives a published event', async () => {
    const h = await start();
    const pusher = pusherClient(h);
    const channel = pusher.subscribe('private-chat.conversation.5');
    await new Promise<void>((resolve) => channel.bind('pusher:subscription_succeeded', () => resolve()));
    assert.match(pusher.connection.socket_id, SOCKET_ID);
    const received = new Promise<unknown>((resolve) => channel.bind('MessageSent', resolve));
    h.rt.publish(['private-chat.conversation.5'], 'MessageSent', JSON.stringify({ id: 5, body: 'hello' }));
    assert.deepEqual(await received, { id: 5, body: 'hello' });
  });

  test('pusher-js reports a forged signature as pusher:subscription_error with status 401', async () => {
    const h = await start();
    const pusher = pusherClient(h, {
      channelAuthorization: { customHandler: (_params, callback) => callback(null, { auth: `${APP_KEY}:${'ab'.repeat(32)}` }) },
    });
    const channel = pusher.subscribe('private-chat.user.1');
    const error = await new Promise<unknown>((resolve) => channel.bind('pusher:subscription_error', resolve));
    assert.deepEqual(error, { type: 'AuthError', error: 'Invalid channel signature', status: 401 });
    assert.equal(pusher.connection.state, 'connected');
  });

  test('pusher-js is told an unknown app key is refused (4001) and does not retry', async () => {
    const h = await start();
    const pusher = pusherClient(h, {}, 'wrong-key');
    type HandshakeError = { type: string; error?: { data?: { code?: number } } };
    const err = await new Promise<HandshakeError>((resolve) => pusher.connection.bind('error', resolve));
    assert.equal(err.error?.data?.code, 4001);
    await waitFor(() => pusher.connection.state === 'disconnected');
  });

  test('pusher-js excluded by socket id does not receive its own event', async () => {
    const h = await start();
    const [sender, receiver] = [pusherClient(h), pusherClient(h)];
    await Promise.all([connected(sender), connected(receiver)]);
    const channels = [sender, receiver].map((p) => p.subscribe('private-chat.conversation.6'));
    await Promise.all(channels.map((c) => new Promise((resolve) => c.bind('pusher:subscription_succeeded', resolve))));
    let senderGot = 0;
    channels[0]!.bind('MessageSent', () => senderGot++);
    const received = new Promise((resolve) => channels[1]!.bind('MessageSent', resolve));
    h.rt.publish(['private-chat.conversation.6'], 'MessageSent', JSON.stringify({ id: 6 }), sender.connection.socket_id);
    assert.deepEqual(await received, { id: 6 });
    assert.equal(senderGot, 0);
  });

  test('Laravel Echo listens on a private channel through pusher-js', async () => {
    const h = await start();
    const echo = new Echo({ broadcaster: 'pusher', client: pusherClient(h) });
    const received = new Promise<unknown>((resolve) => {
      echo.private('chat.conversation.8').subscribed(() => {
        h.rt.publish(['private-chat.conversation.8'], 'MessageSent', JSON.stringify({ id: 8 }));
      }).listen('.MessageSent', resolve);
    });
    assert.deepEqual(await received, { id: 8 });
    echo.disconnect();
  });
});
