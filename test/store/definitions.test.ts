// The database functions as they run live in src/store/functions/, one file each, and are applied after the
// migrations whenever their text changes (a checksum per definition), once however many nodes start together.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { applyDefinitions, DEFINITIONS } from '../../src/store/functions/index.js';
import type { DB } from '../../src/store/database.js';
import { feedHorizon } from '../../src/store/change-feed.js';
import { lastMessagesAsSeen } from '../../src/store/own-state.js';
import { loadMessages, loadPreviews } from '../../src/store/read-model.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';

for (const database of DATABASES) {
  describe(`repeatable definitions (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const db = () => app.app.database.db as unknown as Kysely<unknown>;

    test('after start every definition is applied and recorded; a second pass applies nothing', async () => {
      const { rows } = await sql<{ name: string }>`select name from parley_definitions order by name`.execute(db());
      assert.deepEqual(rows.map((r) => r.name), DEFINITIONS.map((d) => d.name).sort());
      assert.deepEqual(await applyDefinitions(db()), []);
    });

    test('a definition whose text changed (here: its recorded checksum) is applied again, and the function is the file’s', async () => {
      await sql`drop function parley_send(jsonb, timestamptz, jsonb)`.execute(db());
      await sql`update parley_definitions set checksum = 'stale' where name = 'parley_send'`.execute(db());
      assert.deepEqual(await applyDefinitions(db()), ['parley_send']);
      const { rows } = await sql<{ source: string }>`select prosrc as source from pg_proc where proname = 'parley_send'`.execute(db());
      const file = DEFINITIONS.find((d) => d.name === 'parley_send')!.sql;
      assert.ok(file.includes(rows[0]!.source), 'the body in the database is the body in src/store/functions/send.ts');
    });

    test('nodes applying at once apply each changed definition once', { skip: database === 'pglite' ? 'one connection' : false }, async () => {
      await sql`update parley_definitions set checksum = 'stale'`.execute(db());
      const results = await Promise.all([applyDefinitions(db()), applyDefinitions(db()), applyDefinitions(db())]);
      assert.deepEqual(results.flat().sort(), DEFINITIONS.map((d) => d.name).sort());
    });

    // PostgreSQL compiles a statement whose estimated cost passes jit_above_cost; the send's estimate passes it as soon as
    // the tables grow (a group of 10,000 on a table of 10,000 users did), and the compilation took 300 ms of each send.
    test('the send runs its statements without JIT compilation, however costly they look to the planner', { skip: database === 'pglite' ? 'no JIT in PGlite' : false }, async () => {
      for (const user of [2, 3]) await app.request(user, 'GET', '/conversations'); // known to the service
      const owner = await app.request(1, 'POST', '/groups', { name: 'JIT', user_ids: [2, 3] });
      assert.equal(owner.status, 201);
      const conversationId = (owner.body as { data: { id: number } }).data.id;
      const client = new pg.Client({ connectionString: app.config.databaseUrl! });
      await client.connect();
      try {
        const { rows } = await client.query<{ available: boolean }>('select pg_jit_available() as available');
        if (!rows[0]!.available) return void assert.ok(true, 'this PostgreSQL has no JIT: nothing to compile');
        // auto_explain hands each nested statement's plan to this client; with every cost above the thresholds, a
        // statement that may be compiled is, and its plan says so ("JIT:").
        const plans: string[] = [];
        client.on('notice', (n) => plans.push(n.message ?? ''));
        for (const setting of ["load 'auto_explain'", 'set auto_explain.log_min_duration = 0', 'set auto_explain.log_nested_statements = on',
          'set client_min_messages = log', 'set jit = on', 'set jit_above_cost = 0', 'set jit_optimize_above_cost = 0']) await client.query(setting);
        await client.query(`select parley_send($1::jsonb, now(), '{}'::jsonb)`, [JSON.stringify([{ ord: 0, conversation_id: conversationId, sender_id: 1, body: 'compiled?' }])]);
        await client.query('select 1 from users where id = $1', [1]);
        const nested = plans.filter((p) => p.includes('with req as'));
        assert.equal(nested.length, 1, 'auto_explain reported the send\'s statement');
        assert.doesNotMatch(nested[0]!, /JIT:/);
        assert.match(plans.at(-1)!, /JIT:/, 'a statement outside the send is compiled under these settings');
      } finally {
        await client.end();
      }
    });

    // A statement over a list of ids is one text whatever the list's length. With unnest of the parameter, each call's
    // own plan (for a list of known length) looked cheaper than the shared one (for 100 ids), so every call was planned
    // again: 0.8 ms of planning to read one message. Through parley_ids the shared plan is kept after PostgreSQL's
    // five trial plans.
    test('the statements hydrating messages, previews and what a user cleared keep one plan on a connection instead of being planned on every call', { skip: database === 'pglite' ? 'PGlite has no pg_prepared_statements plan counts' : false }, async () => {
      for (const user of [2, 3]) await app.request(user, 'GET', '/conversations');
      const group = await app.request(1, 'POST', '/groups', { name: 'Plans', user_ids: [2, 3] });
      const conversationId = (group.body as { data: { id: number } }).data.id;
      const sent = await app.request(1, 'POST', `/conversations/${conversationId}/messages`, { body: 'planned once' });
      const messageId = (sent.body as { data: { id: number } }).data.id;
      // Tables of some size, their statistics gathered: on a handful of rows every plan costs the same.
      await sql`insert into users (id, name, created_at, updated_at) select 1000 + g, 'Filler ' || g, now(), now() from generate_series(1, 5000) g`.execute(db());
      await sql`insert into messages (conversation_id, sender_id, body, created_at) select ${conversationId}, 1, 'filler ' || g, now() from generate_series(1, 5000) g`.execute(db());
      await sql`analyze users, messages, participants`.execute(db());
      const CALLS = 12;
      const plans = await (app.app.database.db as DB).transaction().execute(async (trx) => {
        for (let i = 0; i < CALLS; i++) {
          assert.equal((await loadMessages(trx, [messageId])).get(messageId)?.body, 'planned once');
          assert.deepEqual((await loadPreviews(trx, [conversationId])).get(conversationId)?.map((p) => p.id), [1, 2, 3]);
          assert.equal((await lastMessagesAsSeen(trx, [[2, conversationId]], new Map([[conversationId, messageId]]))).size, 0, 'nothing cleared or hidden');
        }
        return (await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
          select statement, generic_plans::int, custom_plans::int from pg_prepared_statements`.execute(trx)).rows;
      });
      for (const [what, marker] of [['loadMessages', 'with page (id, n)'], ['loadPreviews', 'parley_participants_preview'], ['lastMessagesAsSeen', 'cleared_message_id >= l.last_id']] as const) {
        const plan = plans.find((p) => p.statement.includes(marker));
        assert.ok(plan, `${what}'s statement was prepared`);
        assert.ok(plan.custom_plans <= 5 && plan.generic_plans >= CALLS - 5, `${what}: ${plan.custom_plans} plans of its own, ${plan.generic_plans} uses of the shared plan in ${CALLS} calls`);
      }
    });

    // The preview reads each conversation's first ten participants in preview order from migration 017's index: the
    // rows of migration 002's parley_previews (which ranked them all), for any size of group.
    test('parley_participants_preview answers what parley_previews did: owners, admins, then members by seniority, ten at most', async () => {
      const ids = Array.from({ length: 14 }, (_, i) => 200 + i);
      for (const user of ids) await app.request(user, 'GET', '/conversations');
      const group = await app.request(200, 'POST', '/groups', { name: 'Order', user_ids: ids.slice(1) });
      const big = (group.body as { data: { id: number } }).data.id;
      // Admins named out of join order, and two members who joined at the same moment (then by user id).
      for (const admin of [210, 203]) assert.ok((await app.request(200, 'PATCH', `/groups/${big}/participants/${admin}`, { role: 'admin' })).status < 300);
      await sql`update participants set joined_at = (select joined_at from participants where conversation_id = ${big} and user_id = 205) where conversation_id = ${big} and user_id = 204`.execute(db());
      const direct = await app.request(201, 'POST', '/conversations', { user_id: 202 });
      const pair = (direct.body as { data: { id: number } }).data.id;
      const conversations = `{${[big, pair, 999_999].join(',')}}`;
      const before = await sql<Record<string, unknown>>`select * from parley_previews(${conversations}::bigint[])`.execute(db());
      const after = await sql<Record<string, unknown>>`select * from parley_participants_preview(${conversations}::bigint[])`.execute(db());
      assert.deepEqual(after.rows, before.rows);
      assert.deepEqual(after.rows.filter((r) => Number(r.conversation_id) === big).map((r) => [Number(r.id), r.role]).slice(0, 4), [[200, 'owner'], [203, 'admin'], [210, 'admin'], [201, 'member']]);
      assert.equal(after.rows.filter((r) => Number(r.conversation_id) === big).length, 10);
    });

    // A shared plan made while most participants were one large group expected its thousands of rows for every
    // conversation: with the lateral read of ten in index order, the shared plan reads ten, whatever the group.
    test('the preview\'s shared plan reads ten participants in index order, also after a large group', { skip: database === 'pglite' ? 'plan shapes are PostgreSQL\'s' : false }, async () => {
      await sql`insert into users (id, name, created_at, updated_at) select 20000 + g, 'Member ' || g, now(), now() from generate_series(1, 3000) g on conflict do nothing`.execute(db());
      await sql`insert into conversations (id, type, name, participant_count) values (900001, 'group', 'Large', 3000)`.execute(db());
      await sql`insert into participants (conversation_id, user_id) select 900001, 20000 + g from generate_series(1, 3000) g`.execute(db());
      await sql`analyze participants, users`.execute(db());
      const client = new pg.Client({ connectionString: app.config.databaseUrl! });
      await client.connect();
      try {
        await client.query('prepare previews(bigint[]) as select * from parley_participants_preview($1)');
        await client.query('set plan_cache_mode = force_generic_plan');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain execute previews('{900001}')`);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        // Ten read in index order under a Limit; only the (at most ten per conversation) rows are sorted above it.
        assert.match(plan, /Limit[^\n]*\n[^\n]*Nested Loop[^\n]*\n[^\n]*Index Scan using participants_preview_order on participants/);
        assert.doesNotMatch(plan, /Seq Scan on participants|Bitmap Heap Scan on participants/);
        const large = await client.query(`execute previews('{900001}')`);
        assert.deepEqual(large.rows.map((r: { id: string }) => Number(r.id)), Array.from({ length: 10 }, (_, i) => 20001 + i));
      } finally {
        await client.end();
      }
    });

    test('the feed horizon is the calling statement\'s: its snapshot, and the oldest transaction running in this database', { skip: database === 'pglite' ? 'one connection' : false }, async () => {
      const { rows } = await sql<{ same: boolean; end_same: boolean }>`
        select h0.snapshot = pg_current_snapshot()::text as same, h0.xmax = pg_snapshot_xmax(pg_current_snapshot())::text::bigint as end_same
        from parley_feed_horizon() h0`.execute(db());
      assert.deepEqual(rows[0], { same: true, end_same: true });
      const running = new pg.Client({ connectionString: app.config.databaseUrl! });
      await running.connect();
      try {
        await running.query('begin');
        const xid = Number((await running.query<{ xid: string }>('select pg_current_xact_id()::text as xid')).rows[0]!.xid);
        const { horizon } = await feedHorizon(app.app.database.db as DB);
        assert.equal(horizon, xid, 'held back by the transaction still running');
        await running.query('commit');
        assert.ok((await feedHorizon(app.app.database.db as DB)).horizon > xid, 'past it once it ended');
      } finally {
        await running.end();
      }
    });
  });
}
