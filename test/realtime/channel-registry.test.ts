// Unit tests of the in-memory parts of src/realtime: the channel registry (fan-out and user
// removal), the remembered-subscriber store (TTL and cap) and the frame codec.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ChannelRegistry, type Subscriber } from '../../src/realtime/channels.js';
import { encodeFrame, parseClientFrame } from '../../src/realtime/pusher/frames.js';
import { channelAuth, isValidSocketId, verifyChannelAuth } from '../../src/realtime/pusher/signature.js';
import { MemoryAuthorizationLedger } from '../../src/realtime/authorizations/memory.js';

class FakeSubscriber implements Subscriber {
  readonly channels = new Set<string>();
  readonly received: (string | Buffer)[] = [];
  constructor(readonly id: string) {}
  send(frame: string | Buffer): boolean {
    this.received.push(frame);
    return true;
  }
}

describe('ChannelRegistry', () => {
  test('broadcast hands the very same frame object to every subscriber except the excepted id', () => {
    const registry = new ChannelRegistry();
    const [a, b, c] = ['1.1', '2.2', '3.3'].map((id) => new FakeSubscriber(id));
    for (const s of [a!, b!, c!]) registry.subscribe(s, 'room');
    const frame = Buffer.from('{"event":"E","channel":"room","data":"{}"}');
    assert.equal(registry.broadcast('room', frame, '2.2'), 2);
    assert.equal(a!.received[0], frame);
    assert.equal(c!.received[0], frame);
    assert.deepEqual(b!.received, []);
  });

  test('a pending presence subscription gets no frames until it is activated, and counts as a member at once', () => {
    const registry = new ChannelRegistry();
    const [present, joining] = [new FakeSubscriber('1.1'), new FakeSubscriber('2.2')];
    registry.join(present, 'presence-room', { userId: 'a', info: null });
    assert.equal(registry.join(joining, 'presence-room', { userId: 'b', info: null }, { pending: true }), true);
    assert.equal(registry.memberCount('presence-room'), 2);
    assert.equal(registry.broadcast('presence-room', 'before'), 1);
    registry.activate(joining, 'presence-room');
    assert.equal(registry.broadcast('presence-room', 'after'), 2);
    assert.deepEqual(joining.received, ['after']);
  });

  test('broadcast to a channel nobody is in sends nothing', () => {
    assert.equal(new ChannelRegistry().broadcast('empty', 'x'), 0);
  });

  test('subscriptions are counted once, and channels disappear with their last subscriber', () => {
    const registry = new ChannelRegistry();
    const a = new FakeSubscriber('1.1');
    registry.subscribe(a, 'room');
    registry.subscribe(a, 'room');
    registry.subscribe(a, 'hall');
    assert.deepEqual(registry.stats(), { channels: 2, subscriptions: 2 });
    assert.deepEqual([...a.channels], ['room', 'hall']);
    assert.equal(registry.unsubscribe(a, 'room'), true);
    assert.equal(registry.unsubscribe(a, 'room'), false);
    registry.removeSubscriber(a);
    assert.deepEqual(registry.stats(), { channels: 0, subscriptions: 0 });
    assert.equal(a.channels.size, 0);
  });

  test('unsubscribeUser removes only that user’s subscriptions to that channel', () => {
    const registry = new ChannelRegistry();
    const alice1 = new FakeSubscriber('1.1');
    const alice2 = new FakeSubscriber('1.2');
    const bob = new FakeSubscriber('2.1');
    const anonymous = new FakeSubscriber('3.1');
    registry.subscribe(alice1, 'room', 'alice');
    registry.subscribe(alice2, 'room', 'alice');
    registry.subscribe(alice1, 'hall', 'alice');
    registry.subscribe(bob, 'room', 'bob');
    registry.subscribe(anonymous, 'room');
    assert.equal(registry.unsubscribeUser('room', 'alice'), 2);
    assert.equal(registry.broadcast('room', 'x'), 2);
    assert.deepEqual([...alice1.channels], ['hall']);
    assert.equal(registry.unsubscribeUser('nowhere', 'alice'), 0);
  });

  test('a later subscribe with a known user id attributes an existing subscription', () => {
    const registry = new ChannelRegistry();
    const a = new FakeSubscriber('1.1');
    registry.subscribe(a, 'room');
    registry.subscribe(a, 'room', 'alice');
    assert.equal(registry.subscriberUserId(a, 'room'), 'alice');
    registry.subscribe(a, 'room'); // an unattributed re-subscribe does not erase it
    assert.equal(registry.subscriberUserId(a, 'room'), 'alice');
  });
});

describe('MemoryAuthorizationLedger', () => {
  test('a remembered user is claimed once by the matching socket and channel', () => {
    const store = new MemoryAuthorizationLedger();
    store.remember('1.1', 'room', 'alice');
    assert.equal(store.claim('1.1', 'other'), undefined);
    assert.equal(store.claim('9.9', 'room'), undefined);
    assert.equal(store.claim('1.1', 'room'), 'alice');
    assert.equal(store.claim('1.1', 'room'), undefined);
  });

  test('entries not claimed within the TTL are forgotten', () => {
    let now = 0;
    const store = new MemoryAuthorizationLedger(60_000, 1_000, () => now);
    store.remember('1.1', 'room', 'alice');
    now = 30_000;
    store.remember('2.2', 'room', 'bob');
    now = 60_001;
    assert.equal(store.claim('1.1', 'room'), undefined);
    store.remember('3.3', 'room', 'carol'); // sweeps what expired
    assert.equal(store.size, 2);
    now = 90_001;
    store.remember('4.4', 'room', 'dave');
    assert.equal(store.size, 2); // bob expired
    assert.equal(store.claim('3.3', 'room'), 'carol');
  });

  test('the store never holds more than its cap; the oldest entries go first', () => {
    const store = new MemoryAuthorizationLedger(60_000, 3, () => 0);
    for (let i = 1; i <= 5; i++) store.remember(`${i}.1`, 'room', `user${i}`);
    assert.equal(store.size, 3);
    assert.equal(store.claim('2.1', 'room'), undefined);
    assert.equal(store.claim('3.1', 'room'), 'user3');
  });
});

describe('frames and signatures', () => {
  test('server frames carry data as a JSON string', () => {
    assert.equal(encodeFrame('pusher:pong', {}), '{"event":"pusher:pong","data":"{}"}');
    assert.equal(encodeFrame('E', { a: 1 }, 'c'), '{"event":"E","channel":"c","data":"{\\"a\\":1}"}');
  });

  test('client frames are parsed defensively, never throwing', () => {
    for (const text of ['', 'null', '"x"', '42', '[]', '{}', '{"event":5}', '{"event":"e","channel":1}']) {
      assert.equal(parseClientFrame(text).ok, false, text);
    }
    const parsed = parseClientFrame('{"event":"pusher:subscribe","data":"{\\"channel\\":\\"c\\"}"}');
    assert.deepEqual(parsed, {
      ok: true,
      frame: { event: 'pusher:subscribe', channel: undefined, data: { channel: 'c' }, dataText: '{"channel":"c"}' },
    });
  });

  test('channel auth is "<key>:" + HMAC-SHA256 hex of "socket_id:channel" and is verified exactly', () => {
    // The worked example of Pusher's channel authorization docs (also checked with openssl).
    const [key, secret] = ['278d425bdf160c739803', '7ad3773142a6692b25b8'];
    const auth = channelAuth(key, secret, '1234.1234', 'private-foobar');
    assert.equal(auth, '278d425bdf160c739803:58df8b0c36d6982b82c3ecf6b4662e34fe8c25bba48f5369f135bf843651c3a4');
    assert.equal(verifyChannelAuth(key, secret, '1234.1234', 'private-foobar', auth), true);
    assert.equal(verifyChannelAuth(key, secret, '1234.1234', 'private-foobar', auth.slice(0, -1)), false);
    assert.equal(verifyChannelAuth(key, secret, '1234.1235', 'private-foobar', auth), false);
    assert.equal(verifyChannelAuth(key, secret, '1234.1234', 'private-foobar', `x${auth.slice(1)}`), false);
  });

  test('socket ids are two integers joined by a dot', () => {
    assert.ok(isValidSocketId('123.456'));
    for (const bad of ['123', '1.2.3', 'a.b', '1.2 ', '.1', '1.']) assert.equal(isValidSocketId(bad), false, bad);
  });
});
