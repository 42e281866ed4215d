// What one client may take of the embedded Pusher server: sockets per address (the peer's, or behind a trusted
// proxy the forwarded client's), channels per socket, and frames per socket (a burst, then a rate), each refused
// the way pusher-js understands. Real sockets on a real node:http server.

import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { pino } from 'pino';
import { settingDefault } from '../../src/config/settings.js';
import { addressKey } from '../../src/realtime/pusher/limits.js';
import {
  PONG,
  RawClient,
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

const forwardedFor = (address: string) => ({ headers: { 'x-forwarded-for': address } });

describe('sockets per address', () => {
  test('beyond maxConnectionsPerAddress a socket gets pusher:error 4100 and close 4100; once one leaves, a new one gets in', async () => {
    const h = await start({ maxConnectionsPerAddress: 3 });
    const open = await Promise.all([1, 2, 3].map(() => RawClient.established(h.url())));
    const refused = await RawClient.connect(h.url());
    assert.equal(await refused.next(), pusherError(4100, 'Over capacity: too many connections from this address'));
    assert.equal((await refused.closed).code, 4100);
    for (const { client } of open) await client.assertNextIsPong();
    assert.equal(h.rt.stats().connections, 3);

    open[0]!.client.ws.close();
    await waitFor(() => h.rt.stats().connections === 2);
    const again = await RawClient.established(h.url());
    await again.client.assertNextIsPong();
  });

  test('the default lets 100 sockets in from one address and refuses the 101st', async () => {
    assert.equal(settingDefault('BROADCAST_MAX_CONNECTIONS_PER_ADDRESS'), 100);
    const h = await start();
    await Promise.all(Array.from({ length: 100 }, () => RawClient.established(h.url())));
    const refused = await RawClient.connect(h.url());
    assert.equal((await refused.closed).code, 4100);
    assert.equal(h.rt.stats().connections, 100);
  });

  test('pusher-js refused for its address backs off and gets in once one of its sockets leaves', async () => {
    const h = await start({ maxConnectionsPerAddress: 1 });
    const first = await RawClient.established(h.url());
    const pusher = pusherClient(h);
    type ConnectionError = { error?: { data?: { code?: number } } };
    const err = await new Promise<ConnectionError>((resolve) => pusher.connection.bind('error', resolve));
    assert.equal(err.error?.data?.code, 4100);
    assert.equal(pusher.connection.state, 'connecting'); // backing off, not given up
    first.client.ws.close();
    await connected(pusher);
  });

  test('X-Forwarded-For is ignored from a peer that is not a trusted proxy: every socket counts against the peer', async () => {
    const lines: { level: number; msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const h = await start({ maxConnectionsPerAddress: 2, logger });
    await RawClient.established(h.url(), forwardedFor('203.0.113.1'));
    await RawClient.established(h.url(), forwardedFor('203.0.113.2'));
    const refused = await RawClient.connect(h.url(), forwardedFor('203.0.113.3'));
    assert.equal((await refused.closed).code, 4100);
    assert.equal((await (await RawClient.connect(h.url(), forwardedFor('203.0.113.4'))).closed).code, 4100);
    // The operator is told once that a proxy may be missing from CHAT_TRUSTED_PROXIES.
    assert.equal(lines.length, 1);
    assert.match(lines[0]!.msg, /CHAT_TRUSTED_PROXIES/);
  });

  test('behind a trusted proxy each forwarded client has its own count (IPv6 by its /64)', async () => {
    const h = await start({ maxConnectionsPerAddress: 2, trustedProxies: ['127.0.0.0/8'] });
    await RawClient.established(h.url(), forwardedFor('198.51.100.7'));
    // Read from the right: what the client wrote itself (on the left) is not believed.
    await RawClient.established(h.url(), forwardedFor('10.9.9.9, 198.51.100.7'));
    const refused = await RawClient.connect(h.url(), forwardedFor('198.51.100.7'));
    assert.equal((await refused.closed).code, 4100);
    const other = await RawClient.established(h.url(), forwardedFor('198.51.100.8'));
    await other.client.assertNextIsPong();

    await RawClient.established(h.url(), forwardedFor('2001:db8:1:2::1'));
    await RawClient.established(h.url(), forwardedFor('2001:db8:1:2:ffff::9'));
    assert.equal((await (await RawClient.connect(h.url(), forwardedFor('2001:db8:1:2::3'))).closed).code, 4100);
    const otherNetwork = await RawClient.established(h.url(), forwardedFor('2001:db8:1:3::1'));
    await otherNetwork.client.assertNextIsPong();
  });

  test('addressKey: IPv4 as it is, IPv6 by its /64', () => {
    assert.equal(addressKey('192.0.2.1'), '192.0.2.1');
    assert.equal(addressKey('2001:DB8:0001:0002:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
  });
});

describe('channels per socket', () => {
  test('the default: 100 channels on one socket, the 101st refused with 429 and the socket stays open', async () => {
    assert.equal(settingDefault('BROADCAST_MAX_CHANNELS_PER_CONNECTION'), 100);
    const h = await start();
    const { client } = await RawClient.established(h.url());
    for (let i = 0; i < 100; i++) client.subscribe(`news-${i}`);
    for (let i = 0; i < 100; i++) assert.equal(await client.next(), succeeded(`news-${i}`));
    client.subscribe('news-100');
    assert.equal(await client.next(), subscriptionError('news-100', 'LimitExceeded', 'Too many channels on this connection', 429));
    await client.assertNextIsPong();
  });

  test('at the defaults, pusher-js with the most channels a socket may hold subscribes them all, again after a reconnect', async () => {
    const h = await start();
    const pusher = pusherClient(h);
    const count = settingDefault('BROADCAST_MAX_CHANNELS_PER_CONNECTION');
    const succeededAll = () =>
      Promise.all(
        Array.from({ length: count }, (_, i) => {
          const channel = pusher.channel(`room-${i}`) ?? pusher.subscribe(`room-${i}`);
          return new Promise<void>((resolve, reject) => {
            channel.bind('pusher:subscription_succeeded', () => resolve());
            channel.bind('pusher:subscription_error', reject);
          });
        }),
      );
    await succeededAll();
    pusher.disconnect();
    const again = succeededAll();
    pusher.connect(); // all of them subscribed again at once
    await again;
    assert.equal((await h.channelList('room-')).size, count);
  });
});

describe('frames per socket', () => {
  test('beyond the burst frames are dropped: one pusher:error 4301, then nothing until the rate has refilled the allowance', async () => {
    const h = await start({ maxFrameBurst: 10, maxFramesPerSecond: 10 });
    const { client } = await RawClient.established(h.url());
    for (let i = 0; i < 13; i++) client.send({ event: 'pusher:ping', data: {} });
    for (let i = 0; i < 10; i++) assert.equal(await client.next(), PONG);
    assert.equal(await client.next(), pusherError(4301, 'Rate limit exceeded (10 messages a second, 10 at once); messages dropped'));
    await assert.rejects(client.next(300), /no frame/); // the 12th and 13th: dropped, unanswered
    await new Promise((resolve) => setTimeout(resolve, 500));
    await client.assertNextIsPong(); // allowance earned back
  });

  test('a subscribe flood is cut at the burst; a socket that goes on sending as much again is closed with 4100; others are not affected', async () => {
    const h = await start({ maxFrameBurst: 50, maxFramesPerSecond: 10 });
    const bystander = await RawClient.established(h.url());
    const { client } = await RawClient.established(h.url());
    for (let i = 0; i < 10_000; i++) client.send({ event: 'pusher:subscribe', data: { channel: `flood-${i}` } });
    const { code, reason } = await client.closed;
    assert.deepEqual({ code, reason }, { code: 4100, reason: 'Over capacity: too many messages' });
    assert.ok((await h.channelList('flood-')).size <= 50, 'no more subscriptions than the burst');
    await bystander.client.assertNextIsPong();
  });

  test('WebSocket pings count too: beyond the allowance they get no pong', async () => {
    const h = await start({ maxFrameBurst: 5, maxFramesPerSecond: 1 });
    const { client } = await RawClient.established(h.url());
    let pongs = 0;
    client.ws.on('pong', () => pongs++);
    for (let i = 0; i < 8; i++) client.ws.ping();
    assert.equal(await client.next(), pusherError(4301, 'Rate limit exceeded (1 messages a second, 5 at once); messages dropped'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(pongs, 5);
  });

  test('the defaults: 200 frames at once, 20 a second', () => {
    assert.equal(settingDefault('BROADCAST_MAX_FRAME_BURST'), 200);
    assert.equal(settingDefault('BROADCAST_MAX_FRAMES_PER_SECOND'), 20);
    assert.ok(settingDefault('BROADCAST_MAX_FRAME_BURST') > settingDefault('BROADCAST_MAX_CHANNELS_PER_CONNECTION'));
  });
});
