// The attachment sweeper: deletes uploads never sent after CHAT_UNSENT_UPLOAD_TTL_S and the files of messages
// deleted more than the grace period ago unless a forward still carries them; nothing else. On the embedded
// database and on PostgreSQL; on PostgreSQL also that a second node's pass does nothing while one holds the sweep.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { createAttachmentSweeper } from '../../src/chat/attachment-sweeper.js';
import { SWEEP_LOCK } from '../../src/store/attachment-sweep.js';
import { localDiskStorage } from '../../src/store/attachment-storage.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { direct, newUsers, send, upload } from '../http/helpers.js';

const DAY = 86_400;

for (const database of DATABASES) {
  describe(`attachment sweeper (${database})`, { timeout: 120_000 }, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
      await app.app.attachmentSweeper.stop(); // the passes here are the test's own
    });
    after(async () => {
      await app?.close();
    });

    test('removes old unsent uploads and files of long-deleted messages; keeps the rest', async () => {
      const db = app.app.chat.db;
      const storage = localDiskStorage(join(app.config.dataDir, 'attachments'));
      const registry = new Registry();
      const sweeper = createAttachmentSweeper({ db, storage, unsentTtlSeconds: DAY, deletedGraceSeconds: DAY, registry });
      const [alice, bob] = newUsers(2);
      const conv = await direct(app, alice, bob);
      const other = await direct(app, alice, newUsers(1)[0]!);
      const up = async (name: string) => {
        const res = await upload(app, alice, `content of ${name}`, `${name}.txt`);
        assert.equal(res.status, 201);
        return res.body.data as { id: number; size: number };
      };
      const backdate = (table: 'attachments' | 'messages', column: 'created_at' | 'deleted_at', id: number, seconds: number) =>
        sql`update ${sql.table(table)} set ${sql.ref(column)} = now() - make_interval(secs => ${seconds}) where id = ${id}`.execute(db);
      const del = async (messageId: number) => assert.equal((await app.request(alice, 'DELETE', `/messages/${messageId}`)).status, 204);

      const oldUnsent = await up('old-unsent');
      await backdate('attachments', 'created_at', oldUnsent.id, DAY + 60);
      const newUnsent = await up('new-unsent');
      await backdate('attachments', 'created_at', newUnsent.id, DAY - 60);
      const live = await up('live');
      await send(app, alice, conv, { attachment_id: live.id });
      await backdate('attachments', 'created_at', live.id, 10 * DAY);
      const longDeleted = await up('long-deleted');
      await del((await send(app, alice, conv, { attachment_id: longDeleted.id })).id);
      const recentlyDeleted = await up('recently-deleted');
      await del((await send(app, alice, conv, { attachment_id: recentlyDeleted.id })).id);
      const forwarded = await up('forwarded');
      const original = await send(app, alice, conv, { attachment_id: forwarded.id });
      const fwd = await app.request(alice, 'POST', `/messages/${original.id}/forward`, { conversation_ids: [other] });
      assert.equal(fwd.status, 201, JSON.stringify(fwd.body));
      await del(original.id);
      const messageOf = async (attachmentId: number) =>
        (await db.selectFrom('messages').select('id').where('attachment_id', '=', attachmentId).execute()).map((m) => m.id);
      for (const id of [...(await messageOf(longDeleted.id)), ...(await messageOf(forwarded.id))]) {
        await sql`update messages set deleted_at = now() - make_interval(secs => ${DAY + 60}) where id = ${id} and deleted_at is not null`.execute(db);
      }
      await backdate('attachments', 'created_at', longDeleted.id, 10 * DAY);
      const keyOf = async (id: number) => (await db.selectFrom('attachments').select('storage_key').where('id', '=', id).executeTakeFirstOrThrow()).storage_key;
      const keys = new Map<number, string>();
      for (const a of [oldUnsent, newUnsent, live, longDeleted, recentlyDeleted, forwarded]) keys.set(a.id, await keyOf(a.id));

      const result = await sweeper.sweep();
      assert.equal(result.ran, true);
      assert.deepEqual(result.unsent, { count: 1, bytes: oldUnsent.size });
      assert.deepEqual(result.deleted, { count: 1, bytes: longDeleted.size });

      const rows = new Set((await db.selectFrom('attachments').select('id').execute()).map((r) => r.id));
      for (const gone of [oldUnsent, longDeleted]) {
        assert.equal(rows.has(gone.id), false);
        assert.equal(await storage.open(keys.get(gone.id)!), null, 'its file is deleted');
      }
      for (const kept of [newUnsent, live, recentlyDeleted, forwarded]) {
        assert.equal(rows.has(kept.id), true);
        const file = await storage.open(keys.get(kept.id)!);
        assert.ok(file, 'its file is still there');
        file.stream.destroy();
      }
      const download = await fetch(`${app.api}/attachments/${forwarded.id}`, { headers: { authorization: `Bearer ${await app.token(alice)}` } });
      assert.equal(download.status, 200, 'the forward still serves the file');

      const metrics = await registry.getMetricsAsJSON();
      const deletedMetric = metrics.find((m) => m.name === 'parley_attachment_bytes_deleted_total')!;
      assert.deepEqual(
        deletedMetric.values.map((v) => [v.labels.reason, v.value]).sort(),
        [['message_deleted', longDeleted.size], ['unsent', oldUnsent.size]],
      );
      const stored = metrics.find((m) => m.name === 'parley_attachment_bytes_stored')!;
      const total = (await db.selectFrom('attachments').select('size').execute()).reduce((s, r) => s + Number(r.size), 0);
      assert.equal(stored.values[0]!.value, total);

      const again = await sweeper.sweep();
      assert.deepEqual([again.unsent.count, again.deleted.count], [0, 0], 'a second pass finds nothing more');
    });

    if (database === 'postgres') {
      test('one node at a time: while another holds the sweep, a pass does nothing', async () => {
        const db = app.app.chat.db;
        const storage = localDiskStorage(join(app.config.dataDir, 'attachments'));
        const sweeper = createAttachmentSweeper({ db, storage, unsentTtlSeconds: 1 });
        const stale = (await upload(app, newUsers(1)[0]!, 'x', 'x.txt')).body.data as { id: number };
        await sql`update attachments set created_at = now() - interval '1 hour' where id = ${stale.id}`.execute(db);
        await db.transaction().execute(async (trx) => {
          await sql`select pg_advisory_xact_lock(${SWEEP_LOCK})`.execute(trx);
          const skipped = await sweeper.sweep();
          assert.equal(skipped.ran, false);
        });
        const exists = await db.selectFrom('attachments').select('id').where('id', '=', stale.id).executeTakeFirst();
        assert.ok(exists, 'nothing deleted while the other held it');
        const ran = await sweeper.sweep();
        assert.equal(ran.ran, true);
        assert.ok(ran.unsent.count >= 1);
      });

      test('a send of an upload the sweeper is deleting at that moment is 422, not a 500, and fails no other send', async () => {
        const db = app.app.chat.db;
        const [alice, bob] = newUsers(2);
        const conv = await direct(app, alice, bob);
        const stale = (await upload(app, alice, 'about to be swept', 'late.txt')).body.data as { id: number };
        let sending: Promise<{ status: number; body: any }> | undefined;
        let other: Promise<{ status: number; body: any }> | undefined;
        // What a sweep pass does with an unsent upload, held open while Alice sends it (and Bob sends something
        // else to the same conversation, likely in the same batch).
        await db.transaction().execute(async (trx) => {
          await sql`select id from attachments where id = ${stale.id} for update skip locked`.execute(trx);
          sending = app.request(alice, 'POST', `/conversations/${conv}/messages`, { attachment_id: stale.id, body: 'at last' });
          other = app.request(bob, 'POST', `/conversations/${conv}/messages`, { body: 'unrelated' });
          // Let the sends reach the database and wait there.
          for (let i = 0; i < 50; i++) {
            const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and datname = current_database()`.execute(db);
            if (rows[0]!.n > 0) break;
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          await sql`update messages set attachment_id = null where attachment_id = ${stale.id}`.execute(trx);
          await sql`delete from attachments where id = ${stale.id}`.execute(trx);
        });
        const refused = await sending!;
        assert.equal(refused.status, 422, JSON.stringify(refused.body));
        assert.equal(refused.body.code, 'validation_failed');
        assert.ok(refused.body.errors.attachment_id, JSON.stringify(refused.body));
        const unrelated = await other!;
        assert.equal(unrelated.status, 201, JSON.stringify(unrelated.body));
      });
    }
  });
}
