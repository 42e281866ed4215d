// Presence channels, client events, pusher:signin, encrypted channels and connection limits of the embedded
// Pusher protocol v7 server, black-box: exact frames with raw `ws` clients, and the stock clients an app uses
// (pusher-js, Laravel Echo). Subscriptions and sign-ins are signed with the official `pusher` server SDK, as a
// host app's backend signs them, so these tests also prove that what the SDK produces is what Parley accepts.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { afterEach, describe, test } from 'node:test';
import Echo from 'laravel-echo';
import PusherServer from 'pusher';
import type PusherModule from 'pusher-js';
import type { ChannelAuthorizationCallback, UserAuthenticationCallback } from 'pusher-js';
import {
  APP_KEY,
  APP_SECRET,
  Pusher,
  RawClient,
  cleanup,
  connected,
  onCleanup,
  pusherClient,
  pusherError,
  start,
  subscriptionError,
  succeeded,
  waitFor,
  type Harness,
} from '../support/realtime.js';
import { localPusherOptions } from '../../testkit/pusher.js';

afterEach(cleanup);

/** 32 bytes, base64: the host app's encryption master key for private-encrypted-* channels. */
const MASTER_KEY_BASE64 = Buffer.alloc(32, 'parley-test-master-key').toString('base64');

/** The host app's backend: the official server SDK with the same key and secret as the realtime server. */
const sdk = new PusherServer({ appId: '1', key: APP_KEY, secret: APP_SECRET, host: '127.0.0.1', encryptionMasterKeyBase64: MASTER_KEY_BASE64 });

interface UserInfo {
  name: string;
}

// ---------------------------------------------------------------------------------------------
// Exact frames and signing helpers

const presenceSucceeded = (channel: string, members: [string, unknown][]): string =>
  JSON.stringify({
    event: 'pusher_internal:subscription_succeeded',
    channel,
    data: JSON.stringify({ presence: { ids: members.map(([id]) => id), hash: Object.fromEntries(members), count: members.length } }),
  });

const memberAdded = (channel: string, userId: string, userInfo: unknown): string =>
  JSON.stringify({ event: 'pusher_internal:member_added', channel, data: JSON.stringify({ user_id: userId, user_info: userInfo }) });

const memberRemoved = (channel: string, userId: string): string =>
  JSON.stringify({ event: 'pusher_internal:member_removed', channel, data: JSON.stringify({ user_id: userId }) });

/** A client event as the other subscribers must get it: `data` is the sender's text, user_id only on presence channels. */
const clientEvent = (event: string, channel: string, dataText: string, userId?: string): string =>
  JSON.stringify(userId === undefined ? { event, channel, data: dataText } : { event, channel, data: dataText, user_id: userId });

/** A presence signature over any channel_data text, for data the SDK would never produce (re-spaced, invalid). */
function signRaw(socketId: string, channel: string, channelData: string): string {
  return `${APP_KEY}:${createHmac('sha256', APP_SECRET).update(`${socketId}:${channel}:${channelData}`).digest('hex')}`;
}

type Raw = { client: RawClient; socketId: string };

async function raw(h: Harness): Promise<Raw> {
  return RawClient.established(h.url());
}

/** Subscribes a raw client to a private (or encrypted) channel with the SDK's signature and consumes the answer. */
async function joinPrivate(c: Raw, channel: string): Promise<void> {
  c.client.subscribe(channel, sdk.authorizeChannel(c.socketId, channel).auth);
  assert.equal(await c.client.next(), succeeded(channel));
}

/** Sends a presence subscribe signed by the SDK for userId (does not read the answer). */
function sendPresence(c: Raw, channel: string, userId: string, info: UserInfo): void {
  const { auth, channel_data } = sdk.authorizeChannel(c.socketId, channel, { user_id: userId, user_info: info });
  c.client.send({ event: 'pusher:subscribe', data: { channel, auth, channel_data } });
}

async function signIn(c: Raw, user: { id: string } & Record<string, unknown>): Promise<string> {
  const { auth, user_data } = sdk.authenticateUser(c.socketId, user);
  c.client.send({ event: 'pusher:signin', data: { auth, user_data } });
  assert.equal(await c.client.next(), JSON.stringify({ event: 'pusher:signin_success', data: { user_data } }));
  return user_data;
}

/**
 * What the SDK would POST to /apps/{id}/events for `trigger(channel, event, payload)`: for a private-encrypted
 * channel, `data` is the SDK's own {nonce, ciphertext} (secretbox with the channel's shared secret). The
 * request is captured instead of sent, and published through rt.publish as the HTTP API would.
 */
async function sdkTriggerBody(channel: string, event: string, payload: unknown): Promise<{ name: string; data: string; channels: string[] }> {
  const capturing = new PusherServer({ appId: '1', key: APP_KEY, secret: APP_SECRET, host: '127.0.0.1', encryptionMasterKeyBase64: MASTER_KEY_BASE64 });
  let body: unknown;
  capturing.post = async (options) => {
    body = options.body;
    return undefined as never;
  };
  await capturing.trigger(channel, event, payload);
  return body as { name: string; data: string; channels: string[] };
}

/** pusher-js whose channel authorizer is the SDK: presence channels as `userId`, encrypted ones with shared_secret. */
function sdkAuthorizer(userId: string, info: UserInfo) {
  return (params: { socketId: string; channelName: string }, callback: ChannelAuthorizationCallback): void => {
    const { socketId, channelName } = params;
    callback(
      null,
      channelName.startsWith('presence-') ? sdk.authorizeChannel(socketId, channelName, { user_id: userId, user_info: info }) : sdk.authorizeChannel(socketId, channelName),
    );
  };
}

/** A Laravel Echo client as an app configures it (Pusher passed in the options), authorized by the SDK. */
function echoFor(h: Harness, userId: string, info: UserInfo): Echo<'pusher'> {
  const echo = new Echo({
    broadcaster: 'pusher',
    // Echo's typings resolve pusher-js's default export the CommonJS way; the runtime value is the class.
    Pusher: Pusher as unknown as typeof PusherModule,
    key: APP_KEY,
    ...localPusherOptions(h.port),
    channelAuthorization: { endpoint: '/unused', transport: 'ajax', customHandler: sdkAuthorizer(userId, info) },
  });
  onCleanup(() => echo.disconnect());
  return echo;
}

/** Resolves when Echo's channel is subscribed. */
function subscribedEcho(channel: { subscribed(cb: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => channel.subscribed(resolve));
}

const byName = (members: unknown[]): unknown[] => [...members].sort((a, b) => String((a as UserInfo).name).localeCompare((b as UserInfo).name));

// ---------------------------------------------------------------------------------------------

describe('presence channels: exact frames', () => {
  const channel = 'presence-room';
  const alice = { name: 'Alice' };
  const bob = { name: 'Bob' };

  test('a subscription signed by the pusher SDK succeeds with {presence:{ids,hash,count}}; the others get member_added', async () => {
    const h = await start();
    const a = await raw(h);
    sendPresence(a, channel, '1', alice);
    assert.equal(
      await a.client.next(),
      '{"event":"pusher_internal:subscription_succeeded","channel":"presence-room","data":"{\\"presence\\":{\\"ids\\":[\\"1\\"],\\"hash\\":{\\"1\\":{\\"name\\":\\"Alice\\"}},\\"count\\":1}}"}',
    );
    const b = await raw(h);
    sendPresence(b, channel, '2', bob);
    assert.equal(await b.client.next(), presenceSucceeded(channel, [['1', alice], ['2', bob]]));
    assert.equal(
      await a.client.next(),
      '{"event":"pusher_internal:member_added","channel":"presence-room","data":"{\\"user_id\\":\\"2\\",\\"user_info\\":{\\"name\\":\\"Bob\\"}}"}',
    );
    await b.client.assertNextIsPong(); // a member is not told of its own arrival
    assert.deepEqual(await h.presenceUserIds(channel), ['1', '2']);
  });

  test('channel_data is signed as the raw string: the same content re-spaced is refused with 401', async () => {
    const h = await start();
    const c = await raw(h);
    const { auth, channel_data } = sdk.authorizeChannel(c.socketId, channel, { user_id: '1', user_info: alice });
    const respaced = JSON.stringify(JSON.parse(channel_data!), null, 1);
    assert.notEqual(respaced, channel_data);
    assert.deepEqual(JSON.parse(respaced), JSON.parse(channel_data!));

    c.client.send({ event: 'pusher:subscribe', data: { channel, auth, channel_data: respaced } });
    assert.equal(await c.client.next(), subscriptionError(channel, 'AuthError', 'Invalid channel signature', 401));
    assert.deepEqual(await h.presenceUserIds(channel), []);

    // The re-spaced text with a signature over exactly that text is fine: the server does not re-serialise.
    c.client.send({ event: 'pusher:subscribe', data: { channel, auth: signRaw(c.socketId, channel, respaced), channel_data: respaced } });
    assert.equal(await c.client.next(), presenceSucceeded(channel, [['1', alice]]));
  });

  test('a presence signature issued for another socket is refused', async () => {
    const h = await start();
    const a = await raw(h);
    const b = await raw(h);
    const { auth, channel_data } = sdk.authorizeChannel(a.socketId, channel, { user_id: '1', user_info: alice });
    b.client.send({ event: 'pusher:subscribe', data: { channel, auth, channel_data } });
    assert.equal(await b.client.next(), subscriptionError(channel, 'AuthError', 'Invalid channel signature', 401));
  });

  test('member_added only on a user\'s first tab, member_removed only when its last tab leaves', async () => {
    const h = await start();
    const observer = await raw(h);
    sendPresence(observer, channel, '2', bob);
    assert.equal(await observer.client.next(), presenceSucceeded(channel, [['2', bob]]));

    const tab1 = await raw(h);
    sendPresence(tab1, channel, '1', alice);
    assert.equal(await tab1.client.next(), presenceSucceeded(channel, [['2', bob], ['1', alice]]));
    assert.equal(await observer.client.next(), memberAdded(channel, '1', alice));

    const tab2 = await raw(h);
    sendPresence(tab2, channel, '1', { name: 'Alice (second tab)' });
    // One member however many tabs; its user_info is the first tab's.
    assert.equal(await tab2.client.next(), presenceSucceeded(channel, [['2', bob], ['1', alice]]));
    await observer.client.assertNextIsPong(); // no second member_added
    await tab1.client.assertNextIsPong(); // nor to the user's own first tab
    assert.deepEqual(await h.channelInfo(channel), { subscriptionCount: 3, userCount: 2 });

    tab1.client.send({ event: 'pusher:unsubscribe', data: { channel } });
    await tab1.client.assertNextIsPong();
    await observer.client.assertNextIsPong(); // alice is still there in tab2
    assert.deepEqual(await h.presenceUserIds(channel), ['2', '1']);

    tab2.client.ws.close(); // the last tab goes away with its socket
    assert.equal(await observer.client.next(), memberRemoved(channel, '1'));
    assert.deepEqual(await h.presenceUserIds(channel), ['2']);
    assert.deepEqual(await h.channelInfo(channel), { subscriptionCount: 1, userCount: 1 });
  });

  test('a user who leaves by unsubscribing is announced with member_removed', async () => {
    const h = await start();
    const a = await raw(h);
    const b = await raw(h);
    sendPresence(a, channel, '1', alice);
    await a.client.next();
    sendPresence(b, channel, '2', bob);
    await b.client.next();
    assert.equal(await a.client.next(), memberAdded(channel, '2', bob));
    b.client.send({ event: 'pusher:unsubscribe', data: { channel } });
    assert.equal(await a.client.next(), memberRemoved(channel, '2'));
    await b.client.assertNextIsPong(); // unsubscribing has no answer
  });

  test('beyond maxPresenceMembers a new user is refused with 403, while another tab of a member is admitted', async () => {
    const h = await start({ maxPresenceMembers: 2 });
    const [u1, u2, u3, u1again] = await Promise.all([raw(h), raw(h), raw(h), raw(h)]);
    sendPresence(u1!, channel, '1', alice);
    await u1!.client.next();
    sendPresence(u2!, channel, '2', bob);
    await u2!.client.next();
    assert.equal(await u1!.client.next(), memberAdded(channel, '2', bob));

    sendPresence(u3!, channel, '3', { name: 'Carol' });
    assert.equal(await u3!.client.next(), subscriptionError(channel, 'LimitExceeded', 'This presence channel is full', 403));
    await u3!.client.assertNextIsPong(); // refused, not disconnected
    await u1!.client.assertNextIsPong(); // and nobody heard of carol

    sendPresence(u1again!, channel, '1', alice);
    assert.equal(await u1again!.client.next(), presenceSucceeded(channel, [['1', alice], ['2', bob]]));
    assert.deepEqual(await h.channelInfo(channel), { subscriptionCount: 3, userCount: 2 });

    // Once a member has left there is room again.
    u2!.client.send({ event: 'pusher:unsubscribe', data: { channel } });
    assert.equal(await u1!.client.next(), memberRemoved(channel, '2'));
    sendPresence(u3!, channel, '3', { name: 'Carol' });
    assert.equal(await u3!.client.next(), presenceSucceeded(channel, [['1', alice], ['3', { name: 'Carol' }]]));
  });

  test('a numeric user_id (as Laravel sends it) is accepted and reported as a string', async () => {
    const h = await start();
    const a = await raw(h);
    sendPresence(a, channel, '1', alice);
    await a.client.next();
    const b = await raw(h);
    const channelData = '{"user_id":42,"user_info":{"name":"Num"}}';
    b.client.send({ event: 'pusher:subscribe', data: { channel, auth: signRaw(b.socketId, channel, channelData), channel_data: channelData } });
    assert.equal(await b.client.next(), presenceSucceeded(channel, [['1', alice], ['42', { name: 'Num' }]]));
    assert.equal(await a.client.next(), memberAdded(channel, '42', { name: 'Num' }));
    assert.deepEqual(await h.presenceUserIds(channel), ['1', '42']);
  });

  test('a member without user_info is listed with null', async () => {
    const h = await start();
    const c = await raw(h);
    const channelData = '{"user_id":"5"}';
    c.client.send({ event: 'pusher:subscribe', data: { channel, auth: signRaw(c.socketId, channel, channelData), channel_data: channelData } });
    assert.equal(await c.client.next(), presenceSucceeded(channel, [['5', null]]));
  });

  test('missing or invalid channel_data is refused and the socket stays open', async () => {
    const h = await start();
    const c = await raw(h);
    const privateStyle = sdk.authorizeChannel(c.socketId, channel).auth; // signed without channel_data
    c.client.send({ event: 'pusher:subscribe', data: { channel, auth: privateStyle } });
    assert.equal(await c.client.next(), subscriptionError(channel, 'AuthError', 'Presence channels need channel_data, or a pusher:signin first', 400));
    c.client.send({ event: 'pusher:subscribe', data: { channel, auth: privateStyle, channel_data: { user_id: '1' } } });
    assert.equal(await c.client.next(), subscriptionError(channel, 'AuthError', 'Presence channels need channel_data, or a pusher:signin first', 400));

    const unsigned = '{"user_id":"1"}';
    c.client.send({ event: 'pusher:subscribe', data: { channel, channel_data: unsigned } });
    assert.equal(await c.client.next(), subscriptionError(channel, 'AuthError', 'Invalid channel signature', 401));

    // Correctly signed, but not a member description.
    for (const channelData of ['not json', '[]', '"1"', 'null', '{}', '{"user_id":""}', '{"user_id":{"id":1}}', '{"user_id":true}']) {
      c.client.send({ event: 'pusher:subscribe', data: { channel, auth: signRaw(c.socketId, channel, channelData), channel_data: channelData } });
      assert.equal(
        await c.client.next(),
        subscriptionError(channel, 'InvalidChannelData', 'channel_data must be a JSON object with a user_id', 400),
        channelData,
      );
    }
    await c.client.assertNextIsPong();
    assert.deepEqual(h.rt.stats(), { connections: 1, channels: 0, subscriptions: 0, clusterReceived: 0, clusterDelivered: 0 });
  });

  test('a user_id over 128 characters is refused with a message saying so', async () => {
    const h = await start();
    const c = await raw(h);
    const channelData = `{"user_id":"${'x'.repeat(129)}"}`;
    c.client.send({ event: 'pusher:subscribe', data: { channel, auth: signRaw(c.socketId, channel, channelData), channel_data: channelData } });
    assert.equal(await c.client.next(), subscriptionError(channel, 'InvalidChannelData', 'user_id may have at most 128 characters', 400));
    const longest = `{"user_id":"${'x'.repeat(128)}"}`;
    c.client.send({ event: 'pusher:subscribe', data: { channel, auth: signRaw(c.socketId, channel, longest), channel_data: longest } });
    assert.equal(await c.client.next(), presenceSucceeded(channel, [['x'.repeat(128), null]]));
  });

  test('subscribing twice to a presence channel on one socket is "Existing subscription to channel", as a user or as another, and adds no member', async () => {
    const h = await start();
    const a = await raw(h);
    const b = await raw(h);
    sendPresence(a, channel, '1', alice);
    await a.client.next();
    sendPresence(b, channel, '2', bob);
    assert.equal(await b.client.next(), presenceSucceeded(channel, [['1', alice], ['2', bob]]));
    assert.equal(await a.client.next(), memberAdded(channel, '2', bob));
    const existing = JSON.stringify({ event: 'pusher:error', data: { code: null, message: `Existing subscription to channel ${channel}` } });
    sendPresence(b, channel, '2', bob);
    assert.equal(await b.client.next(), existing);
    sendPresence(b, channel, '3', { name: 'Carol' });
    assert.equal(await b.client.next(), existing);
    await a.client.assertNextIsPong();
    assert.deepEqual(await h.presenceUserIds(channel), ['1', '2']);
    assert.deepEqual(await h.channelInfo(channel), { subscriptionCount: 2, userCount: 2 });
    // One unsubscribe ends the one subscription.
    b.client.send({ event: 'pusher:unsubscribe', data: { channel } });
    assert.equal(await a.client.next(), memberRemoved(channel, '2'));
  });
});

describe('presence channels with Laravel Echo', () => {
  test('join().here/joining/leaving with two tabs of one user and another user', async () => {
    const h = await start();
    const alice = { name: 'Alice' };
    const bob = { name: 'Bob' };

    const bobEcho = echoFor(h, '2', bob);
    const joining: unknown[] = [];
    const leaving: unknown[] = [];
    const markers: unknown[] = [];
    const bobRoom = bobEcho.join('room');
    const bobHere = await new Promise<unknown[]>((resolve) => {
      bobRoom.here(resolve).joining((m: unknown) => joining.push(m)).leaving((m: unknown) => leaving.push(m));
    });
    bobRoom.listen('.Marker', (m: unknown) => markers.push(m));
    assert.deepEqual(bobHere, [bob]);

    /** Bob's frames arrive in order: once he has the marker, anything sent to him before it has arrived too. */
    const marker = async (): Promise<void> => {
      const n = markers.length;
      h.rt.publish(['presence-room'], 'Marker', JSON.stringify({ n }));
      await waitFor(() => markers.length > n);
    };

    const tabA = echoFor(h, '1', alice);
    const hereA = await new Promise<unknown[]>((resolve) => tabA.join('room').here(resolve));
    assert.deepEqual(byName(hereA), [alice, bob]);
    await waitFor(() => joining.length === 1);
    assert.deepEqual(joining, [alice]);

    const tabB = echoFor(h, '1', alice);
    const hereB = await new Promise<unknown[]>((resolve) => tabB.join('room').here(resolve));
    assert.deepEqual(byName(hereB), [alice, bob]);
    await marker();
    assert.deepEqual(joining, [alice]); // once, not once per tab

    tabA.disconnect();
    await waitFor(async () => (await h.channelInfo('presence-room'))?.subscriptionCount === 2);
    await marker();
    assert.deepEqual(leaving, []); // alice is still there in tab B

    tabB.disconnect();
    await waitFor(() => leaving.length === 1);
    assert.deepEqual(leaving, [alice]);
    assert.deepEqual(await h.presenceUserIds('presence-room'), ['2']);
    assert.deepEqual(joining, [alice]);
  });
});

describe('client events: exact frames', () => {
  async function twoOn(h: Harness, channel: string): Promise<[Raw, Raw]> {
    const a = await raw(h);
    const b = await raw(h);
    for (const c of [a, b]) {
      if (channel.startsWith('private-')) await joinPrivate(c, channel);
      else {
        c.client.subscribe(channel);
        assert.equal(await c.client.next(), succeeded(channel));
      }
    }
    return [a, b];
  }

  test('on a private channel: every other subscriber gets the sender\'s data text; the sender gets no echo', async () => {
    const h = await start();
    const channel = 'private-room';
    const [a, b] = await twoOn(h, channel);
    const c = await raw(h);
    await joinPrivate(c, channel);

    a.client.send({ event: 'client-typing', channel, data: { typing: true } });
    for (const other of [b, c]) {
      assert.equal(await other.client.next(), '{"event":"client-typing","channel":"private-room","data":"{\\"typing\\":true}"}');
    }
    // data sent as text is relayed as that very text, spacing and all, or a plain string.
    a.client.send({ event: 'client-note', channel, data: '{ "a" : 1 }' });
    assert.equal(await b.client.next(), clientEvent('client-note', channel, '{ "a" : 1 }'));
    a.client.send({ event: 'client-note', channel, data: 'hé "quoted"' });
    assert.equal(await b.client.next(), clientEvent('client-note', channel, 'hé "quoted"'));
    await a.client.assertNextIsPong(); // never echoed
  });

  test('on a presence channel the frame carries the sender\'s user_id', async () => {
    const h = await start();
    const channel = 'presence-room';
    const a = await raw(h);
    const b = await raw(h);
    sendPresence(a, channel, '1', { name: 'Alice' });
    await a.client.next();
    sendPresence(b, channel, '2', { name: 'Bob' });
    await b.client.next();
    await a.client.next(); // member_added

    b.client.send({ event: 'client-wave', channel, data: { hi: 1 } });
    assert.equal(
      await a.client.next(),
      '{"event":"client-wave","channel":"presence-room","data":"{\\"hi\\":1}","user_id":"2"}',
    );
    await b.client.assertNextIsPong();
  });

  test('refused with non-fatal 4301 on public channels; nothing is delivered', async () => {
    const h = await start();
    const [a, b] = await twoOn(h, 'news');
    a.client.send({ event: 'client-x', channel: 'news', data: {} });
    assert.equal(await a.client.next(), pusherError(4301, 'Client events are only allowed on private, private-encrypted and presence channels'));
    await a.client.assertNextIsPong();
    await b.client.assertNextIsPong();
  });

  test('on a private-encrypted channel the sender\'s (encrypted) payload reaches the other subscribers exactly as sent', async () => {
    const h = await start();
    const channel = 'private-encrypted-room';
    const [a, b] = await twoOn(h, channel);
    // What an encrypting client sends: the nonce and ciphertext it made with the channel's shared secret.
    const sealed = { nonce: 'bm9uY2Vub25jZW5vbmNlbm9uY2Vub25j', ciphertext: 'c2VhbGVkIHBheWxvYWQ=' };
    a.client.send({ event: 'client-typing', channel, data: sealed });
    assert.equal(
      await b.client.next(),
      '{"event":"client-typing","channel":"private-encrypted-room","data":"{\\"nonce\\":\\"bm9uY2Vub25jZW5vbmNlbm9uY2Vub25j\\",\\"ciphertext\\":\\"c2VhbGVkIHBheWxvYWQ=\\"}"}',
    );
    await a.client.assertNextIsPong(); // never echoed to the sender
  });

  test('refused with 4301 on a private or presence channel the socket has not joined', async () => {
    const h = await start();
    const [, member] = await twoOn(h, 'private-room');
    const outsider = await raw(h);
    outsider.client.send({ event: 'client-x', channel: 'private-room', data: {} });
    assert.equal(await outsider.client.next(), pusherError(4301, 'Not subscribed to this channel'));
    sendPresence(member, 'presence-room', '1', { name: 'Alice' });
    await member.client.next();
    outsider.client.send({ event: 'client-x', channel: 'presence-room', data: {} });
    assert.equal(await outsider.client.next(), pusherError(4301, 'Not subscribed to this channel'));
    await outsider.client.assertNextIsPong();
    await member.client.assertNextIsPong();
  });

  test('refused with 4301 on channels the server owns (serverOwnedChannelPrefixes)', async () => {
    const h = await start({ serverOwnedChannelPrefixes: ['private-chat.'] });
    const channel = 'private-chat.conversation.1';
    const [a, b] = await twoOn(h, channel);
    a.client.send({ event: 'client-typing', channel, data: {} });
    assert.equal(await a.client.next(), pusherError(4301, 'Client events are not allowed on this channel'));
    await b.client.assertNextIsPong();
    // Other private channels still carry client events.
    const [c, d] = await twoOn(h, 'private-room');
    c.client.send({ event: 'client-typing', channel: 'private-room', data: {} });
    assert.equal(await d.client.next(), clientEvent('client-typing', 'private-room', '{}'));
  });

  test('over perSecond in one second, the extra events are refused with 4301 and not delivered', async () => {
    const h = await start({ clientEvents: { perSecond: 2 } });
    const channel = 'private-room';
    const [a, b] = await twoOn(h, channel);
    for (let i = 1; i <= 3; i++) a.client.send({ event: 'client-n', channel, data: { i } });
    assert.equal(await a.client.next(), pusherError(4301, 'Client event rejected - rate limit exceeded'));
    assert.equal(await b.client.next(), clientEvent('client-n', channel, '{"i":1}'));
    assert.equal(await b.client.next(), clientEvent('client-n', channel, '{"i":2}'));
    await b.client.assertNextIsPong();
    await a.client.assertNextIsPong(); // the socket stays open
  });

  test('data larger than maxDataBytes (counted in bytes) is refused with 4301', async () => {
    const h = await start({ clientEvents: { maxDataBytes: 16 } });
    const channel = 'private-room';
    const [a, b] = await twoOn(h, channel);
    a.client.send({ event: 'client-x', channel, data: 'x'.repeat(16) });
    assert.equal(await b.client.next(), clientEvent('client-x', channel, 'x'.repeat(16)));
    a.client.send({ event: 'client-x', channel, data: 'x'.repeat(17) });
    assert.equal(await a.client.next(), pusherError(4301, 'Client event data is too large'));
    a.client.send({ event: 'client-x', channel, data: 'é'.repeat(9) }); // 9 characters, 18 bytes
    assert.equal(await a.client.next(), pusherError(4301, 'Client event data is too large'));
    await b.client.assertNextIsPong();
  });

  test('an event name longer than 200 characters is refused with 4301', async () => {
    const h = await start();
    const channel = 'private-room';
    const [a, b] = await twoOn(h, channel);
    const longest = `client-${'x'.repeat(193)}`;
    a.client.send({ event: longest, channel, data: {} });
    assert.equal(await b.client.next(), clientEvent(longest, channel, '{}'));
    a.client.send({ event: `${longest}x`, channel, data: {} });
    assert.equal(await a.client.next(), pusherError(4301, 'Event name is too long'));
    await b.client.assertNextIsPong();
  });

  test('a client event without a channel is refused with 4301', async () => {
    const h = await start();
    const { client } = await raw(h);
    client.send({ event: 'client-x', data: {} });
    assert.equal(await client.next(), pusherError(4301, 'A client event needs a channel'));
    await client.assertNextIsPong();
  });
});

describe('client events with Laravel Echo', () => {
  for (const kind of ['private', 'presence'] as const) {
    test(`whisper / listenForWhisper between two clients on a ${kind} channel`, async () => {
      const h = await start();
      const alice = echoFor(h, '1', { name: 'Alice' });
      const bob = echoFor(h, '2', { name: 'Bob' });
      const open = (echo: Echo<'pusher'>) => (kind === 'private' ? echo.private('room') : echo.join('room'));
      const [aliceRoom, bobRoom] = [open(alice), open(bob)];
      await Promise.all([subscribedEcho(aliceRoom), subscribedEcho(bobRoom)]);

      const aliceHeard: unknown[] = [];
      aliceRoom.listenForWhisper('typing', (e: unknown) => aliceHeard.push(e));
      const bobHeard = new Promise<unknown>((resolve) => bobRoom.listenForWhisper('typing', resolve));
      aliceRoom.whisper('typing', { name: 'Alice', typing: true });
      assert.deepEqual(await bobHeard, { name: 'Alice', typing: true });

      // Alice's frames are in order: the marker after her whisper proves the whisper did not come back to her.
      const marker = new Promise((resolve) => aliceRoom.listen('.Marker', resolve));
      h.rt.publish([`${kind}-room`], 'Marker', JSON.stringify({}));
      await marker;
      assert.deepEqual(aliceHeard, []);
    });
  }
});

describe('pusher:signin', () => {
  test('a sign-in signed by the SDK gets pusher:signin_success with the user_data, and #server-to-user-{id} reaches the socket', async () => {
    const h = await start();
    const c = await raw(h);
    const userData = await signIn(c, { id: '7', user_info: { name: 'Seven' } });
    assert.deepEqual(JSON.parse(userData), { id: '7', user_info: { name: 'Seven' } });
    h.rt.publish(['#server-to-user-7'], 'evt', JSON.stringify({ hello: 'seven' }));
    assert.equal(await c.client.next(), '{"event":"evt","channel":"#server-to-user-7","data":"{\\"hello\\":\\"seven\\"}"}');
    // pusher-js subscribes to its own user channel after signing in; that is allowed.
    c.client.subscribe('#server-to-user-7');
    assert.equal(await c.client.next(), succeeded('#server-to-user-7'));
  });

  test('pusher:signin_success carries data as an object: {"user_data": "<the JSON text>"}', async () => {
    const h = await start();
    const c = await raw(h);
    const { auth, user_data } = sdk.authenticateUser(c.socketId, { id: '7' });
    c.client.send({ event: 'pusher:signin', data: { auth, user_data } });
    assert.equal(await c.client.next(), '{"event":"pusher:signin_success","data":{"user_data":"{\\"id\\":\\"7\\"}"}}');
  });

  test('signing in again as the same user succeeds again; as another user it fails with 4009 and the socket is not moved', async () => {
    const h = await start();
    const c = await raw(h);
    await signIn(c, { id: '7' });
    await signIn(c, { id: '7' });
    const { auth, user_data } = sdk.authenticateUser(c.socketId, { id: '8' });
    c.client.send({ event: 'pusher:signin', data: { auth, user_data } });
    assert.equal(await c.client.next(), pusherError(4009, 'This connection is already signed in as another user'));
    assert.equal((await c.client.closed).code, 4009);
  });

  test('a bad signature is answered with pusher:error 4009 and the socket is closed with 4009', async () => {
    const h = await start();
    const c = await raw(h);
    const { user_data } = sdk.authenticateUser(c.socketId, { id: '7' });
    c.client.send({ event: 'pusher:signin', data: { auth: `${APP_KEY}:${'0'.repeat(64)}`, user_data } });
    assert.equal(await c.client.next(), pusherError(4009, 'Invalid signin signature'));
    assert.equal((await c.client.closed).code, 4009);
  });

  test('a signature for another socket, missing fields or user_data without a string id close with 4009', async () => {
    const h = await start();
    const other = await raw(h);
    const noStringId = 'user_data must be a JSON object with a non-empty string id';
    const cases: [string, (socketId: string) => unknown][] = [
      ['Invalid signin signature', () => sdk.authenticateUser(other.socketId, { id: '7' })],
      ['pusher:signin needs data.auth and data.user_data', (s) => ({ auth: sdk.authenticateUser(s, { id: '7' }).auth })],
      ['pusher:signin needs data.auth and data.user_data', (s) => ({ user_data: sdk.authenticateUser(s, { id: '7' }).user_data })],
      [noStringId, (s) => signUserData(s, '{"id":7}')],
      [noStringId, (s) => signUserData(s, '{"id":""}')],
      [noStringId, (s) => signUserData(s, '{"name":"no id"}')],
      [noStringId, (s) => signUserData(s, 'not json')],
    ];
    for (const [message, data] of cases) {
      const c = await raw(h);
      c.client.send({ event: 'pusher:signin', data: data(c.socketId) });
      assert.equal(await c.client.next(), pusherError(4009, message));
      assert.equal((await c.client.closed).code, 4009);
    }
    await other.client.assertNextIsPong();
  });

  test('pusher-js: signin() through userAuthentication.customHandler, then user.bind receives what is sent to #server-to-user-7', async () => {
    const h = await start();
    const pusher = pusherClient(h, {
      userAuthentication: {
        endpoint: '/unused',
        transport: 'ajax',
        customHandler: ({ socketId }: { socketId: string }, callback: UserAuthenticationCallback) =>
          callback(null, sdk.authenticateUser(socketId, { id: '7', user_info: { name: 'Seven' } })),
      },
    });
    const received = new Promise<unknown>((resolve) => pusher.user.bind('evt', resolve));
    pusher.signin();
    await connected(pusher);
    await waitFor(() => pusher.user.serverToUserChannel?.subscribed === true);
    assert.deepEqual(pusher.user.user_data, { id: '7', user_info: { name: 'Seven' } });
    h.rt.publish(['#server-to-user-7'], 'evt', JSON.stringify({ note: 'for seven only' }));
    assert.deepEqual(await received, { note: 'for seven only' });
  });

  test('a signed-in socket joins a presence channel without channel_data as its user, user_info from the sign-in', async () => {
    const channel = 'presence-room';
    const h = await start();
    const c = await raw(h);
    const other = await raw(h);
    sendPresence(other, channel, '1', { name: 'Alice' });
    await other.client.next();
    await signIn(c, { id: '7', user_info: { name: 'Seven' } });
    // The host app's auth endpoint signs socket_id:channel only (no channel_data), as for a private channel.
    c.client.send({ event: 'pusher:subscribe', data: { channel, auth: sdk.authorizeChannel(c.socketId, channel).auth } });
    assert.equal(await c.client.next(), presenceSucceeded(channel, [['1', { name: 'Alice' }], ['7', { name: 'Seven' }]]));
    assert.equal(await other.client.next(), memberAdded(channel, '7', { name: 'Seven' }));
    // A bad signature is still refused.
    const d = await raw(h);
    await signIn(d, { id: '8' });
    d.client.send({ event: 'pusher:subscribe', data: { channel, auth: sdk.authorizeChannel(c.socketId, channel).auth } });
    assert.equal(await d.client.next(), subscriptionError(channel, 'AuthError', 'Invalid channel signature', 401));
  });

  test('pusher-js: after signin(), a presence channel whose authorizer gives no channel_data is joined as the signed-in user', async () => {
    const channel = 'presence-room';
    const h = await start();
    const pusher = pusherClient(h, {
      userAuthentication: {
        endpoint: '/unused',
        transport: 'ajax',
        customHandler: ({ socketId }: { socketId: string }, callback: UserAuthenticationCallback) =>
          callback(null, sdk.authenticateUser(socketId, { id: '7', user_info: { name: 'Seven' } })),
      },
      channelAuthorization: {
        endpoint: '/unused',
        transport: 'ajax',
        customHandler: ({ socketId, channelName }: { socketId: string; channelName: string }, callback: ChannelAuthorizationCallback) =>
          callback(null, sdk.authorizeChannel(socketId, channelName)),
      },
    });
    pusher.signin();
    await connected(pusher);
    const room = pusher.subscribe(channel) as unknown as { members: { me: { id: string; info: unknown } | null; count: number } };
    const failed: unknown[] = [];
    (room as unknown as { bind(e: string, f: (x: unknown) => void): void }).bind('pusher:subscription_error', (e) => failed.push(e));
    await new Promise<void>((resolve) => (room as unknown as { bind(e: string, f: () => void): void }).bind('pusher:subscription_succeeded', resolve));
    assert.deepEqual(failed, []);
    assert.equal(room.members.count, 1);
    assert.deepEqual(room.members.me, { id: '7', info: { name: 'Seven' } });
  });

  test('terminateUserConnections closes both of a user\'s sockets with 4009 and leaves the others open', async () => {
    const h = await start();
    const [tab1, tab2, someoneElse, anonymous] = await Promise.all([raw(h), raw(h), raw(h), raw(h)]);
    await signIn(tab1!, { id: '7' });
    await signIn(tab2!, { id: '7' });
    await signIn(someoneElse!, { id: '8' });

    await h.rt.terminateUserConnections('7');
    for (const tab of [tab1!, tab2!]) {
      assert.equal(await tab.client.next(), pusherError(4009, 'Connection terminated'));
      assert.equal((await tab.client.closed).code, 4009);
    }
    await someoneElse!.client.assertNextIsPong();
    await anonymous!.client.assertNextIsPong();
    await waitFor(() => h.rt.stats().connections === 2);
    assert.equal(await h.channelInfo('#server-to-user-7'), undefined);
    // Again, or for a user with no socket: nobody else is touched.
    await h.rt.terminateUserConnections('7');
    await h.rt.terminateUserConnections('nobody');
    await someoneElse!.client.assertNextIsPong();
    await anonymous!.client.assertNextIsPong();
    assert.equal(h.rt.stats().connections, 2);
  });

  test('pusher-js is not reconnected after terminateUserConnections', async () => {
    const h = await start();
    const pusher = pusherClient(h, {
      userAuthentication: {
        endpoint: '/unused',
        transport: 'ajax',
        customHandler: ({ socketId }: { socketId: string }, callback: UserAuthenticationCallback) => callback(null, sdk.authenticateUser(socketId, { id: '7' })),
      },
    });
    pusher.signin();
    await connected(pusher);
    await waitFor(() => pusher.user.serverToUserChannel?.subscribed === true);
    // pusher-js answers a "refused" close (4000-4099) by closing its already closed faye-websocket again, which
    // arms faye's 30 s close-handshake timer (not unref'd) and would hold this test process for 30 s. It does
    // nothing once the socket is closed, so it is cleared below; it has no bearing on what is asserted.
    const faye = (pusher.connection as unknown as { connection: { transport: { socket: { _closeTimer?: NodeJS.Timeout } } } }).connection.transport.socket;
    await h.rt.terminateUserConnections('7');
    // 'disconnected' (not 'connecting'): pusher-js gave up instead of scheduling a reconnection.
    await waitFor(() => pusher.connection.state === 'disconnected');
    clearTimeout(faye._closeTimer);
    await waitFor(() => h.rt.stats().connections === 0);
  });

  test('subscribing to #server-to-user-{id} is refused unless signed in as that user', async () => {
    const h = await start();
    const c = await raw(h);
    c.client.subscribe('#server-to-user-8');
    assert.equal(await c.client.next(), subscriptionError('#server-to-user-8', 'AuthError', 'Sign in as this user first', 403));
    await signIn(c, { id: '7' });
    c.client.subscribe('#server-to-user-8', h.authorize(c.socketId, '#server-to-user-8')); // even with a channel signature
    assert.equal(await c.client.next(), subscriptionError('#server-to-user-8', 'AuthError', 'Sign in as this user first', 403));
    h.rt.publish(['#server-to-user-8'], 'evt', JSON.stringify({}));
    await c.client.assertNextIsPong(); // user 8's events do not reach user 7
  });
});

function signUserData(socketId: string, userData: string): { auth: string; user_data: string } {
  return { auth: `${APP_KEY}:${createHmac('sha256', APP_SECRET).update(`${socketId}::user::${userData}`).digest('hex')}`, user_data: userData };
}

describe('encrypted channels', () => {
  const channel = 'private-encrypted-room';

  test('subscribing needs a valid signature; events are relayed byte-for-byte', async () => {
    const h = await start();
    const c = await raw(h);
    c.client.subscribe(channel);
    assert.equal(await c.client.next(), subscriptionError(channel, 'AuthError', 'Invalid channel signature', 401));
    c.client.subscribe(channel, `${APP_KEY}:${'0'.repeat(64)}`);
    assert.equal(await c.client.next(), subscriptionError(channel, 'AuthError', 'Invalid channel signature', 401));
    const authorized = sdk.authorizeChannel(c.socketId, channel);
    assert.ok(authorized.shared_secret); // for the client only; the socket is sent the auth alone
    c.client.subscribe(channel, authorized.auth);
    assert.equal(await c.client.next(), succeeded(channel));

    const body = await sdkTriggerBody(channel, 'secret-event', { text: 'only the clients can read this' });
    assert.deepEqual(Object.keys(JSON.parse(body.data)).sort(), ['ciphertext', 'nonce']);
    assert.ok(!body.data.includes('only the clients'));
    h.rt.publish(body.channels, body.name, body.data);
    const frame = JSON.parse(await c.client.next()) as { event: string; channel: string; data: string };
    assert.deepEqual(frame, { event: 'secret-event', channel, data: body.data });
  });

  test('pusher-js decrypts an event the pusher SDK encrypted, with the shared_secret from the SDK\'s authorization', async () => {
    const h = await start();
    const pusher = pusherClient(h, {
      channelAuthorization: { endpoint: '/unused', transport: 'ajax', customHandler: sdkAuthorizer('1', { name: 'Alice' }) },
    });
    const subscription = pusher.subscribe(channel);
    await new Promise<void>((resolve) => subscription.bind('pusher:subscription_succeeded', () => resolve()));
    const received = new Promise<unknown>((resolve) => subscription.bind('secret-event', resolve));
    const body = await sdkTriggerBody(channel, 'secret-event', { text: 'hé, secret', n: 1 });
    h.rt.publish(body.channels, body.name, body.data);
    assert.deepEqual(await received, { text: 'hé, secret', n: 1 });
  });
});

describe('connection limits', () => {
  test('beyond maxConnections a socket gets pusher:error 4100 and close 4100; once one leaves, a new one gets in', async () => {
    const h = await start({ maxConnections: 2 });
    const a = await raw(h);
    const b = await raw(h);
    const refused = await RawClient.connect(h.url());
    assert.equal(await refused.next(), pusherError(4100, 'Over capacity'));
    assert.equal((await refused.closed).code, 4100);
    await a.client.assertNextIsPong();
    await b.client.assertNextIsPong();
    assert.equal(h.rt.stats().connections, 2);

    a.client.ws.close();
    await waitFor(() => h.rt.stats().connections === 1);
    const c = await raw(h);
    await c.client.assertNextIsPong();
  });

  test('pusher-js refused for capacity backs off and gets in once there is room', async () => {
    const h = await start({ maxConnections: 1 });
    const first = await raw(h);
    const pusher = pusherClient(h);
    type ConnectionError = { type: string; error?: { data?: { code?: number } } };
    const err = await new Promise<ConnectionError>((resolve) => pusher.connection.bind('error', resolve));
    assert.equal(err.error?.data?.code, 4100);
    assert.equal(pusher.connection.state, 'connecting'); // backing off, not given up
    first.client.ws.close();
    await connected(pusher); // pusher-js retries after its one-second back-off
    assert.equal(h.rt.stats().connections, 1);
  });

  test('allowedOrigins: a disallowed Origin gets 4009 and close; an allowed one and none at all connect', async () => {
    const h = await start({ allowedOrigins: ['https://app.example'] });
    const evil = await RawClient.connect(h.url(), { origin: 'https://evil.example' });
    assert.equal(await evil.next(), pusherError(4009, 'Origin not allowed'));
    assert.equal((await evil.closed).code, 4009);
    const lookalike = await RawClient.connect(h.url(), { origin: 'https://app.example.evil.example' });
    assert.equal((await lookalike.closed).code, 4009);

    const allowed = await RawClient.established(h.url(), { origin: 'https://app.example' });
    await allowed.client.assertNextIsPong();
    const noOrigin = await RawClient.established(h.url());
    await noOrigin.client.assertNextIsPong();
    assert.equal(h.rt.stats().connections, 2);
  });

  test('allowedOrigins ["*"] lets any origin in', async () => {
    const h = await start({ allowedOrigins: ['*'] });
    const c = await RawClient.established(h.url(), { origin: 'https://anywhere.example' });
    await c.client.assertNextIsPong();
  });
});

describe('protocol edge cases: exact frames', () => {
  test('pusher:subscribe with missing or non-string data or data.channel gets a non-fatal pusher:error', async () => {
    const h = await start();
    const { client } = await raw(h);
    for (const frame of [
      { event: 'pusher:subscribe' },
      { event: 'pusher:subscribe', data: 5 },
      { event: 'pusher:subscribe', data: null },
      { event: 'pusher:subscribe', data: 'news' },
      { event: 'pusher:subscribe', data: { channel: 5 } },
      { event: 'pusher:subscribe', data: { channel: ['news'] } },
      { event: 'pusher:subscribe', data: JSON.stringify({ channel: null }) },
    ]) {
      client.send(frame);
      assert.equal(await client.next(), pusherError(4300, 'pusher:subscribe needs data.channel'), JSON.stringify(frame));
    }
    await client.assertNextIsPong();
    assert.equal(h.rt.stats().subscriptions, 0);
  });

  test('a frame whose channel is not a string is refused', async () => {
    const h = await start();
    const { client } = await raw(h);
    client.send({ event: 'client-x', channel: 5, data: {} });
    assert.equal(await client.next(), pusherError(4300, '"channel" must be a string'));
    await client.assertNextIsPong();
  });

  test('an unknown non-pusher event is refused like an unknown pusher: one', async () => {
    const h = await start();
    const { client } = await raw(h);
    client.send({ event: 'pusher_internal:member_added', data: {} });
    assert.equal(await client.next(), pusherError(4300, 'Unknown event: pusher_internal:member_added'));
    client.send({ event: 'hello', data: {} });
    assert.equal(await client.next(), pusherError(4300, 'Unknown event: hello'));
    await client.assertNextIsPong();
  });

  test('a binary frame gets a non-fatal pusher:error', async () => {
    const h = await start();
    const { client } = await raw(h);
    client.ws.send(Buffer.from('{"event":"pusher:ping","data":{}}'), { binary: true });
    assert.equal(await client.next(), pusherError(4300, 'Binary frames are not supported'));
    await client.assertNextIsPong();
  });

  test('pusher:unsubscribe from a channel the socket is not in gets no answer and the socket is fine', async () => {
    const h = await start();
    const { client } = await raw(h);
    client.subscribe('news');
    assert.equal(await client.next(), succeeded('news'));
    for (const channel of ['elsewhere', 'private-room', 'presence-room', '#server-to-user-1']) {
      client.send({ event: 'pusher:unsubscribe', data: { channel } });
    }
    await client.assertNextIsPong();
    assert.deepEqual(h.rt.stats(), { connections: 1, channels: 1, subscriptions: 1, clusterReceived: 0, clusterDelivered: 0 });
    h.rt.publish(['news'], 'Headline', JSON.stringify({ n: 1 }));
    assert.equal(await client.next(), '{"event":"Headline","channel":"news","data":"{\\"n\\":1}"}');
  });

  test('pusher:unsubscribe without data.channel gets a non-fatal pusher:error', async () => {
    const h = await start();
    const { client } = await raw(h);
    client.send({ event: 'pusher:unsubscribe', data: {} });
    assert.equal(await client.next(), pusherError(4300, 'pusher:unsubscribe needs data.channel'));
    await client.assertNextIsPong();
  });

  test('subscribing twice to a private channel answers twice and counts once', async () => {
    const h = await start();
    const c = await raw(h);
    await joinPrivate(c, 'private-room');
    await joinPrivate(c, 'private-room');
    assert.deepEqual(await h.channelInfo('private-room'), { subscriptionCount: 1 });
    h.rt.publish(['private-room'], 'Once', JSON.stringify({}));
    assert.equal(await c.client.next(), '{"event":"Once","channel":"private-room","data":"{}"}');
    await c.client.assertNextIsPong();
  });

  test('a bad signature on a presence channel is refused with 401 and adds no member', async () => {
    const h = await start();
    const c = await raw(h);
    const channelData = '{"user_id":"1"}';
    c.client.send({ event: 'pusher:subscribe', data: { channel: 'presence-room', auth: `${APP_KEY}:${'0'.repeat(64)}`, channel_data: channelData } });
    assert.equal(await c.client.next(), subscriptionError('presence-room', 'AuthError', 'Invalid channel signature', 401));
    c.client.send({ event: 'pusher:subscribe', data: { channel: 'presence-room', auth: `other-key:${signRaw(c.socketId, 'presence-room', channelData).split(':')[1]}`, channel_data: channelData } });
    assert.equal(await c.client.next(), subscriptionError('presence-room', 'AuthError', 'Invalid channel signature', 401));
    assert.deepEqual(await h.presenceUserIds('presence-room'), []);
    await c.client.assertNextIsPong();
  });
});

describe('occupancy (rt.occupancy): one channel, by prefix, presence users', () => {
  test('report subscriptions per channel, distinct users on presence channels only, and no #server-to-user channels', async () => {
    const h = await start();
    const [a, b, c, d] = await Promise.all([raw(h), raw(h), raw(h), raw(h)]);
    for (const x of [a!, b!]) {
      x.client.subscribe('news');
      await x.client.next();
    }
    await joinPrivate(a!, 'private-room');
    await joinPrivate(c!, 'private-encrypted-room');
    sendPresence(a!, 'presence-room', '1', { name: 'Alice' });
    await a!.client.next();
    sendPresence(b!, 'presence-room', '1', { name: 'Alice' });
    await b!.client.next();
    sendPresence(c!, 'presence-room', '2', { name: 'Bob' });
    await c!.client.next();
    sendPresence(d!, 'presence-lobby', '3', { name: 'Carol' });
    await d!.client.next();
    await signIn(d!, { id: '3' });

    assert.deepEqual(await h.channelInfo('news'), { subscriptionCount: 2 });
    assert.deepEqual(await h.channelInfo('private-room'), { subscriptionCount: 1 });
    assert.deepEqual(await h.channelInfo('private-encrypted-room'), { subscriptionCount: 1 });
    assert.deepEqual(await h.channelInfo('presence-room'), { subscriptionCount: 3, userCount: 2 });
    assert.equal(await h.channelInfo('nobody-here'), undefined);
    assert.deepEqual(
      new Map([...(await h.channelList())].sort(([x], [y]) => x.localeCompare(y))),
      new Map([
        ['news', { subscriptionCount: 2 }],
        ['presence-lobby', { subscriptionCount: 1, userCount: 1 }],
        ['presence-room', { subscriptionCount: 3, userCount: 2 }],
        ['private-encrypted-room', { subscriptionCount: 1 }],
        ['private-room', { subscriptionCount: 1 }],
      ]),
    );
    assert.deepEqual([...(await h.channelList('presence-')).keys()].sort(), ['presence-lobby', 'presence-room']);
    assert.deepEqual([...(await h.channelList('#')).keys()], []);
    assert.deepEqual(await h.presenceUserIds('presence-room'), ['1', '2']);
    assert.deepEqual(await h.presenceUserIds('presence-nobody'), []);

    for (const x of [a!, b!, c!, d!]) x.client.ws.close();
    await waitFor(() => h.rt.stats().connections === 0);
    assert.deepEqual(await h.channelList(), new Map());
    assert.equal(await h.channelInfo('presence-room'), undefined);
    assert.deepEqual(await h.presenceUserIds('presence-room'), []);
    assert.deepEqual(h.rt.stats(), { connections: 0, channels: 0, subscriptions: 0, clusterReceived: 0, clusterDelivered: 0 });
  });
});
