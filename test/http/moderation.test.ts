// Moderation (docs/api.md "Moderation"): reports of messages (once per user and message, 409 already_reported),
// the MessageReported webhook, the server's report queue and its three resolutions, service-wide user bans
// (403 user_banned for their tokens, nobody may message them) and the audit log newest first.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertHistoryItem, call, direct, group, newUsers, send, USER_KEYS } from './helpers.js';

const REPORT_KEYS = ['action', 'created_at', 'id', 'message', 'message_id', 'note', 'reason', 'reporter', 'resolved_at', 'status'];
const AUDIT_KEYS = ['action', 'actor_id', 'at', 'conversation_id', 'details', 'id', 'message_id', 'target_user_id'];

/** A host app's webhook endpoint: keeps every body it is sent. */
async function hookReceiver() {
  const bodies: any[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, bodies, close: () => new Promise((resolve) => server.close(resolve)) };
}

for (const database of DATABASES) {
  describe(`moderation (${database})`, () => {
    let app: TestApp;
    let hooks: Awaited<ReturnType<typeof hookReceiver>>;
    const server = (method: string, path: string, body?: unknown) => call(app, null, method, path, body, { 'x-chat-server-key': app.config.serverKey });
    before(async () => {
      hooks = await hookReceiver();
      app = await startTestApp({ database, env: { CHAT_WEBHOOK_URLS: hooks.url, CHAT_WEBHOOK_SECRET: 'moderation-test-webhook-secret-0123456789' } });
    });
    after(async () => {
      await app?.close();
      await hooks?.close();
    });

    test('a participant reports a message once (409 already_reported); strangers get 404; bad reasons and long notes 422; the host app hears MessageReported', async () => {
      const [a, b, stranger] = newUsers(3);
      const id = await group(app, a!, [b!]);
      const message = await send(app, a!, id, 'buy cheap watches');
      const report = await app.request(b!, 'POST', `/messages/${message.id}/report`, { reason: 'spam', note: 'again' });
      assert.equal(report.status, 201, JSON.stringify(report.body));
      assert.deepEqual(Object.keys(report.body.data).sort(), ['id', 'message_id', 'reason', 'status']);
      assert.deepEqual({ ...report.body.data, id: 0 }, { id: 0, message_id: message.id, reason: 'spam', status: 'open' });
      assertError(await app.request(b!, 'POST', `/messages/${message.id}/report`, { reason: 'abuse' }), 409, 'already_reported');
      assertError(await app.request(stranger!, 'POST', `/messages/${message.id}/report`, { reason: 'spam' }), 404);
      assertError(await app.request(a!, 'POST', `/messages/${message.id}/report`, { reason: 'rude' }), 422);
      assertError(await app.request(a!, 'POST', `/messages/${message.id}/report`, { reason: 'other', note: 'x'.repeat(1001) }), 422);
      assertError(await app.request(a!, 'POST', '/messages/999999999/report', { reason: 'other' }), 404);

      const deadline = Date.now() + 10_000;
      let hook: any;
      while (!(hook = hooks.bodies.find((h) => h.type === 'MessageReported' && h.data.report_id === report.body.data.id)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(hook, 'MessageReported was delivered');
      assert.deepEqual(hook.data, { report_id: report.body.data.id, message_id: message.id, conversation_id: id, reporter_id: b, reason: 'spam' });
    });

    test('the queue lists open reports newest first with reporter and message, paged; resolving answers the report and writes the audit log', async () => {
      const [a, b, c] = newUsers(3);
      const id = await group(app, a!, [b!, c!]);
      const first = await send(app, a!, id, 'first');
      const second = await send(app, a!, id, 'second');
      const r1 = (await app.request(b!, 'POST', `/messages/${first.id}/report`, { reason: 'abuse', note: 'rude' })).body.data;
      const r2 = (await app.request(c!, 'POST', `/messages/${second.id}/report`, { reason: 'other' })).body.data;

      const page = await server('GET', '/moderation/reports?limit=1');
      assert.equal(page.status, 200, JSON.stringify(page.body));
      const [newest] = page.body.data;
      assert.deepEqual(Object.keys(newest).sort(), REPORT_KEYS);
      assert.ok(newest.id >= r2.id);
      assert.ok(page.body.meta.next_cursor);
      const all = [];
      for (let cursor: string | null = null, n = 0; n < 1000; n++) {
        const res: any = await server('GET', `/moderation/reports?status=open&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        all.push(...res.body.data);
        cursor = res.body.meta.next_cursor;
        if (!cursor) break;
      }
      const mine = all.find((r: any) => r.id === r1.id);
      assert.equal(mine.note, 'rude');
      assert.equal(mine.status, 'open');
      assert.equal(mine.action, null);
      assert.deepEqual(Object.keys(mine.reporter).sort(), USER_KEYS);
      assert.equal(mine.reporter.id, b);
      assertHistoryItem(mine.message);
      assert.equal(mine.message.body, 'first');

      const dismissed = await server('POST', `/moderation/reports/${r1.id}/resolve`, { action: 'dismiss' });
      assert.equal(dismissed.status, 200, JSON.stringify(dismissed.body));
      assert.equal(dismissed.body.data.status, 'resolved');
      assert.equal(dismissed.body.data.action, 'dismiss');
      assertError(await server('POST', `/moderation/reports/${r1.id}/resolve`, { action: 'dismiss' }), 409);
      assertError(await server('POST', '/moderation/reports/999999999/resolve', { action: 'dismiss' }), 404);
      assertError(await server('POST', `/moderation/reports/${r2.id}/resolve`, { action: 'shout' }), 422);
      assert.ok((await server('GET', '/moderation/reports?status=resolved&limit=100')).body.data.some((r: any) => r.id === r1.id));
      assert.ok(!(await server('GET', '/moderation/reports?limit=100')).body.data.some((r: any) => r.id === r1.id));
      assertError(await server('GET', '/moderation/reports?cursor=abc'), 422);
      assertError(await call(app, null, 'GET', '/moderation/reports'), 401);
      assertError(await app.request(a!, 'GET', '/moderation/reports'), 401);

      const entry = (await server('GET', `/audit?conversation_id=${id}`)).body.data[0];
      assert.deepEqual(Object.keys(entry).sort(), AUDIT_KEYS);
      assert.equal(entry.action, 'report_resolved');
      assert.equal(entry.actor_id, null);
      assert.equal(entry.message_id, first.id);
      assert.deepEqual(entry.details, { report_id: r1.id, action: 'dismiss' });
    });

    test('delete_message deletes the message for everyone (MessageDeleted in /sync)', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a!, b!);
      const message = await send(app, a!, id, 'nasty');
      const since = (await app.request(b!, 'GET', '/sync')).body.data.cursor;
      const report = (await app.request(b!, 'POST', `/messages/${message.id}/report`, { reason: 'abuse' })).body.data;
      const resolved = await server('POST', `/moderation/reports/${report.id}/resolve`, { action: 'delete_message' });
      assert.equal(resolved.status, 200);
      assert.equal(resolved.body.data.action, 'delete_message');
      assert.notEqual(resolved.body.data.message, null);
      const changes = (await app.request(b!, 'GET', `/sync?since=${encodeURIComponent(since)}`)).body.data.changes;
      assert.ok(changes.some((c: any) => c.type === 'MessageDeleted' && c.data.id === message.id));
      const items = (await app.request(b!, 'GET', `/conversations/${id}/messages`)).body.data;
      assert.ok(!items.some((m: any) => m.id === message.id && m.body === 'nasty'), 'the body is gone');
    });

    test('ban_user bans the sender from the service: their token answers 403 user_banned, nobody may message them, until unbanned', async () => {
      const [spammer, b, c] = newUsers(3);
      const id = await direct(app, spammer!, b!);
      const cToSpammer = await direct(app, c!, spammer!);
      const message = await send(app, spammer!, id, 'spam spam');
      const report = (await app.request(b!, 'POST', `/messages/${message.id}/report`, { reason: 'spam' })).body.data;
      assert.equal((await server('POST', `/moderation/reports/${report.id}/resolve`, { action: 'ban_user' })).status, 200);

      assertError(await app.request(spammer!, 'GET', '/conversations'), 403, 'user_banned');
      assertError(await app.request(c!, 'POST', `/conversations/${cToSpammer}/messages`, { body: 'hello?' }), 403, 'user_banned');
      const entries = (await server('GET', `/audit?limit=2`)).body.data;
      assert.deepEqual(entries.map((e: any) => e.action).sort(), ['report_resolved', 'user_banned']);

      assert.equal((await server('DELETE', `/users/${spammer}/ban`)).status, 204);
      assertError(await server('DELETE', `/users/${spammer}/ban`), 404);
      assert.equal((await app.request(spammer!, 'GET', '/conversations')).status, 200);
      await send(app, c!, cToSpammer, 'welcome back');
      assert.equal((await server('GET', `/audit?limit=1`)).body.data[0].action, 'user_unbanned');
    });

    test('PUT /users/{id}/ban answers the ban; until lapses on its own; unknown users 404; a past until 422', async () => {
      const [u] = newUsers(1);
      assert.equal((await app.request(u!, 'GET', '/blocks')).status, 200);
      const until = new Date(Date.now() + 1500).toISOString();
      const ban = await server('PUT', `/users/${u}/ban`, { until, reason: 'cool off' });
      assert.equal(ban.status, 200, JSON.stringify(ban.body));
      assert.deepEqual(ban.body.data, { user_id: u, reason: 'cool off', until });
      assertError(await app.request(u!, 'GET', '/blocks'), 403, 'user_banned');
      assertError(await app.request(u!, 'POST', '/broadcasting/auth', { socket_id: '1.1', channel_name: `private-chat.user.${u}` }), 403, 'user_banned');
      await new Promise((resolve) => setTimeout(resolve, 1600));
      assert.equal((await app.request(u!, 'GET', '/blocks')).status, 200);

      const plain = await server('PUT', `/users/${u}/ban`);
      assert.deepEqual(plain.body.data, { user_id: u, reason: null, until: null });
      assertError(await server('PUT', '/users/999999998/ban', {}), 404);
      assertError(await server('PUT', `/users/${u}/ban`, { until: '2000-01-01T00:00:00Z' }), 422);
      const entry = (await server('GET', '/audit?limit=1')).body.data[0];
      assert.equal(entry.action, 'user_banned');
      assert.equal(entry.target_user_id, u);
      assert.equal(entry.actor_id, null);
    });

    test('the audit log pages newest first and filters by actor and conversation; bad cursors and limits 422', async () => {
      const [owner, m1, m2] = newUsers(3);
      const id = await group(app, owner!, [m1!, m2!]);
      for (const m of [m1, m2]) assert.equal((await app.request(owner!, 'DELETE', `/groups/${id}/participants/${m}`)).status, 204);
      const first = await server('GET', `/audit?actor_id=${owner}&limit=1`);
      assert.equal(first.status, 200);
      assert.equal(first.body.data[0].target_user_id, m2);
      const second = await server('GET', `/audit?actor_id=${owner}&limit=1&cursor=${first.body.meta.next_cursor}`);
      assert.equal(second.body.data[0].target_user_id, m1);
      assert.equal(second.body.meta.next_cursor, null);
      assert.deepEqual((await server('GET', `/audit?conversation_id=${id}`)).body.data.map((e: any) => e.action), ['participant_removed', 'participant_removed']);
      assertError(await server('GET', '/audit?cursor=-1'), 422);
      assertError(await server('GET', '/audit?limit=0'), 422);
    });
  });
}
