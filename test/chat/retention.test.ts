// Message retention (CHAT_MESSAGE_RETENTION_DAYS, docs/deployment.md "Message retention"): messages older than the
// retention are deleted for good with their attachment files (a forward that is kept keeps its file), threads with
// their root, in batches; unread counts and each conversation's last message stay right; one node at a time; the
// first pass runs soon after start. A bad value stops the start with one clear line.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { RETENTION_BATCH, RETENTION_LOCK } from '../../src/chat/retention.js';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/config/settings.js';
import { localDiskStorage } from '../../src/store/attachment-storage.js';
import { countUnread } from '../../src/store/messages.js';
import { SECRETS } from '../../testkit/secrets.js';
import { until } from '../../testkit/wait.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { conversation, direct, group, history, newUsers, send, upload } from '../http/helpers.js';

const DAY_S = 86_400;

test('CHAT_MESSAGE_RETENTION_DAYS: a positive number of days, fractions allowed; anything else stops the start saying so', () => {
  const retention = (value: string | undefined) => loadConfig({ ...SECRETS, CHAT_DATA_DIR: '/tmp/parley-retention-config', ...(value === undefined ? {} : { CHAT_MESSAGE_RETENTION_DAYS: value }) }).limits.messageRetentionDays;
  assert.equal(retention(undefined), null, 'unset: forever');
  assert.equal(retention(''), null);
  assert.equal(retention('30'), 30);
  assert.equal(retention('0.5'), 0.5);
  for (const bad of ['0', '-1', 'abc', '1e3', '30 days', 'Infinity']) {
    assert.throws(() => retention(bad), (err: unknown) => err instanceof ConfigError && /^CHAT_MESSAGE_RETENTION_DAYS must be a positive number of days/.test(err.message), bad);
  }
});

for (const database of DATABASES) {
  describe(`message retention (${database})`, { timeout: 120_000 }, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database, env: { CHAT_MESSAGE_RETENTION_DAYS: '30' } });
      await app.app.retention!.stop(); // the passes here are the test's own
    });
    after(async () => {
      await app?.close();
    });
    const db = () => app.app.chat.db;
    const age = (ids: number[], days: number) =>
      sql`update messages set created_at = now() - make_interval(days => ${days}) where id = any(${ids.map(String)}::bigint[])`.execute(db());
    const exists = async (id: number) => (await db().selectFrom('messages').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

    test('old messages go (rows, files, threads with their root); newer stay; unread counts and last messages follow', async () => {
      const [alice, bob, carol] = newUsers(3);
      const storage = localDiskStorage(join(app.config.dataDir, 'attachments'));
      const dm = await direct(app, alice!, bob!);
      const team = await group(app, alice!, [bob!, carol!]);
      const file = (await upload(app, alice!, 'old file', 'old.txt')).body.data;
      const kept = (await upload(app, alice!, 'forwarded file', 'fwd.txt')).body.data;
      const oldWithFile = await send(app, alice!, dm, { body: 'old with file', attachment_id: file.id });
      const oldForwarded = await send(app, alice!, dm, { body: 'old, forwarded later', attachment_id: kept.id });
      const oldMention = await send(app, alice!, dm, { body: 'old mention', mentioned_user_ids: [bob] });
      const root = await send(app, carol!, team, 'old root');
      const reply = await send(app, bob!, team, { body: 'newer reply', thread_id: root.id });
      const onlyOld = await send(app, carol!, team, 'old and last in the team');
      const forward = await app.request(alice!, 'POST', `/messages/${oldForwarded.id}/forward`, { conversation_ids: [team] });
      assert.equal(forward.status, 201);
      const recent = await send(app, alice!, dm, 'recent');
      await age([oldWithFile.id, oldForwarded.id, oldMention.id, root.id, onlyOld.id], 40);
      await age([reply.id, forward.body.data[0].id, recent.id], 29);
      const fileKey = (await db().selectFrom('attachments').select('storage_key').where('id', '=', file.id).executeTakeFirstOrThrow()).storage_key;
      assert.ok(await storage.open(fileKey).then((f) => (f?.stream.destroy(), f !== null)), 'the file is stored');
      const since = (await app.request(bob!, 'GET', '/sync')).body.data.cursor;
      const before = await conversation(app, bob!, dm);
      assert.equal(before.unread_count, 4);
      assert.equal(before.unread_mention_count, 1);

      const deleted = await app.app.retention!.sweep();
      assert.ok(deleted >= 6, `deleted ${deleted}`);
      for (const m of [oldWithFile, oldForwarded, oldMention, root, reply, onlyOld]) assert.equal(await exists(m.id), false, `message ${m.id} is gone`);
      for (const m of [recent, forward.body.data[0]]) assert.equal(await exists(m.id), true, `message ${m.id} stays`);
      assert.deepEqual((await history(app, bob!, dm)).data.map((m: any) => m.id), [recent.id]);

      // The file of a deleted message is gone; a file a kept forward carries stays.
      assert.equal(await storage.open(fileKey), null, 'the old file is deleted from storage');
      assert.equal((await app.request(alice!, 'GET', `/attachments/${file.id}`)).status, 404);
      assert.equal((await app.request(carol!, 'GET', `/attachments/${kept.id}`)).status, 200);
      assert.equal(Number((await db().selectFrom('file_deletions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n), 0, 'nothing left queued');

      // Counters as a recount gives them; the last message falls back to the newest kept one.
      const after = await conversation(app, bob!, dm);
      assert.equal(after.unread_count, 1);
      assert.equal(after.unread_mention_count, 0);
      assert.deepEqual(await countUnread(db(), dm, bob!, 0), { unread: 1, mentions: 0 });
      assert.equal(after.last_message.id, recent.id);
      const teamView = await conversation(app, carol!, team);
      assert.equal(teamView.last_message.id, forward.body.data[0].id);
      assert.equal(teamView.unread_count, (await countUnread(db(), team, carol!, 0)).unread);

      // What clients hear: InboxUpdated where an entry changed (bob's unread count), and no MessageDeleted per message.
      const changes = (await app.request(bob!, 'GET', `/sync?since=${encodeURIComponent(since)}`)).body.data.changes;
      const inbox = changes.find((c: any) => c.type === 'InboxUpdated' && c.conversation_id === dm);
      assert.ok(inbox, JSON.stringify(changes.map((c: any) => [c.type, c.conversation_id])));
      assert.equal(inbox.data.unread_count, 1);
      assert.ok(!changes.some((c: any) => c.type === 'MessageDeleted'));
    });

    test('many old messages go in batches; a conversation left with none has no last message', async () => {
      const [alice, bob] = newUsers(2);
      const dm = await direct(app, alice!, bob!);
      const count = RETENTION_BATCH * 2 + 37;
      await sql`insert into messages (conversation_id, sender_id, body, created_at)
        select ${dm}, ${alice}, 'old ' || g, now() - interval '31 days' from generate_series(1, ${count}) g`.execute(db());
      await sql`update conversations set last_message_id = (select max(id) from messages where conversation_id = ${dm}) where id = ${dm}`.execute(db());
      const swept = await app.app.retention!.sweep();
      assert.ok(swept >= count, `swept ${swept}`);
      const left = await db().selectFrom('messages').select((eb) => eb.fn.countAll().as('n')).where('conversation_id', '=', dm).executeTakeFirstOrThrow();
      assert.equal(Number(left.n), 0);
      assert.equal((await conversation(app, bob!, dm)).last_message, null);
    });

    test('one node at a time: while another holds the sweep, a pass deletes nothing', async () => {
      const [alice, bob] = newUsers(2);
      const dm = await direct(app, alice!, bob!);
      const old = await send(app, alice!, dm, 'old');
      await age([old.id], 31);
      if (database === 'postgres') {
        // Another node's pass holds the lock (a transaction of its own on another connection).
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked!: () => void;
        const lockedNow = new Promise<void>((resolve) => (locked = resolve));
        const other = db().transaction().execute(async (trx) => {
          await sql`select pg_advisory_xact_lock(${RETENTION_LOCK})`.execute(trx);
          locked();
          await held;
        });
        await lockedNow;
        assert.equal(await app.app.retention!.sweep(), 0);
        assert.equal(await exists(old.id), true);
        release();
        await other;
      }
      assert.ok((await app.app.retention!.sweep()) >= 1);
      assert.equal(await exists(old.id), false);
    });

    test('the first pass runs soon after start, without being asked', async () => {
      const [alice, bob] = newUsers(2);
      const dm = await direct(app, alice!, bob!);
      const old = await send(app, alice!, dm, 'old');
      await sql`update messages set created_at = now() - make_interval(secs => ${30 * DAY_S + 1}) where id = ${old.id}`.execute(db());
      app.app.retention!.start({ firstDelayMs: 50 });
      try {
        await until(async () => !(await exists(old.id)), 10_000, () => 'the old message is still there');
      } finally {
        await app.app.retention!.stop();
      }
    });
  });
}
