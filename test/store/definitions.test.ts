// The database functions as they run live in src/store/functions/, one file each, and are applied after the
// migrations whenever their text changes (a checksum per definition), once however many nodes start together.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { applyDefinitions, DEFINITIONS } from '../../src/store/functions/index.js';
import type { DB } from '../../src/store/database.js';
import { loadMessages } from '../../src/store/read-model.js';
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
    test('the statement hydrating messages by id keeps one plan on a connection instead of being planned on every call', { skip: database === 'pglite' ? 'PGlite has no pg_prepared_statements plan counts' : false }, async () => {
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
        }
        return (await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
          select statement, generic_plans::int, custom_plans::int from pg_prepared_statements`.execute(trx)).rows;
      });
      for (const [what, marker] of [['loadMessages', 'with page (id, n)']] as const) {
        const plan = plans.find((p) => p.statement.includes(marker));
        assert.ok(plan, `${what}'s statement was prepared`);
        assert.ok(plan.custom_plans <= 5 && plan.generic_plans >= CALLS - 5, `${what}: ${plan.custom_plans} plans of its own, ${plan.generic_plans} uses of the shared plan in ${CALLS} calls`);
      }
    });
  });
}
