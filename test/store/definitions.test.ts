// The database functions as they run live in src/store/functions/, one file each, and are applied after the
// migrations whenever their text changes (a checksum per definition), once however many nodes start together.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { applyDefinitions, DEFINITIONS } from '../../src/store/functions/index.js';
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
  });
}
