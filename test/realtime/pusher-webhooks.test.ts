// Pusher webhooks of the built-in server on one node: what is sent, in which order, in Pusher's format, and
// that every delivery passes the official `pusher` SDK's webhook() checker (test/support/webhook-receiver.ts).

import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { pino } from 'pino';
import { memoryOccupancy } from '../../src/realtime/occupancy/memory.js';
import type { OccupancyTracker } from '../../src/realtime/occupancy/occupancy.js';
import { createWebhookSender } from '../../src/realtime/pusher-webhooks.js';
import { APP_KEY, APP_SECRET, RawClient, cleanup, onCleanup, start, succeeded, waitFor, type Harness } from '../support/realtime.js';
import { webhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

afterEach(cleanup);

const sdk = new PusherServer({ appId: '1', key: APP_KEY, secret: APP_SECRET, host: '127.0.0.1' });
const silent = pino({ level: 'silent' });

async function receiver(): Promise<WebhookReceiver> {
  const r = await webhookReceiver({ key: APP_KEY, secret: APP_SECRET });
  onCleanup(() => r.close());
  return r;
}

async function withWebhooks(r: WebhookReceiver, options: { retryBaseMs?: number } = {}, occupancy?: OccupancyTracker): Promise<Harness> {
  const webhooks = createWebhookSender({ urls: [r.url], appKey: APP_KEY, appSecret: APP_SECRET, logger: silent, batchMs: 20, ...options });
  return start({ webhooks, ...(occupancy ? { occupancy } : {}) });
}

/** The events received, without time_ms, once there are at least n. */
async function eventsOf(r: WebhookReceiver, n: number): Promise<Record<string, unknown>[]> {
  await waitFor(() => r.events().length >= n, 3000);
  assert.deepEqual(r.invalid, []);
  return r.events();
}

describe('webhooks on one node', () => {
  test('channel_occupied on the first subscriber, channel_vacated when the last leaves, signed as the SDK checks', async () => {
    const r = await receiver();
    const h = await withWebhooks(r);
    const a = await RawClient.established(h.url());
    const b = await RawClient.established(h.url());
    a.client.subscribe('news');
    assert.equal(await a.client.next(), succeeded('news'));
    b.client.subscribe('news');
    assert.equal(await b.client.next(), succeeded('news'));
    assert.deepEqual(await eventsOf(r, 1), [{ name: 'channel_occupied', channel: 'news' }]);
    a.client.send({ event: 'pusher:unsubscribe', data: { channel: 'news' } });
    await a.client.assertNextIsPong();
    b.client.ws.close();
    assert.deepEqual(await eventsOf(r, 2), [
      { name: 'channel_occupied', channel: 'news' },
      { name: 'channel_vacated', channel: 'news' },
    ]);
    const [first] = r.deliveries;
    assert.equal(first!.headers['x-pusher-key'], APP_KEY);
    assert.equal(first!.headers['content-type'], 'application/json');
    assert.ok(Math.abs(first!.timeMs - Date.now()) < 5000);
  });

  test('member_added once per user (not per tab), member_removed when its last tab leaves, then channel_vacated', async () => {
    const r = await receiver();
    const h = await withWebhooks(r);
    const join = async (userId: string) => {
      const c = await RawClient.established(h.url());
      const { auth, channel_data } = sdk.authorizeChannel(c.socketId, 'presence-room', { user_id: userId, user_info: {} });
      c.client.send({ event: 'pusher:subscribe', data: { channel: 'presence-room', auth, channel_data } });
      assert.equal(JSON.parse(await c.client.next()).event, 'pusher_internal:subscription_succeeded');
      return c;
    };
    const tab1 = await join('7');
    const tab2 = await join('7');
    assert.deepEqual(await eventsOf(r, 2), [
      { name: 'channel_occupied', channel: 'presence-room' },
      { name: 'member_added', channel: 'presence-room', user_id: '7' },
    ]);
    tab1.client.ws.close();
    await tab1.client.closed;
    tab2.client.ws.close();
    assert.deepEqual((await eventsOf(r, 4)).slice(2), [
      { name: 'member_removed', channel: 'presence-room', user_id: '7' },
      { name: 'channel_vacated', channel: 'presence-room' },
    ]);
  });

  // On a Redis Cluster the shared occupancy and the shared presence live on different masters, and the presence
  // answer can come first: the member_added its subscription decided still goes after its channel_occupied.
  test('member_added waits for the channel_occupied of its own subscription when occupancy answers later', async () => {
    const r = await receiver();
    const memory = memoryOccupancy();
    const slow: OccupancyTracker = { ...memory, occupy: async (channel) => (await new Promise((resolve) => setTimeout(resolve, 100)), memory.occupy(channel)) };
    const h = await withWebhooks(r, {}, slow);
    const c = await RawClient.established(h.url());
    const { auth, channel_data } = sdk.authorizeChannel(c.socketId, 'presence-late', { user_id: '9', user_info: {} });
    c.client.send({ event: 'pusher:subscribe', data: { channel: 'presence-late', auth, channel_data } });
    assert.equal(JSON.parse(await c.client.next()).event, 'pusher_internal:subscription_succeeded');
    assert.deepEqual(await eventsOf(r, 2), [
      { name: 'channel_occupied', channel: 'presence-late' },
      { name: 'member_added', channel: 'presence-late', user_id: '9' },
    ]);
  });

  test('client_event carries event, data, socket_id, and user_id on presence channels', async () => {
    const r = await receiver();
    const h = await withWebhooks(r);
    const a = await RawClient.established(h.url());
    const b = await RawClient.established(h.url());
    for (const c of [a, b]) {
      c.client.subscribe('private-room', sdk.authorizeChannel(c.socketId, 'private-room').auth);
      assert.equal(await c.client.next(), succeeded('private-room'));
    }
    a.client.send({ event: 'client-typing', channel: 'private-room', data: { typing: true } });
    assert.equal(JSON.parse(await b.client.next()).event, 'client-typing');
    const { auth, channel_data } = sdk.authorizeChannel(a.socketId, 'presence-x', { user_id: '42' });
    a.client.send({ event: 'pusher:subscribe', data: { channel: 'presence-x', auth, channel_data } });
    await a.client.next();
    a.client.send({ event: 'client-wave', channel: 'presence-x', data: 'hi' });
    await a.client.assertNextIsPong();
    const events = await eventsOf(r, 5);
    assert.deepEqual(
      events.filter((e) => e.name === 'client_event'),
      [
        { name: 'client_event', channel: 'private-room', event: 'client-typing', data: '{"typing":true}', socket_id: a.socketId },
        { name: 'client_event', channel: 'presence-x', event: 'client-wave', data: 'hi', socket_id: a.socketId, user_id: '42' },
      ],
    );
  });

  test('events of one moment leave in one request', async () => {
    const r = await receiver();
    const h = await withWebhooks(r);
    const { client } = await RawClient.established(h.url());
    for (const channel of ['a', 'b', 'c']) client.subscribe(channel);
    for (const channel of ['a', 'b', 'c']) assert.equal(await client.next(), succeeded(channel));
    await eventsOf(r, 3);
    assert.equal(r.deliveries.length, 1);
    assert.deepEqual(r.deliveries[0]!.events.map((e) => e.channel), ['a', 'b', 'c']);
  });

  test('a failed delivery is retried with backoff until the receiver takes it', async () => {
    const r = await receiver();
    r.failNext(2);
    const h = await withWebhooks(r, { retryBaseMs: 50 });
    const { client } = await RawClient.established(h.url());
    client.subscribe('retried');
    await client.next();
    assert.deepEqual(await eventsOf(r, 1), [{ name: 'channel_occupied', channel: 'retried' }]);
    assert.equal(r.refused(), 2);
    assert.equal(r.deliveries.length, 1);
  });

  test('#server-to-user channels raise no occupancy webhooks', async () => {
    const r = await receiver();
    const h = await withWebhooks(r);
    const c = await RawClient.established(h.url());
    const { auth, user_data } = sdk.authenticateUser(c.socketId, { id: '7' });
    c.client.send({ event: 'pusher:signin', data: { auth, user_data } });
    await c.client.next();
    c.client.subscribe('marker');
    await c.client.next();
    assert.deepEqual(await eventsOf(r, 1), [{ name: 'channel_occupied', channel: 'marker' }]);
  });

  test('the checker is not a formality: a body signed with another secret is refused by the SDK', async () => {
    const r = await receiver();
    const webhooks = createWebhookSender({ urls: [r.url], appKey: APP_KEY, appSecret: 'not-the-secret', logger: silent, batchMs: 1, maxAttempts: 1 });
    webhooks.enqueue({ name: 'channel_occupied', channel: 'x' });
    await waitFor(() => r.invalid.length === 1, 3000);
    await webhooks.close();
    assert.equal(r.deliveries.length, 0);
  });
});
