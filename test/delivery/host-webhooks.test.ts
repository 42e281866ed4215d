// Webhooks to the host app (API v1.1, docs/notifications.md), through the transactional outbox: a real HTTP
// receiver checks every signature; Parley is started as in production (HTTP in, outbox worker out), on PGlite
// and on PostgreSQL, restarted while the receiver is down, and run as two nodes on one database.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signature, webhookDeliverer } from '../../src/delivery/host-webhooks.js';
import { freshPostgres } from '../../testkit/postgres.js';
import { direct, group, newUsers, send } from '../http/helpers.js';
import { DATABASES, startTestApp, type DatabaseKind, type TestApp } from '../support/app.js';

const SECRET = 'w'.repeat(40);

interface Hook {
  readonly id: string;
  readonly type: string;
  readonly created_at: string;
  readonly data: any;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** A host app's receiver: verifies X-Parley-Signature as docs/notifications.md shows, keeps what it accepted. */
async function receiver(port = 0) {
  const accepted: Hook[] = [];
  const invalid: string[] = [];
  let failing = 0;
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (failing > 0) {
        failing--;
        refused++;
        res.writeHead(500).end();
        return;
      }
      const header = String(req.headers['x-parley-signature'] ?? '');
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
      const expected = m ? createHmac('sha256', SECRET).update(`${m[1]}.${raw}`).digest('hex') : '';
      if (!m || m[2] !== expected || Math.abs(Date.now() / 1000 - Number(m[1])) > 300) {
        invalid.push(header);
        res.writeHead(400).end();
        return;
      }
      const body = JSON.parse(raw);
      assert.equal(req.headers['x-parley-webhook-id'], body.id);
      accepted.push({ ...body, headers: req.headers });
      res.writeHead(204).end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    port: (server.address() as AddressInfo).port,
    accepted,
    invalid,
    failNext(n: number) {
      failing = n;
    },
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function until<T>(what: string, check: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const outboxRows = async (app: TestApp) => (await app.app.chat.db.selectFrom('outbox').selectAll().where('kind', '=', 'webhook').execute()).length;

test('signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>', () => {
  assert.equal(signature('secret', 1700000000, '{"a":1}'), `t=1700000000,v1=${createHmac('sha256', 'secret').update('1700000000.{"a":1}').digest('hex')}`);
});

for (const database of DATABASES) {
  describe(`webhooks (${database})`, () => {
    let hooks: Awaited<ReturnType<typeof receiver>>;
    let app: TestApp;
    before(async () => {
      hooks = await receiver();
      app = await startTestApp({ database, env: { CHAT_WEBHOOK_URLS: hooks.url, CHAT_WEBHOOK_SECRET: SECRET } });
    });
    after(async () => {
      await app?.close();
      await hooks?.close();
      assert.deepEqual(hooks?.invalid ?? [], [], 'every webhook signed with the secret');
    });

    test('one signed webhook per action, data as broadcast, MessageSent names the offline recipients, in order', async () => {
      const [a, b] = newUsers(2);
      const conversationId = await direct(app, a, b);
      const first = await send(app, a, conversationId, 'one');
      const second = await send(app, a, conversationId, 'two');
      assert.equal((await app.request(a, 'PATCH', `/messages/${first.id}`, { body: 'one, edited' })).status, 200);
      assert.equal((await app.request(a, 'DELETE', `/messages/${second.id}`)).status, 204);
      const mine = () => hooks.accepted.filter((h) => h.data.conversation_id === conversationId || h.data.id === conversationId);
      await until('four webhooks', () => mine().length >= 4);
      await new Promise((r) => setTimeout(r, 300)); // nothing more arrives
      const got = mine();
      assert.deepEqual(got.map((h) => h.type), ['MessageSent', 'MessageSent', 'MessageUpdated', 'MessageDeleted']);
      const { offline_user_ids: offline, ...sent } = got[0]!.data;
      assert.deepEqual(sent, (({ edited_at: _e, ...rest }) => rest)(first));
      assert.deepEqual(offline, [b], 'b has no connection');
      assert.equal(got[1]!.data.body, 'two');
      assert.equal(got[2]!.data.body, 'one, edited');
      assert.deepEqual(got[3]!.data, { id: second.id, conversation_id: conversationId });
      for (const h of got) {
        assert.match(h.id, /^\d+$/);
        assert.ok(!Number.isNaN(Date.parse(h.created_at)));
      }
      assert.equal(new Set(got.map((h) => h.id)).size, 4);
      assert.equal(await outboxRows(app), 0, 'delivered rows are deleted');
      const metrics = await (await fetch(`${app.baseUrl}/metrics`)).text();
      assert.match(metrics, /^parley_outbox_delivered_total\{kind="webhook"\} [1-9]\d*$/m);
      assert.match(metrics, /^parley_outbox_pending \d+$/m);
      assert.match(metrics, /^parley_outbox_oldest_pending_age_seconds [\d.e+-]+$/m);
      assert.match(metrics, /^# TYPE parley_outbox_failed_total counter$/m);
    });

    test('reactions, reads, groups, blocks and presence: one webhook per action, never InboxUpdated or UserTyping', async () => {
      const [a, b, c] = newUsers(3);
      const groupId = await group(app, a, [b, c]);
      const message = await send(app, a, groupId, 'in the group');
      await until('the MessageSent', () => hooks.accepted.some((h) => h.type === 'MessageSent' && h.data.id === message.id));
      const since = hooks.accepted.length;
      const ok = async (res: Promise<{ status: number; body: any }>, status = 200) => assert.equal((await res).status, status, JSON.stringify((await res).body));
      await ok(app.request(b, 'PUT', `/messages/${message.id}/reactions/${encodeURIComponent('👍')}`));
      await ok(app.request(c, 'POST', `/conversations/${groupId}/read`, {}));
      await ok(app.request(a, 'POST', `/conversations/${groupId}/typing`, { is_typing: true }), 204);
      await ok(app.request(a, 'DELETE', `/groups/${groupId}/participants/${c}`), 204);
      await ok(app.request(a, 'POST', '/blocks', { user_id: b }));
      await ok(app.request(a, 'DELETE', `/blocks/${b}`));
      await ok(app.request(b, 'POST', '/presence/heartbeat', {}));
      const expected = ['MessageReactionsUpdated', 'ConversationRead', 'GroupParticipantsChanged', 'GroupMembershipRevoked', 'UserBlockChanged', 'UserBlockChanged', 'UserPresenceChanged'];
      await until('seven webhooks', () => hooks.accepted.length >= since + expected.length);
      await new Promise((r) => setTimeout(r, 300));
      const got = hooks.accepted.slice(since);
      assert.deepEqual(got.map((h) => h.type).sort(), [...expected].sort());
      const of = (type: string) => got.filter((h) => h.type === type).map((h) => h.data);
      assert.deepEqual(of('MessageReactionsUpdated')[0].reactions, [{ emoji: '👍', count: 1, user_ids: [b] }]);
      assert.equal(of('ConversationRead')[0].user_id, c);
      assert.deepEqual(of('GroupMembershipRevoked'), [{ conversation_id: groupId, user_id: c, reason: 'removed' }]);
      assert.deepEqual(of('UserBlockChanged').map((d) => [d.blocker_id, d.blocked_user_id, d.blocked]), [[a, b, true], [a, b, false]]);
      assert.deepEqual(of('UserPresenceChanged'), [{ user_id: b, is_online: true }]);
    });

    test('replies in a thread: one ThreadReplySent webhook each (data as broadcast, no MessageSent), plain or quoting', async () => {
      const [a, b] = newUsers(2);
      const groupId = await group(app, a, [b]);
      const root = await send(app, a, groupId, 'root');
      const reply = async (body: Record<string, unknown>) => {
        const res = await app.request(b, 'POST', `/conversations/${groupId}/messages`, { thread_id: root.id, ...body });
        assert.equal(res.status, 201, JSON.stringify(res.body));
        return res.body.data;
      };
      const plain = await reply({ body: 'plain reply' });
      const quoting = await reply({ body: 'quoting the root', reply_to_id: root.id });
      const mine = () => hooks.accepted.filter((h) => h.data.conversation_id === groupId && h.type !== 'MessageSent');
      await until('two webhooks', () => mine().length >= 2);
      await new Promise((r) => setTimeout(r, 300));
      const got = mine();
      assert.deepEqual(got.map((h) => h.type), ['ThreadReplySent', 'ThreadReplySent']);
      assert.deepEqual(got.map((h) => h.data), [
        { conversation_id: groupId, thread_id: root.id, message: plain },
        { conversation_id: groupId, thread_id: root.id, message: quoting },
      ]);
      assert.deepEqual(hooks.accepted.filter((h) => h.type === 'MessageSent' && h.data.conversation_id === groupId).map((h) => h.data.id), [root.id]);
    });

    test('a refused action writes no row and sends no webhook', async () => {
      const [a, b, stranger] = newUsers(3);
      const conversationId = await direct(app, a, b);
      const before = hooks.accepted.length;
      const res = await app.request(stranger, 'POST', `/conversations/${conversationId}/messages`, { body: 'not mine' });
      assert.equal(res.status, 404);
      const edit = await app.request(b, 'PATCH', `/messages/${(await send(app, a, conversationId, 'x')).id}`, { body: 'not yours' });
      assert.equal(edit.status, 403);
      await until('the one MessageSent', () => hooks.accepted.length >= before + 1);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(hooks.accepted.slice(before).map((h) => h.type), ['MessageSent']);
      assert.equal(await outboxRows(app), 0);
    });

    test('a receiver answering 500 gets the webhook again (same id), and only until it answers 2xx', async () => {
      const [a, b] = newUsers(2);
      const conversationId = await direct(app, a, b);
      hooks.failNext(1);
      const refusedBefore = hooks.refused();
      const message = await send(app, a, conversationId, 'retried');
      const hook = await until('the retried webhook', () => hooks.accepted.find((h) => h.data.id === message.id), 15_000);
      assert.equal(hooks.refused(), refusedBefore + 1);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(hooks.accepted.filter((h) => h.id === hook.id).length, 1, 'no second delivery once delivered');
    });
  });
}

/** Nodes on a database that outlives them: PGlite in a data directory of the test's, or a PostgreSQL database. */
async function sharedDatabase(kind: DatabaseKind): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (kind === 'postgres') {
    const db = await freshPostgres();
    return { env: { DATABASE_URL: db.url }, drop: () => db.drop() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'parley-outbox-'));
  return { env: { CHAT_DATA_DIR: dir }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

for (const database of DATABASES) {
  test(`webhooks are delivered after a restart while the receiver was down (${database})`, async () => {
    const db = await sharedDatabase(database);
    let hooks = await receiver();
    const port = hooks.port;
    const env = { ...db.env, CHAT_WEBHOOK_URLS: hooks.url, CHAT_WEBHOOK_SECRET: SECRET };
    await hooks.close(); // down: every delivery fails
    let app = await startTestApp({ database: 'pglite', env });
    try {
      const [a, b] = newUsers(2);
      const conversationId = await direct(app, a, b);
      const message = await send(app, a, conversationId, 'while down');
      const deadline = Date.now() + 10_000;
      while ((await app.app.chat.db.selectFrom('outbox').select('attempts').where('kind', '=', 'webhook').executeTakeFirst())?.attempts !== 1) {
        assert.ok(Date.now() < deadline, 'a failed attempt recorded');
        await new Promise((r) => setTimeout(r, 25));
      }
      await app.close();
      hooks = await receiver(port);
      app = await startTestApp({ database: 'pglite', env });
      const hook = await until('the webhook after the restart', () => hooks.accepted.find((h) => h.type === 'MessageSent' && h.data.id === message.id), 20_000);
      assert.equal(hook.data.body, 'while down');
      assert.deepEqual(hooks.invalid, []);
    } finally {
      await app.close();
      await hooks.close();
      await db.drop();
    }
  });
}

test('two nodes on one PostgreSQL deliver each webhook once, in order per conversation', { skip: !DATABASES.includes('postgres') }, async () => {
  const db = await sharedDatabase('postgres');
  const hooks = await receiver();
  const env = { ...db.env, CHAT_WEBHOOK_URLS: hooks.url, CHAT_WEBHOOK_SECRET: SECRET };
  const one = await startTestApp({ database: 'pglite', env });
  const two = await startTestApp({ database: 'pglite', env });
  try {
    const [a, b, c] = newUsers(3);
    const ab = await direct(one, a, b);
    const ac = await direct(two, a, c);
    const sent: number[] = [];
    for (let i = 0; i < 15; i++) {
      sent.push((await send(i % 2 ? one : two, a, ab, `ab ${i}`)).id);
      sent.push((await send(i % 2 ? two : one, a, ac, `ac ${i}`)).id);
    }
    const messageHooks = () => hooks.accepted.filter((h) => h.type === 'MessageSent');
    await until('30 webhooks', () => messageHooks().length >= 30);
    await new Promise((r) => setTimeout(r, 1_500)); // both nodes polled again: nothing is sent twice
    const got = messageHooks();
    assert.equal(got.length, 30);
    assert.deepEqual(got.map((h) => h.data.id).sort((x, y) => x - y), [...sent].sort((x, y) => x - y));
    for (const conversationId of [ab, ac]) {
      const ids = got.filter((h) => h.data.conversation_id === conversationId).map((h) => h.data.id);
      assert.deepEqual(ids, [...ids].sort((x, y) => x - y), 'in order per conversation');
    }
    assert.deepEqual(hooks.invalid, []);
  } finally {
    await one.close();
    await two.close();
    await hooks.close();
    await db.drop();
  }
});

describe('one delivery (webhookDeliverer)', () => {
  const row = (target: string) => ({ id: 7, kind: 'webhook', target, conversation_id: 1, type: 'MessageDeleted', payload: { data: { id: 3, conversation_id: 1 } }, attempts: 0, created_at: new Date() });
  const deliverer = (timeoutMs = 10_000) => webhookDeliverer({ secret: SECRET, offline: async () => [], timeoutMs });

  async function answering(handle: (res: import('node:http').ServerResponse) => void) {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => handle(res));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
  }

  test('a 2xx answer is delivered; a redirect is not followed and is not delivered; a 500 is not delivered', async () => {
    for (const [status, delivered] of [[204, true], [200, true], [302, false], [500, false]] as const) {
      const r = await answering((res) => res.writeHead(status, status === 302 ? { location: '/elsewhere' } : {}).end());
      try {
        const outcome = await deliverer().deliver(row(r.url)).then(() => true, (err: Error) => err.message);
        if (delivered) assert.equal(outcome, true, `${status}`);
        else assert.match(String(outcome), new RegExp(`answered HTTP ${status}`));
      } finally {
        await r.close();
      }
    }
  });

  test('a receiver that does not answer in time is given up on with an error (retried later by the outbox)', async () => {
    const r = await answering(() => {}); // never answers
    try {
      const started = Date.now();
      await assert.rejects(deliverer(300).deliver(row(r.url)), /did not answer within 300 ms/);
      assert.ok(Date.now() - started < 3_000);
    } finally {
      await r.close();
    }
  });

  test('a receiver that is down is an error, not a crash', async () => {
    await assert.rejects(deliverer().deliver(row('http://127.0.0.1:1/hooks')), /ECONNREFUSED/);
  });
});
