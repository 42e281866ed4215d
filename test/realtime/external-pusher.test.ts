// BROADCAST_DRIVER=pusher's fan-out against a real HTTP server that records signed Pusher HTTP API requests:
// what reaches the external server, in which order, and what happens to an event it does not take.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { pino } from 'pino';
import { createBroadcaster } from '../../src/events/broadcaster.js';
import { event as domainEvent } from '../../src/events/catalog.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { bodyCharsThatFit, pusherHttpFanout, type PusherHttpFanout, type PusherHttpOptions } from '../../src/realtime/external-pusher.js';
import { freePort } from '../../testkit/ports.js';
import { logCapture, PusherRecorder } from '../support/pusher-recorder.js';

const channelsUpTo = (n: number, prefix = 'private-chat.user.') => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);

describe('the Pusher HTTP fan-out (BROADCAST_DRIVER=pusher)', () => {
  let server: PusherRecorder;
  let log: ReturnType<typeof logCapture>;
  let metrics: ReturnType<typeof createMetrics>;
  const fanouts: PusherHttpFanout[] = [];

  before(async () => {
    server = await PusherRecorder.start();
  });
  after(async () => {
    for (const f of fanouts) f.close();
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.answer = () => ({});
    log = logCapture();
    metrics = createMetrics({ realtime: () => null, databasePool: () => null, redisUp: () => null, clusterReceived: () => null });
  });

  async function fanout(overrides: Partial<PusherHttpOptions> = {}): Promise<PusherHttpFanout> {
    const f = await pusherHttpFanout({
      appId: server.appId,
      key: server.key,
      secret: server.secret,
      host: '127.0.0.1',
      port: server.port,
      scheme: 'http',
      maxEventBytes: 10_240,
      retryDelaysMs: [20, 40],
      logger: pino({ level: 'warn' }, log.stream),
      metrics: metrics.pusher,
      ...overrides,
    });
    fanouts.push(f);
    return f;
  }

  const metric = async (name: string) => {
    const text = await metrics.registry.metrics();
    return text.split('\n').filter((line) => line.startsWith(name));
  };

  test('an event is one signed POST /apps/{id}/events with the data text as is, the event name, the channels and socket_id', async () => {
    const data = JSON.stringify({ id: 1, body: 'Grüße 👋', nested: { a: [1, 2] } });
    await (await fanout()).publish(['private-chat.conversation.7'], 'MessageSent', data, '123.456');

    assert.equal(server.requests.length, 1);
    const [request] = server.requests;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.path, `/apps/${server.appId}/events`);
    assert.equal(request!.signatureValid, true, 'auth_signature and body_md5 check out with the app secret');
    assert.deepEqual(request!.body, { name: 'MessageSent', data, channels: ['private-chat.conversation.7'], socket_id: '123.456' });
  });

  test('no socket_id is sent without one, nor for a value that is not a Pusher socket id', async () => {
    const f = await fanout();
    await f.publish(['private-chat.user.1'], 'InboxUpdated', '{}');
    await f.publish(['private-chat.user.1'], 'InboxUpdated', '{}', 'not-a-socket');
    assert.deepEqual(server.events().map((e) => 'socket_id' in e), [false, false]);
  });

  test('250 channels go as chunks of 100, 100 and 50, each sent only after the previous one was answered', async () => {
    server.answer = () => ({ delayMs: 30 });
    const channels = channelsUpTo(250);
    await (await fanout()).publish(channels, 'UserPresenceChanged', '{"user_id":1,"is_online":true}', '1.2');

    const events = server.events();
    assert.deepEqual(events.map((e) => e.channels.length), [100, 100, 50]);
    assert.deepEqual(events.flatMap((e) => e.channels), channels, 'every channel once, in order');
    assert.ok(events.every((e) => e.socket_id === '1.2' && e.name === 'UserPresenceChanged'));
    const [first, second, third] = server.requests;
    assert.ok(second!.receivedAt >= first!.answeredAt, 'chunk 2 after chunk 1 was answered');
    assert.ok(third!.receivedAt >= second!.answeredAt, 'chunk 3 after chunk 2 was answered');
  });

  test('events sharing a channel reach the server in publish order even when the first is slow; unrelated channels are not held up', async () => {
    server.answer = (request) => (request.body.name === 'First' ? { delayMs: 150 } : {});
    const f = await fanout();
    // As the broadcaster does: every publish started before any is awaited.
    const all = Promise.all([
      f.publish(['private-chat.conversation.1'], 'First', '{}'),
      f.publish(['private-chat.conversation.2'], 'Unrelated', '{}'),
      f.publish(['private-chat.conversation.1', 'private-chat.user.3'], 'Second', '{}'),
    ]);
    await all;
    const order = server.requests.map((r) => r.body.name);
    assert.deepEqual(order, ['First', 'Unrelated', 'Second']);
    const byName = Object.fromEntries(server.requests.map((r) => [r.body.name, r]));
    assert.ok(byName.Second.receivedAt >= byName.First.answeredAt, 'Second waited for First (same channel)');
    assert.ok(byName.Unrelated.receivedAt < byName.First.answeredAt, 'Unrelated did not wait');
  });

  test('an event above maxEventBytes is not sent: logged at error level with event, channels, size and limit, and counted', async () => {
    const data = JSON.stringify({ body: 'x'.repeat(300) });
    await (await fanout({ maxEventBytes: 200 })).publish(['private-chat.conversation.9'], 'MessageSent', data);

    assert.equal(server.requests.length, 0);
    const line = log.lines.find((l) => l.level === 50);
    assert.ok(line, 'an error line');
    assert.equal(line.event, 'MessageSent');
    assert.deepEqual(line.channels, ['private-chat.conversation.9']);
    assert.equal(line.bytes, Buffer.byteLength(data));
    assert.equal(line.limit, 200);
    assert.equal(line.reason, 'too_large');
    assert.match(line.msg, /PUSHER_MAX_EVENT_BYTES/);
    assert.deepEqual(await metric('parley_pusher_events_failed_total'), ['parley_pusher_events_failed_total{event="MessageSent",reason="too_large"} 1']);
  });

  test('the size limit counts UTF-8 bytes, not characters', async () => {
    const f = await fanout({ maxEventBytes: 100 });
    await f.publish(['private-chat.user.1'], 'Fits', JSON.stringify('é'.repeat(40))); // 82 bytes
    await f.publish(['private-chat.user.1'], 'TooLarge', JSON.stringify('é'.repeat(60))); // 122 bytes, 62 characters
    assert.deepEqual(server.events().map((e) => e.name), ['Fits']);
  });

  test('a 413 from the server is logged with its status and counted, and not retried', async () => {
    server.answer = () => ({ status: 413, body: '{"message":"Payload too large"}' });
    await (await fanout()).publish(['private-chat.conversation.1'], 'MessageSent', '{"id":1}');

    assert.equal(server.requests.length, 1);
    const line = log.lines.find((l) => l.level === 50)!;
    assert.equal(line.status, 413);
    assert.equal(line.reason, 'too_large');
    assert.equal(line.bytes, 8);
    assert.equal(line.attempts, 1);
    assert.match(line.detail, /Payload too large/);
    assert.deepEqual(await metric('parley_pusher_events_failed_total'), ['parley_pusher_events_failed_total{event="MessageSent",reason="too_large"} 1']);
  });

  test('a 4xx other than 413 (bad credentials, say) is logged as rejected and not retried', async () => {
    server.answer = () => ({ status: 401, body: 'Invalid signature' });
    await (await fanout()).publish(['private-chat.conversation.1'], 'MessageSent', '{}');
    assert.equal(server.requests.length, 1);
    const line = log.lines.find((l) => l.level === 50)!;
    assert.equal(line.status, 401);
    assert.equal(line.reason, 'rejected');
  });

  test('a 5xx is retried with backoff and then delivered once; the retry is counted', async () => {
    server.answer = (_r, index) => (index < 2 ? { status: 503 } : {});
    await (await fanout()).publish(['private-chat.conversation.1'], 'MessageSent', '{"id":1}');

    assert.equal(server.requests.length, 3);
    assert.ok(server.requests[1]!.receivedAt - server.requests[0]!.answeredAt >= 15, 'waited before the first retry');
    assert.ok(server.requests[2]!.receivedAt - server.requests[1]!.answeredAt >= 35, 'waited longer before the second');
    assert.equal(log.lines.filter((l) => l.level === 50).length, 0);
    assert.equal(log.lines.filter((l) => l.level === 40).length, 2, 'each retry is a warning');
    assert.deepEqual(await metric('parley_pusher_retries_total'), ['parley_pusher_retries_total 2']);
  });

  test('a 5xx that persists fails after the bounded retries: logged with status and attempts, counted as server_error', async () => {
    server.answer = () => ({ status: 502 });
    await (await fanout()).publish(['private-chat.conversation.1'], 'MessageSent', '{}');
    assert.equal(server.requests.length, 3);
    const line = log.lines.find((l) => l.level === 50)!;
    assert.equal(line.status, 502);
    assert.equal(line.reason, 'server_error');
    assert.equal(line.attempts, 3);
    assert.deepEqual(await metric('parley_pusher_events_failed_total'), ['parley_pusher_events_failed_total{event="MessageSent",reason="server_error"} 1']);
  });

  test('a dropped connection is retried; nothing listening at all fails as network after the retries', async () => {
    server.answer = (_r, index) => (index === 0 ? 'drop' : {});
    await (await fanout()).publish(['private-chat.conversation.1'], 'MessageSent', '{}');
    assert.equal(server.events().length, 2, 'the second attempt got through');
    assert.equal(log.lines.filter((l) => l.level === 50).length, 0);

    const nowhere = await fanout({ port: await freePort() });
    await nowhere.publish(['private-chat.conversation.1'], 'MessageSent', '{}');
    const line = log.lines.find((l) => l.level === 50)!;
    assert.equal(line.reason, 'network');
    assert.equal(line.status, null);
    assert.equal(line.attempts, 3);
    assert.match(line.detail, /ECONNREFUSED/);
  });

  test('a request without an answer in time fails as timeout and is not sent again (the server may have taken it)', async () => {
    server.answer = () => ({ delayMs: 300 });
    await (await fanout({ timeoutMs: 50 })).publish(['private-chat.conversation.1'], 'MessageSent', '{}');
    assert.equal(server.requests.length, 1);
    assert.equal(log.lines.find((l) => l.level === 50)!.reason, 'timeout');
  });

  test('when one chunk fails the others are still sent, and only the failed chunk is reported', async () => {
    server.answer = (_r, index) => (index === 1 ? { status: 400 } : {});
    await (await fanout()).publish(channelsUpTo(250), 'UserPresenceChanged', '{}');
    assert.equal(server.requests.length, 3);
    const errors = log.lines.filter((l) => l.level === 50);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.channelCount, 100);
    assert.equal(errors[0]!.channels.length, 21, '20 names and how many more');
    assert.equal(errors[0]!.channels[20], '… 80 more');
  });

  test('a failed delivery does not fail the chat request: the broadcaster resolves, and later events still go out', async () => {
    server.answer = (_r, index) => (index === 0 ? { status: 400 } : {});
    const broadcaster = createBroadcaster(await fanout(), pino({ level: 'silent' }));
    await broadcaster.dispatch([domainEvent('UserTyping', 1, { conversation_id: 1, user_id: 2, is_typing: true })]);
    await broadcaster.dispatch([domainEvent('GroupMembershipRevoked', 5, { conversation_id: 1, user_id: 5, reason: 'removed' })]);
    // The first was refused (400), the second went out.
    assert.deepEqual(server.events().map((e) => [e.name, e.channels]), [
      ['UserTyping', ['private-chat.conversation.1']],
      ['GroupMembershipRevoked', ['private-chat.user.5']],
    ]);
    assert.equal(log.lines.filter((l) => l.level === 50 && l.event === 'UserTyping').length, 1);
  });

  test('a member removed by someone else: the user’s connections are terminated; leaving and a deleted group end nothing', async () => {
    const broadcaster = createBroadcaster(await fanout(), pino({ level: 'silent' }));
    await broadcaster.unsubscribeUser('private-chat.conversation.3', 42, 'removed');
    await broadcaster.unsubscribeUser('private-chat.conversation.3', 43, 'left');
    await broadcaster.unsubscribeUser('private-chat.conversation.3', 44, 'group_deleted');
    assert.deepEqual(server.requests.map((r) => [r.method, r.path, r.signatureValid]), [['POST', `/apps/${server.appId}/users/42/terminate_connections`, true]]);
  });

  test('a termination the server does not take is logged at error level and counted', async () => {
    server.answer = () => ({ status: 500 });
    await (await fanout()).unsubscribeUser('private-chat.conversation.3', '42', { endConnections: true });
    assert.equal(server.requests.length, 3);
    const line = log.lines.find((l) => l.level === 50)!;
    assert.equal(line.userId, '42');
    assert.equal(line.channel, 'private-chat.conversation.3');
    assert.deepEqual(await metric('parley_pusher_terminations_failed_total'), ['parley_pusher_terminations_failed_total 1']);
  });

  test('at startup, a body limit whose messages may not fit the event limit is a warning', async () => {
    await fanout({ bodyMaxChars: 10_000 });
    assert.match(log.lines.find((l) => l.level === 40)?.msg ?? '', /messages longer than about 3620 characters/);
    log.lines.length = 0;
    await fanout({ bodyMaxChars: bodyCharsThatFit(10_240) });
    assert.equal(log.lines.length, 0);
  });
});
