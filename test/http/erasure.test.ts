// A user's erasure (docs/api.md "Compliance", docs/deployment.md "Erasure"): DELETE /users/{id}?messages=erase|keep
// answers 202, the user is "Deleted user" with their tokens refused at once, and the background job leaves them
// in no group (ownership handed over as on leaving), deletes their personal data and, with erase, every message
// and file of theirs, and leaves no trace of their text or name in what the database stores (messages, search
// vectors, the change feed, the outbox; on PostgreSQL the whole pg_dump). Idempotent; the audit log and the
// UserErased webhook tell of it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { scrubbed } from '../../src/chat/erasure.js';
import { localDiskStorage } from '../../src/store/attachment-storage.js';
import { S3TestServer } from '../../testkit/s3-server.js';
import { until } from '../../testkit/wait.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { EchoClients } from '../support/echo.js';
import { assertError, call, conversation, direct, group, history, newUsers, register, send, upload } from './helpers.js';

/** A webhook receiver that refuses (500) until `accept` is set: the rows it refuses stay queued in the outbox. */
async function webhookReceiver() {
  const received: { type: string; data: any }[] = [];
  const state = { accept: false };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (!state.accept) return void res.writeHead(500).end();
      received.push(JSON.parse(body));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, state, close: () => new Promise((r) => server.close(r)) };
}

test('scrubbed: their user objects become "Deleted user"; with erase, their texts (messages, forwards, reply previews) go', () => {
  const me = { id: 7, name: 'Vera', avatar_url: 'https://a/v.png' };
  const other = { id: 8, name: 'Finn', avatar_url: null };
  const payload = {
    id: 7, conversation_id: 7, body: 'their reply', sender: other, attachment: null,
    reply_to: { id: 3, body: 'vera said', sender: me, deleted: false },
    forwarded_from: null,
    participants_preview: [{ ...me, role: 'owner' }],
    conversation: { id: 7, type: 'group', name: 'Team', avatar_url: null },
  };
  const kept = scrubbed(payload, 7, false) as any;
  assert.equal(kept.reply_to.sender.name, 'Deleted user');
  assert.equal(kept.reply_to.sender.avatar_url, null);
  assert.equal(kept.reply_to.body, 'vera said', 'keep: the text stays');
  assert.equal(kept.participants_preview[0].name, 'Deleted user');
  assert.equal(kept.participants_preview[0].role, 'owner');
  assert.equal(kept.conversation.name, 'Team', 'a conversation sharing the id is no user');
  assert.equal(kept.body, 'their reply');
  const erased = scrubbed(payload, 7, true) as any;
  assert.deepEqual(erased.reply_to, { id: 3, body: null, sender: { id: 7, name: 'Deleted user', avatar_url: null }, deleted: true });
  assert.equal(erased.body, 'their reply', "someone else's text stays");
  const forward = { id: 9, body: 'vera said', sender: other, attachment: { id: 1 }, forwarded_from: { message_id: 3, conversation_id: 1, sender: me } };
  assert.deepEqual(scrubbed(forward, 7, true), { ...forward, body: null, attachment: null, forwarded_from: { message_id: 3, conversation_id: 1, sender: { id: 7, name: 'Deleted user', avatar_url: null } } });
  assert.equal(scrubbed({ id: 1, body: 'x', sender: other }, 7, true), undefined, 'nothing of theirs: unchanged');
});

for (const database of DATABASES) {
  describe(`erasure (${database})`, { timeout: 120_000 }, () => {
    let app: TestApp;
    let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
    const clients = new EchoClients(() => app);
    before(async () => {
      hooks = await webhookReceiver();
      app = await startTestApp({ database, env: { CHAT_WEBHOOK_URLS: hooks.url } });
    });
    after(async () => {
      await clients.disconnectAll();
      await app?.close();
      await hooks?.close();
    });
    const server = (method: string, path: string, key: string | null = app.config.serverKey) =>
      call(app, null, method, path, undefined, key === null ? {} : { 'x-chat-server-key': key });
    const db = () => app.app.chat.db;
    const count = async (query: ReturnType<typeof sql<{ n: number }>>) => Number((await query.execute(db())).rows[0]!.n);
    const erasedWithin = async (userId: number, ms: number) =>
      until(async () => (await db().selectFrom('erasure_jobs').select('completed_at').where('user_id', '=', userId).executeTakeFirst())?.completed_at != null, ms, () => `erasure of ${userId} not complete`);

    test('the server key is required (401); an unknown user is 404; messages is erase or keep (422)', async () => {
      const [someone] = newUsers(1);
      await register(app, someone!);
      assertError(await server('DELETE', `/users/${someone}`, null), 401);
      assertError(await call(app, await app.token(someone!), 'DELETE', `/users/${someone}`), 401);
      assertError(await server('DELETE', `/users/${newUsers(1)[0]}`), 404, 'not_found');
      assertError(await server('DELETE', `/users/${someone}?messages=shred`), 422);
      assert.equal((await app.request(someone!, 'GET', '/blocks')).status, 200, 'nothing happened to them');
    });

    test('erase: groups left with ownership handed over, personal data and every message and file gone, no trace of their text or name', async () => {
      const [vera, finn, ada, max, blocked] = newUsers(5);
      const name = `Vera Quillfeather ${vera}`;
      await app.token(vera!, name);
      const dm = await direct(app, vera!, finn!);
      const team = await group(app, vera!, [ada!, max!], 'Team');
      assert.equal((await app.request(vera!, 'PATCH', `/groups/${team}/participants/${ada}`, { role: 'admin' })).status, 204);
      const since = (await app.request(finn!, 'GET', '/sync')).body.data.cursor;
      const file = (await upload(app, vera!, 'zephyrquartz file bytes', 'zephyrquartz.txt')).body.data;
      const fileKey = (await db().selectFrom('attachments').select('storage_key').where('id', '=', file.id).executeTakeFirstOrThrow()).storage_key;
      const first = await send(app, vera!, dm, 'zephyrquartz one');
      const withFile = await send(app, vera!, team, { body: 'zephyrquartz two', attachment_id: file.id });
      const inThread = await send(app, vera!, team, { body: 'zephyrquartz in a thread', thread_id: withFile.id });
      const finnsReply = await send(app, finn!, dm, { body: 'answering', reply_to_id: first.id });
      const finnsOwn = await send(app, finn!, dm, 'finn alone');
      const forwarded = await app.request(ada!, 'POST', `/messages/${withFile.id}/forward`, { conversation_ids: [team] });
      assert.equal(forwarded.status, 201);
      assert.equal((await app.request(vera!, 'PUT', `/messages/${first.id}/pin`)).status, 200);
      assert.equal((await app.request(vera!, 'PUT', `/messages/${finnsOwn.id}/reactions/thumbs_up`)).status, 200);
      await register(app, blocked!);
      assert.equal((await app.request(vera!, 'POST', '/blocks', { user_id: blocked })).status, 200);
      assert.equal((await app.request(vera!, 'PUT', `/conversations/${dm}/mute`, { until: null })).status, 200);
      const finnBefore = await conversation(app, finn!, dm);
      assert.equal(finnBefore.unread_count, 1);
      const veraSocket = await clients.connect(vera!, { token: await app.token(vera!, name) });
      await veraSocket.subscribeUser();
      const finnSocket = await clients.listening(finn!, [dm]);

      const erased = await server('DELETE', `/users/${vera}`);
      assert.equal(erased.status, 202, JSON.stringify(erased.body));
      assert.deepEqual(erased.body, { data: { user_id: vera, messages: 'erase' } });
      // At once: their tokens are refused, their profile is gone.
      assertError(await app.request(vera!, 'GET', '/conversations'), 401, 'unauthenticated');
      assertError(await call(app, await app.token(vera!, name), 'GET', '/blocks'), 401, 'unauthenticated');
      const connection = veraSocket.echo.connector.pusher.connection;
      await until(() => connection.state !== 'connected', 10_000, () => `their socket is still ${connection.state}`);
      // Nobody may start a conversation with them or add them to a group.
      assertError(await app.request(finn!, 'POST', '/conversations', { user_id: vera }), 404, 'not_found');
      assertError(await app.request(ada!, 'POST', `/groups/${team}/participants`, { user_ids: [vera] }), 422);
      const found = await app.request(finn!, 'GET', '/users?query=Deleted&limit=100');
      assert.equal(found.status, 200);
      assert.ok(!found.body.data.some((u: any) => u.id === vera), 'people search does not offer them');
      await erasedWithin(vera!, 30_000);

      // Live: the other person hears each deletion.
      await finnSocket.waitFor('MessageDeleted', (p) => p.id === first.id);
      await finnSocket.waitFor('InboxUpdated', (p) => p.id === dm && p.unread_count === 0);
      // Groups: left, the admin now owns the team.
      const teamView = await conversation(app, ada!, team);
      assert.deepEqual(teamView.participants_preview.map((p: any) => [p.id, p.role]).sort(), [[ada, 'owner'], [max, 'member']].sort());
      // Messages: gone from history, threads and the forward of theirs; someone else's reply previews it as deleted.
      const dmHistory = (await history(app, finn!, dm)).data;
      assert.deepEqual(dmHistory.map((m: any) => m.id), [finnsOwn.id, finnsReply.id]);
      assert.deepEqual(dmHistory[1].reply_to, { id: first.id, body: null, sender: { id: vera, name: 'Deleted user', avatar_url: null }, deleted: true });
      assert.deepEqual((await history(app, ada!, team)).data, []);
      assert.equal((await app.request(ada!, 'GET', `/messages/${withFile.id}/thread`)).status, 404);
      assert.equal((await app.request(ada!, 'GET', `/attachments/${file.id}`)).status, 404);
      assert.equal(await localDiskStorage(join(app.config.dataDir, 'attachments')).open(fileKey), null, 'the file is deleted');
      // Counters follow; the last message falls back.
      const finnAfter = await conversation(app, finn!, dm);
      assert.equal(finnAfter.last_message.id, finnsOwn.id);
      assert.equal(finnAfter.unread_count, 0, 'their unread message no longer counts');
      assert.equal((await conversation(app, ada!, team)).last_message, null);
      // Personal data.
      assert.equal(await count(sql`select count(*)::int as n from message_reactions where user_id = ${vera}`), 0);
      assert.equal(await count(sql`select count(*)::int as n from blocks where blocker_id = ${vera}`), 0);
      assert.equal(await count(sql`select count(*)::int as n from participants where user_id = ${vera} and (muted or last_read_at is not null)`), 0);
      assert.equal(await count(sql`select count(*)::int as n from attachments where uploader_id = ${vera}`), 0);
      // No trace of their text or name: bodies, search vectors, the change feed, the outbox (rows still queued).
      assert.ok(await count(sql`select count(*)::int as n from outbox`) > 0, 'webhooks still queued (the receiver refuses)');
      for (const probe of [
        sql<{ n: number }>`select count(*)::int as n from messages where body like '%zephyrquartz%' or search::text like '%zephyrquartz%'`,
        sql<{ n: number }>`select count(*)::int as n from sync_changes where data::text like '%zephyrquartz%' or data::text like '%Quillfeather%'`,
        sql<{ n: number }>`select count(*)::int as n from outbox where payload::text like '%zephyrquartz%' or payload::text like '%Quillfeather%'`,
        sql<{ n: number }>`select count(*)::int as n from users where name like '%Quillfeather%'`,
        sql<{ n: number }>`select count(*)::int as n from attachments where name like '%zephyrquartz%'`,
      ]) {
        assert.equal(await count(probe), 0);
      }
      if (database === 'postgres') {
        const dump = spawnSync('pg_dump', ['--data-only', app.config.databaseUrl!], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
        assert.equal(dump.status, 0, dump.stderr);
        assert.ok(!/zephyrquartz|Quillfeather/.test(dump.stdout), 'pg_dump holds none of their text or name');
      }
      // Catch-up tells of each deletion, with none of their text.
      const changes = (await app.request(finn!, 'GET', `/sync?since=${encodeURIComponent(since)}&limit=1000`)).body.data.changes;
      assert.ok(changes.some((c: any) => c.type === 'MessageDeleted' && c.data.id === first.id));
      assert.ok(!JSON.stringify(changes).includes('zephyrquartz'));

      // The audit log and the webhook.
      const audit = await db().selectFrom('audit_log').selectAll().where('action', '=', 'user_erased').where('target_user_id', '=', vera!).execute();
      assert.equal(audit.length, 1);
      assert.equal(audit[0]!.actor_id, null);
      hooks.state.accept = true;
      await until(() => hooks.received.some((h) => h.type === 'UserErased' && h.data.user_id === vera), 30_000, () => 'no UserErased webhook');
      assert.deepEqual(hooks.received.find((h) => h.type === 'UserErased')!.data, { user_id: vera, messages: 'erase' });

      // Idempotent: asked again, 202 and nothing more; the id cannot come back.
      assert.equal((await server('DELETE', `/users/${vera}`)).status, 202);
      assert.equal((await db().selectFrom('audit_log').select('id').where('action', '=', 'user_erased').where('target_user_id', '=', vera!).execute()).length, 1);
      assertError(await call(app, null, 'PUT', `/users/${vera}`, { name: 'Vera again' }, { 'x-chat-server-key': app.config.serverKey }), 409, 'conflict');
    });

    test('keep: their messages stay under "Deleted user"; their name is gone from what is stored', async () => {
      const [kim, lou] = newUsers(2);
      await app.token(kim!, `Kim Vantablackwood ${kim}`);
      const dm = await direct(app, kim!, lou!);
      const message = await send(app, kim!, dm, 'this text stays');
      assert.equal((await server('DELETE', `/users/${kim}?messages=keep`)).status, 202);
      await erasedWithin(kim!, 30_000);
      const [item] = (await history(app, lou!, dm)).data;
      assert.equal(item.id, message.id);
      assert.equal(item.body, 'this text stays');
      assert.deepEqual(item.sender, { id: kim, name: 'Deleted user', avatar_url: null });
      assert.equal(await count(sql`select count(*)::int as n from sync_changes where data::text like '%Vantablackwood%'`), 0);
      // From keep to erase: the job runs again and erases.
      assert.equal((await server('DELETE', `/users/${kim}?messages=erase`)).status, 202);
      await erasedWithin(kim!, 30_000);
      assert.deepEqual((await history(app, lou!, dm)).data, []);
    });

    test('a few hundred messages are erased within 30 s; the user may not send once erased', async () => {
      const [sam, tom] = newUsers(2);
      const dm = await direct(app, sam!, tom!);
      await sql`insert into messages (conversation_id, sender_id, body) select ${dm}, ${sam}, 'bulk ' || g from generate_series(1, 600) g`.execute(db());
      const started = Date.now();
      assert.equal((await server('DELETE', `/users/${sam}`)).status, 202);
      assertError(await app.request(sam!, 'POST', `/conversations/${dm}/messages`, { body: 'too late' }), 401);
      await erasedWithin(sam!, 30_000);
      assert.ok(Date.now() - started < 30_000);
      assert.equal(await count(sql`select count(*)::int as n from messages where sender_id = ${sam} and (deleted_at is null or body is not null)`), 0);
      const job = await db().selectFrom('erasure_jobs').selectAll().where('user_id', '=', sam!).executeTakeFirstOrThrow();
      assert.equal(Number(job.messages_erased), 600);
    });
  });
}

describe('erasure and retention with attachments in S3 (pglite)', { timeout: 120_000 }, () => {
  let s3: S3TestServer;
  let app: TestApp;
  before(async () => {
    s3 = await S3TestServer.start();
    app = await startTestApp({ env: { ...s3.env(), CHAT_MESSAGE_RETENTION_DAYS: '30' } });
    await app.app.retention!.stop(); // the pass here is the test's own
  });
  after(async () => {
    await app?.close();
    await s3?.close();
  });
  const objectKeys = async () => (await s3.objects()).map((o) => o.key);
  const keyOf = async (attachmentId: number) =>
    `attachments/${(await app.app.chat.db.selectFrom('attachments').select('storage_key').where('id', '=', attachmentId).executeTakeFirstOrThrow()).storage_key}`;

  test('an erased user\'s files and the files of messages past retention are deleted from the bucket; others stay', async () => {
    const [vera, finn] = newUsers(2);
    const dm = await direct(app, vera!, finn!);
    const theirs = (await upload(app, vera!, 'their file', 'theirs.txt')).body.data;
    const old = (await upload(app, finn!, 'an old file', 'old.txt')).body.data;
    const kept = (await upload(app, finn!, 'a kept file', 'kept.txt')).body.data;
    await send(app, vera!, dm, { attachment_id: theirs.id });
    const oldMessage = await send(app, finn!, dm, { attachment_id: old.id });
    await send(app, finn!, dm, { attachment_id: kept.id });
    const [theirKey, oldKey, keptKey] = [await keyOf(theirs.id), await keyOf(old.id), await keyOf(kept.id)];
    for (const key of [theirKey, oldKey, keptKey]) assert.ok((await objectKeys()).includes(key), `${key} is stored`);

    assert.equal((await call(app, null, 'DELETE', `/users/${vera}`, undefined, { 'x-chat-server-key': app.config.serverKey })).status, 202);
    await until(async () => !(await objectKeys()).includes(theirKey), 30_000, () => 'their file is still in the bucket');

    await sql`update messages set created_at = now() - interval '31 days' where id = ${oldMessage.id}`.execute(app.app.chat.db);
    assert.ok((await app.app.retention!.sweep()) >= 1);
    const left = await objectKeys();
    assert.ok(!left.includes(oldKey), 'the file of a message past retention is deleted');
    assert.ok(left.includes(keptKey), 'a file of a kept message stays');
  });
});
