// The change feed's two read plans (store/change-feed.ts): walking the feed's changes after a position, or probing
// each of the user's conversations. They must give the same rows for every user and every position, whichever is
// chosen; here each is forced on the same feed (members added, removed, blocks, sends, reads).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { SYNC_SETTLE_MS } from '../../src/chat/sync.js';
import { readChanges, readChangesOf, type FeedRead } from '../../src/store/change-feed.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { direct, group, newUsers, send } from '../http/helpers.js';

for (const database of DATABASES) {
  describe(`change feed read plans (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('walking the feed and probing each conversation give the same changes, for every user and position', async () => {
      const [alice, bob, carol, dave] = newUsers(4);
      const team = await group(app, alice, [bob, carol]);
      const pair = await direct(app, alice, dave);
      await send(app, bob, team, 'one');
      await send(app, alice, pair, 'two');
      assert.equal((await app.request(alice, 'DELETE', `/groups/${team}/participants/${carol}`)).status, 204);
      await send(app, bob, team, 'three');
      assert.equal((await app.request(alice, 'POST', `/groups/${team}/participants`, { user_ids: [dave] })).status, 200);
      assert.equal((await app.request(dave, 'POST', `/conversations/${team}/read`, {})).status, 200);
      assert.equal((await app.request(dave, 'POST', '/blocks', { user_id: carol })).status, 200);
      await send(app, dave, team, 'four');

      const db = app.app.database.db;
      // Nothing commits meanwhile: every read has the same horizon.
      const read = async (user: number, from: { tx: number; seq: number }, limit: number, walkMax: number) =>
        (await readChanges(db, { userId: user, after: from, seen: null, limit }, { max: walkMax, perConversation: walkMax })).rows;
      for (const user of [alice, bob, carol, dave]) {
        const all = await read(user, { tx: 0, seq: 0 }, 1000, Number.MAX_SAFE_INTEGER);
        assert.ok(all.length > 0, `user ${user} has changes`);
        assert.deepEqual(await read(user, { tx: 0, seq: 0 }, 1000, 0), all, `user ${user}: probe = walk`);
        // From every position in the middle, and in pages of two.
        for (const [i, from] of all.entries()) {
          const walked = await read(user, from, 2, Number.MAX_SAFE_INTEGER);
          const probed = await read(user, from, 2, 0);
          assert.deepEqual(probed, walked, `user ${user} after change ${i}`);
          assert.deepEqual(walked, all.slice(i + 1, i + 3));
        }
      }

      // Reads made together (the syncs of one turn) answer each as it would be answered alone, in its own order,
      // whichever plan each takes: the same users and positions in one statement, each with its own limit.
      const reads: FeedRead[] = [];
      for (const user of [alice, bob, carol, dave, 999_999_999]) {
        const all = await read(user, { tx: 0, seq: 0 }, 1000, Number.MAX_SAFE_INTEGER);
        for (const [i, from] of [{ tx: 0, seq: 0 }, ...all].entries()) reads.push({ userId: user, after: from, seen: null, limit: 1 + (i % 3) });
      }
      for (const walkMax of [0, Number.MAX_SAFE_INTEGER]) {
        const walk = { max: walkMax, perConversation: walkMax };
        const together = await readChangesOf(db, reads, walk);
        assert.equal(together.length, reads.length);
        for (const [i, r] of reads.entries()) assert.deepEqual(together[i]!.rows, (await readChanges(db, r, walk)).rows, `read ${i} (user ${r.userId})`);
        assert.ok(together.every((page) => page.horizon === together[0]!.horizon), 'one horizon for the statement');
      }
    });
  });
}

// Reading below the horizon (store/change-feed.ts) means a transaction of the database that is still open holds
// back every change committed after it began: /sync waits a little for it (SYNC_SETTLE_MS), then answers without
// them and its cursor stays before them. They are delayed, never lost: once that transaction ends, the next sync
// from the same cursor has them, once. A transaction that ends while the sync waits lets it answer everything; one
// in another database of the same server holds nothing back.
if (DATABASES.includes('postgres')) {
  describe('change feed behind an open transaction (postgres)', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database: 'postgres' });
    });
    after(async () => {
      await app?.close();
    });

    /** Opens a transaction on url that has taken a transaction id, as a writing transaction has. */
    async function openTransaction(url: string): Promise<pg.Client> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query('begin');
      await client.query('select pg_current_xact_id()');
      return client;
    }

    test('a transaction in another database of the same server holds nothing back', async () => {
      const [alice, bob] = newUsers(2);
      const pair = await direct(app, alice, bob);
      const start = (await app.request(bob, 'GET', '/sync')).body.data.cursor as string;
      const elsewhere = new URL(app.config.databaseUrl!);
      elsewhere.pathname = '/postgres';
      const next = await openTransaction(elsewhere.toString());
      try {
        const sent = (await send(app, alice, pair, 'not held')).id as number;
        const started = Date.now();
        const page = (await app.request(bob, 'GET', `/sync?since=${start}`)).body.data;
        assert.deepEqual(page.changes.filter((c: { type: string }) => c.type === 'MessageSent').map((c: { data: { id: number } }) => c.data.id), [sent]);
        assert.ok(Date.now() - started < SYNC_SETTLE_MS, 'without waiting for it');
      } finally {
        await next.end();
      }
    });

    test('a sync waits for a transaction of the database that ends meanwhile, then has everything', async () => {
      const [alice, bob] = newUsers(2);
      const pair = await direct(app, alice, bob);
      const start = (await app.request(bob, 'GET', '/sync')).body.data.cursor as string;
      const older = await openTransaction(app.config.databaseUrl!);
      try {
        const sent = (await send(app, alice, pair, 'waited for')).id as number;
        const syncing = app.request(bob, 'GET', `/sync?since=${start}`);
        await new Promise((resolve) => setTimeout(resolve, SYNC_SETTLE_MS / 5));
        await older.query('commit');
        const page = (await syncing).body.data;
        assert.deepEqual(page.changes.filter((c: { type: string }) => c.type === 'MessageSent').map((c: { data: { id: number } }) => c.data.id), [sent]);
      } finally {
        await older.end();
      }
    });

    for (const end of ['commit', 'rollback'] as const) {
      test(`a change committed while an older transaction is open arrives once that transaction ends (${end})`, async () => {
        const [alice, bob] = newUsers(2);
        const pair = await direct(app, alice, bob);
        const start = (await app.request(bob, 'GET', '/sync')).body.data.cursor as string;

        const older = await openTransaction(app.config.databaseUrl!);
        try {
          const sent = (await send(app, alice, pair, 'held back')).id as number;

          const held = (await app.request(bob, 'GET', `/sync?since=${start}`)).body.data;
          assert.deepEqual(held.changes.filter((c: { type: string }) => c.type === 'MessageSent'), [], 'not yet: an older transaction is open');
          assert.equal(held.has_more, false);

          await older.query(end);
          const changes: { type: string; data: { id: number } }[] = [];
          for (let cursor = held.cursor, more = true; more; ) {
            const page = (await app.request(bob, 'GET', `/sync?since=${cursor}`)).body.data;
            changes.push(...page.changes);
            cursor = page.cursor;
            more = page.has_more;
          }
          assert.deepEqual(changes.filter((c) => c.type === 'MessageSent').map((c) => c.data.id), [sent], 'the message, once');
        } finally {
          await older.end();
        }
      });
    }
  });
}
