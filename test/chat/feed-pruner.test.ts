// Retention of the change feed: changes older than CHAT_SYNC_RETENTION_S (plus an hour of slack) and the
// participation spans that ended before then are deleted, in batches, by one node at a time; newer ones stay.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createFeedPruner, PRUNE_LOCK } from '../../src/chat/feed-pruner.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';

const HOUR = 3_600_000;

for (const database of DATABASES) {
  describe(`change feed retention (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('deletes the changes and ended spans past retention, keeps the rest', async () => {
      const db = app.app.database.db;
      const now = new Date('2030-01-10T00:00:00Z');
      const day = 24 * HOUR;
      await sql`insert into sync_changes (conversation_id, user_id, type, data, at) values
        (900001, null, 'MessageDeleted', '{"id":1,"conversation_id":900001}', ${new Date(now.getTime() - 3 * day)}),
        (900001, null, 'MessageDeleted', '{"id":2,"conversation_id":900001}', ${new Date(now.getTime() - 2 * day)}),
        (900001, null, 'MessageDeleted', '{"id":3,"conversation_id":900001}', ${new Date(now.getTime() - HOUR)})`.execute(db);
      await sql`insert into sync_memberships (user_id, conversation_id, joined_tx, left_tx, left_at) values
        (900002, 900001, 1, 2, ${new Date(now.getTime() - 3 * day)}),
        (900003, 900001, 1, 2, ${new Date(now.getTime() - HOUR)}),
        (900004, 900001, 1, null, null)`.execute(db);

      // One day of retention: the changes and spans of three and two days ago go, an hour ago stays.
      const pruner = createFeedPruner({ db, retentionSeconds: 86_400 });
      assert.equal(await pruner.prune(now), 2);
      const { rows: changes } = await sql<{ id: number }>`select (data->>'id')::int as id from sync_changes where conversation_id = 900001 order by 1`.execute(db);
      assert.deepEqual(changes.map((r) => r.id), [3]);
      const { rows: spans } = await sql<{ user_id: number }>`select user_id from sync_memberships where conversation_id = 900001 order by 1`.execute(db);
      assert.deepEqual(spans.map((r) => Number(r.user_id)), [900003, 900004]);
      assert.equal(await pruner.prune(now), 0, 'a second pass finds nothing');
    });

    test('a node skips the pass while another holds it', async (t) => {
      if (database !== 'postgres') return t.skip('one connection: PGlite has no second node');
      const db = app.app.database.db;
      await sql`insert into sync_changes (conversation_id, user_id, type, data, at) values (900010, null, 'MessageDeleted', '{}', '2000-01-01')`.execute(db);
      const pruner = createFeedPruner({ db, retentionSeconds: 60 });
      await db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${PRUNE_LOCK})`.execute(trx);
        assert.equal(await pruner.prune(), 0, 'held by another: nothing deleted');
      });
      assert.ok((await pruner.prune()) >= 1, 'free again: deleted');
    });
  });
}
