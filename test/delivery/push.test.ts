// Web Push (API v1.1): subscriptions over HTTP, and the push of a MessageSent to each recipient who is
// offline, has not muted the conversation and is not blocked. The push service is a real HTTP server
// (testkit/push-service.ts) that decrypts every push with the subscription's private key (RFC 8291) and
// verifies its VAPID signature; nothing is mocked.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { PushDeliveryFailed, deliverMessagePush, type MessagePushJob } from '../../src/delivery/web-push/message-push.js';
import { PUSH_OUTBOX_KIND, pushDeliverer } from '../../src/delivery/web-push/deliverer.js';
import { createPushSender } from '../../src/delivery/web-push/sender.js';
import { loadVapidKeys } from '../../src/delivery/web-push/vapid.js';
import { pushSubscriptionsOf, upsertPushSubscription } from '../../src/store/push-subscriptions.js';
import { startPushService, type PushService } from '../../testkit/push-service.js';
import { until } from '../../testkit/wait.js';
import { assertError, direct, group, newUsers, send } from '../http/helpers.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';

async function subscribe(app: TestApp, service: PushService, userId: number) {
  const sub = service.subscription();
  const res = await app.request(userId, 'POST', '/push/subscriptions', { endpoint: sub.endpoint, keys: { p256dh: sub.keys.p256dh, auth: sub.keys.auth } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.deepEqual(res.body, { data: { endpoint: sub.endpoint } });
  return sub;
}

/** Resolves when the outbox holds no push row waiting (every push of the sends so far was delivered or settled). */
async function drained(app: TestApp): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const row = await app.app.chat.db.selectFrom('outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', 'push').where('failed_at', 'is', null).executeTakeFirstOrThrow();
    if (Number(row.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail('push rows still waiting in the outbox after 10 s');
}

const job = (message: any, senderId: number): MessagePushJob => ({ conversation_id: message.conversation_id, message_id: message.id, sender_id: senderId });
/** The pushes the service accepted (2xx) for an endpoint. */
const pushesTo = (service: PushService, endpoint: string) => service.received.filter((p) => endpoint.endsWith(p.path) && p.status < 300);

for (const database of DATABASES) {
  describe(`web push (${database})`, () => {
    let app: TestApp;
    let service: PushService;
    before(async () => {
      app = await startTestApp({ database, env: { CHAT_PUSH_ALLOW_HTTP: '1' } });
      service = await startPushService();
    });
    after(async () => {
      await app?.close();
      await service?.close();
      assert.deepEqual(service?.errors ?? [], [], 'every push decrypted and verified');
    });

    test('GET /push/config answers the VAPID public key, generated once into the data directory', async () => {
      const res = await app.request(newUsers(1)[0]!, 'GET', '/push/config');
      assert.equal(res.status, 200);
      const key = res.body.data.vapid_public_key;
      assert.deepEqual(Object.keys(res.body.data), ['vapid_public_key']);
      assert.equal(Buffer.from(key, 'base64url').length, 65);
      const file = join(app.config.dataDir, 'vapid.json');
      assert.ok(existsSync(file));
      assert.equal(JSON.parse(readFileSync(file, 'utf8')).publicKey, key);
      assert.equal(loadVapidKeys(app.config).publicKey, key, 'read again, not generated anew');
      assertError(await app.request(null, 'GET', '/push/config'), 401);
    });

    test('a message sent is pushed through the outbox to every device of an offline recipient, encrypted, VAPID-signed, with a Topic per conversation', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const phone = await subscribe(app, service, b);
      const laptop = await subscribe(app, service, b);
      const own = await subscribe(app, service, a);
      const message = await send(app, a, id, 'Hi Bob, are you there?');
      await drained(app);
      for (const device of [phone, laptop]) {
        const [push, ...more] = pushesTo(service, device.endpoint);
        assert.ok(push, 'pushed');
        assert.equal(more.length, 0);
        assert.deepEqual(push.payload, { type: 'MessageSent', conversation_id: id, message_id: message.id, title: `User ${a}`, body: 'Hi Bob, are you there?', url: `/#/c/${id}` });
        assert.equal(push.headers.topic, `conversation-${id}`);
        assert.match(push.headers.topic as string, /^[A-Za-z0-9_-]{1,32}$/);
        assert.equal(push.headers.ttl, '86400');
        assert.equal(push.vapid.publicKey, app.app.push.settings.vapidPublicKey);
        assert.equal(push.vapid.claims.sub, 'mailto:parley@localhost');
      }
      assert.equal(pushesTo(service, own.endpoint).length, 0, 'never to the sender');
    });

    test('an outbox row of kind push, as stored (JSON payload), is delivered by the push deliverer; other types are not pushed', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id, 'through the outbox');
      await drained(app);
      const sub = await subscribe(app, service, b); // after the outbox delivered the send: only the calls below push
      // The row the send wrote, as the outbox keeps it (delivered rows are deleted: its copy from the send).
      const row = { kind: PUSH_OUTBOX_KIND, type: 'MessageSent', payload: { conversation_id: id, message_id: message.id, sender_id: a } };
      const deliver = pushDeliverer(app.app.push);
      await deliver({ type: 'MessageEdited', payload: JSON.stringify(row!.payload) });
      assert.equal(pushesTo(service, sub.endpoint).length, 0);
      await deliver({ type: row!.type, payload: JSON.stringify(row!.payload) });
      assert.equal(pushesTo(service, sub.endpoint)[0]!.payload.body, 'through the outbox');
    });

    test('a group push is titled with the group; the body is cut to 200 characters', async () => {
      const [a, b] = newUsers(2);
      const id = await group(app, a, [b], 'Climbing');
      const sub = await subscribe(app, service, b);
      const long = '😀'.repeat(150) + 'x'.repeat(150);
      await send(app, a, id, long);
      await drained(app);
      const [push] = pushesTo(service, sub.endpoint);
      assert.equal(push!.payload.title, `User ${a} in Climbing`);
      assert.equal(Array.from(push!.payload.body as string).length, 200);
      assert.ok((push!.payload.body as string).startsWith('😀'.repeat(150) + 'x'.repeat(49)));
    });

    test("a reply in a thread is pushed to the thread's participants only (the root's sender, repliers), not the whole group", async () => {
      const [rootSender, replier, bystander] = newUsers(3);
      const id = await group(app, rootSender, [replier, bystander], 'Threads');
      const root = await send(app, rootSender, id, 'root');
      await drained(app);
      const subs = new Map<number, { endpoint: string }>();
      for (const u of [rootSender, bystander]) subs.set(u, await subscribe(app, service, u));
      const res = await app.request(replier, 'POST', `/conversations/${id}/messages`, { body: 'a reply', thread_id: root.id });
      assert.equal(res.status, 201);
      await drained(app);
      const [push] = pushesTo(service, subs.get(rootSender)!.endpoint);
      assert.equal(push?.payload.body, 'a reply');
      assert.equal(push?.payload.type, 'ThreadReplySent');
      assert.equal(pushesTo(service, subs.get(bystander)!.endpoint).length, 0, 'not in the thread: no push');
    });

    test('410 or 404 from the push service deletes the subscription; a 500 is retried by the outbox until it is delivered', async () => {
      const [a, b, c] = newUsers(3);
      const id = await direct(app, a, b);
      const gone = await subscribe(app, service, b);
      const missing = await subscribe(app, service, b);
      service.answer(new URL(gone.endpoint).pathname, 410);
      service.answer(new URL(missing.endpoint).pathname, 404);
      await send(app, a, id, 'one');
      await drained(app);
      assert.deepEqual(await pushSubscriptionsOf(app.app.chat.db, [b]), []);

      const id2 = await direct(app, a, c);
      const failing = await subscribe(app, service, c);
      const path = new URL(failing.endpoint).pathname;
      service.answer(path, 500);
      const m2 = await send(app, a, id2, 'two');
      let row;
      for (let i = 0; i < 100 && !row; i++) {
        row = await app.app.chat.db.selectFrom('outbox').select(['attempts', 'last_error']).where('kind', '=', 'push').where('attempts', '>', 0).executeTakeFirst();
        if (!row) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(row, 'the failed push waits for a retry');
      assert.match(row.last_error ?? '', /500/);
      assert.equal((await pushSubscriptionsOf(app.app.chat.db, [c])).length, 1, 'kept');
      service.answer(path, 201);
      await drained(app); // the first retry comes within 10 s
      assert.equal(pushesTo(service, failing.endpoint).filter((p) => p.payload.message_id === m2.id).length, 1);
      await assert.rejects(
        (async () => {
          service.answer(path, 503);
          await app.app.push.deliverMessage(job(m2, a));
        })(),
        PushDeliveryFailed,
      );
      service.answer(path, 201);
    });

    test('one failing push service holds back no other push of the conversation (push rows keep no order)', async () => {
      const [a, b, c] = newUsers(3);
      const id = await group(app, a, [b, c], 'Order');
      const failing = await subscribe(app, service, b);
      const healthy = await subscribe(app, service, c);
      const path = new URL(failing.endpoint).pathname;
      service.answer(path, 500);
      try {
        await send(app, a, id, 'first');
        await send(app, a, id, 'second');
        // Both reach c while b's keep failing (b's service answers 500 until the end of this block); rows in order
        // per conversation would hold c's second push behind b's first for as long as that fails.
        for (let i = 0; i < 100 && pushesTo(service, healthy.endpoint).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
        assert.deepEqual(pushesTo(service, healthy.endpoint).map((p) => p.payload.body).sort(), ['first', 'second']);
      } finally {
        service.answer(path, 201);
      }
      await drained(app);
      assert.deepEqual(pushesTo(service, failing.endpoint).map((p) => p.payload.body).sort(), ['first', 'second']);
    });

    test('muted, online and blocked recipients get nothing; an unmuted one in the same group does', async () => {
      const [a, muted, online, blocker, plain] = newUsers(5);
      const id = await group(app, a, [muted, online, blocker, plain], 'Team');
      const subs = new Map<number, { endpoint: string }>();
      for (const u of [muted, online, blocker, plain]) subs.set(u, await subscribe(app, service, u));
      assert.equal((await app.request(muted, 'PUT', `/conversations/${id}/mute`, { until: null })).status, 200);
      assert.equal((await app.request(online, 'POST', '/presence/heartbeat')).status, 200);
      assert.equal((await app.request(blocker, 'POST', '/blocks', { user_id: a })).status, 200);
      await send(app, a, id, 'standup in 5');
      await drained(app);
      for (const u of [muted, online, blocker]) assert.equal(pushesTo(service, subs.get(u)!.endpoint).length, 0, `user ${u}`);
      assert.equal(pushesTo(service, subs.get(plain)!.endpoint).length, 1);

      // A mute that has ended no longer silences.
      const [x, y] = newUsers(2);
      const dm = await direct(app, x, y);
      const ySub = await subscribe(app, service, y);
      await app.request(y, 'PUT', `/conversations/${dm}/mute`, { until: new Date(Date.now() + 300).toISOString() });
      await send(app, x, dm, 'while muted');
      await drained(app);
      assert.equal(pushesTo(service, ySub.endpoint).length, 0);
      await new Promise((resolve) => setTimeout(resolve, 400));
      await send(app, x, dm, 'after the mute');
      await drained(app);
      assert.deepEqual(pushesTo(service, ySub.endpoint).map((p) => p.payload.body), ['after the mute']);
    });

    test('decided at delivery: a direct conversation blocked after the send, or a message deleted before its push, is not pushed', async () => {
      const [a, b, c, d] = newUsers(4);
      const ab = await direct(app, a, b);
      const m1 = await send(app, a, ab, 'before the block');
      await drained(app);
      const bSub = await subscribe(app, service, b);
      assert.equal((await app.request(a, 'POST', '/blocks', { user_id: b })).status, 200, 'the sender blocks the recipient');
      assert.equal((await app.app.push.deliverMessage(job(m1, a))).sent, 0);
      assert.equal(pushesTo(service, bSub.endpoint).length, 0);

      const cd = await direct(app, c, d);
      const kept = await send(app, c, cd, 'kept');
      const m2 = await send(app, c, cd, 'to be deleted');
      await drained(app);
      const dSub = await subscribe(app, service, d);
      assert.ok((await app.request(c, 'DELETE', `/messages/${m2.id}`)).status < 300);
      assert.equal((await app.app.push.deliverMessage(job(m2, c))).sent, 0);
      assert.equal((await app.app.push.deliverMessage(job(kept, c))).sent, 1, 'the same delivery of a message not deleted pushes');
      assert.deepEqual(pushesTo(service, dSub.endpoint).map((p) => p.payload.body), ['kept']);
    });

    test('DELETE /push/subscriptions removes it (204, also when already gone); the same endpoint subscribed by another user moves to them', async () => {
      const [a, b, c] = newUsers(3);
      const id = await direct(app, a, b);
      const sub = await subscribe(app, service, b);
      const res = await app.request(b, 'DELETE', '/push/subscriptions', { endpoint: sub.endpoint });
      assert.deepEqual([res.status, res.body], [204, null]);
      assert.equal((await app.request(b, 'DELETE', '/push/subscriptions', { endpoint: sub.endpoint })).status, 204);
      await send(app, a, id, 'nobody listens');
      await drained(app);
      assert.equal(pushesTo(service, sub.endpoint).length, 0);

      const shared = await subscribe(app, service, b);
      const again = await app.request(c, 'POST', '/push/subscriptions', { endpoint: shared.endpoint, keys: { p256dh: shared.keys.p256dh, auth: shared.keys.auth } });
      assert.equal(again.status, 201);
      assert.deepEqual((await pushSubscriptionsOf(app.app.chat.db, [b, c])).map((s) => s.user_id), [c]);
      assertError(await app.request(b, 'DELETE', '/push/subscriptions', {}), 422);
    });

    test('an endpoint that resolves to a private address at delivery (DNS rebinding) gets no request and is deleted', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id, 'hello');
      await drained(app);
      const sub = service.subscription();
      const rebound = sub.endpoint.replace('127.0.0.1', 'push.rebinding.test');
      await upsertPushSubscription(app.app.chat.db, { userId: b, endpoint: rebound, p256dh: sub.keys.p256dh, auth: sub.keys.auth }, new Date());
      const before = service.received.length;
      const logger = pino({ level: 'silent' });
      const send_ = createPushSender({ vapid: loadVapidKeys(app.config), allowHttp: true, resolver: async () => [{ address: '10.1.2.3', family: 4 }] });
      const result = await deliverMessagePush({ db: app.app.chat.db, presence: { lastBeats: async () => new Map() }, send: send_, logger }, job(message, a));
      assert.deepEqual(result, { sent: 0, removed: 1 });
      assert.equal(service.received.length, before);
      assert.deepEqual(await pushSubscriptionsOf(app.app.chat.db, [b]), []);

      // The same host answering a loopback address (allowed with CHAT_PUSH_ALLOW_HTTP) is sent to that address.
      await upsertPushSubscription(app.app.chat.db, { userId: b, endpoint: rebound, p256dh: sub.keys.p256dh, auth: sub.keys.auth }, new Date());
      const toLoopback = createPushSender({ vapid: loadVapidKeys(app.config), allowHttp: true, resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
      const sent = await deliverMessagePush({ db: app.app.chat.db, presence: { lastBeats: async () => new Map() }, send: toLoopback, logger }, job(message, a));
      assert.deepEqual(sent, { sent: 1, removed: 0 });
      const [push] = service.received.slice(before);
      assert.equal(push!.headers.host, new URL(rebound).host, 'to the checked address, under the endpoint\'s host name');
      assert.equal(push!.payload.message_id, message.id);
    });
  });

  describe(`web push subscriptions: bad input (${database})`, () => {
    let app: TestApp;
    let service: PushService;
    before(async () => {
      app = await startTestApp({ database });
      service = await startPushService();
    });
    after(async () => {
      await app?.close();
      await service?.close();
    });

    test('no keys, bad keys, a non-https endpoint or a private address: 422 naming the field', async () => {
      const u = newUsers(1)[0]!;
      const { keys } = service.subscription();
      const good = { p256dh: keys.p256dh, auth: keys.auth };
      const endpoint = 'https://push.example.invalid/abc';
      const cases: [unknown, string][] = [
        [{ endpoint }, 'keys'],
        [{ endpoint, keys: { p256dh: keys.p256dh } }, 'keys.auth'],
        [{ endpoint, keys: {} }, 'keys.p256dh'],
        [{ keys: good }, 'endpoint'],
        [{ endpoint, keys: { ...good, p256dh: keys.p256dh.slice(0, 40) + '+/' + keys.p256dh.slice(42) } }, 'keys.p256dh'],
        [{ endpoint, keys: { ...good, p256dh: Buffer.alloc(33, 2).toString('base64url') } }, 'keys.p256dh'],
        [{ endpoint, keys: { ...good, auth: 'not base64url!' } }, 'keys.auth'],
        [{ endpoint, keys: { ...good, auth: Buffer.alloc(8).toString('base64url') } }, 'keys.auth'],
        [{ endpoint: 'http://push.example.com/abc', keys: good }, 'endpoint'],
        [{ endpoint: service.subscription().endpoint, keys: good }, 'endpoint'], // http and loopback
        [{ endpoint: 'ftp://push.example.com/abc', keys: good }, 'endpoint'],
        [{ endpoint: 'not a url', keys: good }, 'endpoint'],
        [{ endpoint: 'https://127.0.0.1/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://localhost/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://10.0.0.8/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://192.168.1.1/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://172.20.0.1/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://169.254.169.254/latest/meta-data', keys: good }, 'endpoint'],
        [{ endpoint: 'https://[::1]/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://[fd00::1]/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://[fe80::1]/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://[::ffff:10.0.0.1]/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://0.0.0.0/x', keys: good }, 'endpoint'],
        [{ endpoint: 'https://2130706433/x', keys: good }, 'endpoint'], // 127.0.0.1 written as a number
        [{ endpoint: 'https://user:pw@push.example.com/x', keys: good }, 'endpoint'],
      ];
      for (const [body, field] of cases) {
        const res = await app.request(u, 'POST', '/push/subscriptions', body);
        assert.equal(res.status, 422, `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'validation_failed');
        assert.ok(Object.keys(res.body.errors ?? {}).some((k) => k === field || k.startsWith(field)), `${JSON.stringify(body)}: errors ${JSON.stringify(res.body.errors)} name ${field}`);
      }
      assert.deepEqual(await pushSubscriptionsOf(app.app.chat.db, [u]), [], 'nothing saved');
    });

    test('with CHAT_PUSH_ALLOW_HTTP off, a message is never pushed to an http endpoint saved before', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const message = await send(app, a, id, 'hello');
      await drained(app);
      const sub = service.subscription();
      await upsertPushSubscription(app.app.chat.db, { userId: b, endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth }, new Date());
      assert.deepEqual(await app.app.push.deliverMessage(job(message, a)), { sent: 0, removed: 1 });
      assert.equal(service.received.length, 0);
    });
  });
}

describe('push rows only while a browser is subscribed (src/delivery/web-push/audience.ts)', () => {
  test('with no subscription on the server a send writes no push row, so it keeps the one-round-trip path; the first subscription turns them on at once', async () => {
    const app = await startTestApp({ env: { CHAT_PUSH_ALLOW_HTTP: '1' } });
    const service = await startPushService();
    try {
      await app.app.outbox.stop(); // rows stay in the table, to be counted
      const pushRows = async () =>
        Number((await app.app.chat.db.selectFrom('outbox').select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', 'push').executeTakeFirstOrThrow()).n);
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      // Before the first read of the table a send writes its row (the safe side); within the refresh time none.
      let before = 0;
      await until(async () => {
        before = await pushRows();
        await send(app, a, id, 'nobody subscribed');
        return (await pushRows()) === before;
      }, 5_000, () => `push rows: ${before}`);
      await subscribe(app, service, b);
      await send(app, a, id, 'Bob has a phone now');
      assert.equal(await pushRows(), before + 1, 'one push row for the send after the subscription');
    } finally {
      await app.close();
      await service.close();
    }
  });
});
