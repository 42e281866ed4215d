// Prepared statements on a real PostgreSQL (a fresh database per test): what is prepared, that results are
// those of unnamed statements, the stale plan after another node's ALTER TABLE, the per-connection cap, and
// DATABASE_PREPARED_STATEMENTS=0.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { isRetryableTransactionError, isStalePlanError, openDatabase } from '../../src/store/database.js';
import { preparingPool, type PreparingPool } from '../../src/store/prepared.js';
import { freshPostgres } from '../support/app.js';
import { SECRETS } from '../../testkit/secrets.js';

interface T {
  t: { id: number; name: string; extra?: string };
}

interface Setup {
  db: Kysely<T>;
  plain: Kysely<T>;
  pool: pg.Pool;
  preparing: PreparingPool;
  url: string;
  close(): Promise<void>;
}

/**
 * pg-pool's end() resolves before its connections have closed, so dropping the database right after can
 * terminate one still closing: its error must not be an uncaught exception (src/store/database.ts does the same).
 */
function quiet(pool: pg.Pool): pg.Pool {
  pool.on('error', () => {});
  return pool;
}

async function setup(options: { max?: number; maxPerConnection?: number } = {}): Promise<Setup> {
  const database = await freshPostgres();
  const pool = quiet(new pg.Pool({ connectionString: database.url, max: options.max ?? 1 }));
  const preparing = preparingPool(pool, { maxPerConnection: options.maxPerConnection });
  const db = new Kysely<T>({ dialect: new PostgresDialect({ pool: preparing }) });
  const plain = new Kysely<T>({ dialect: new PostgresDialect({ pool: quiet(new pg.Pool({ connectionString: database.url, max: 1 })) }) });
  await sql`create table t (id int primary key, name text not null)`.execute(plain);
  await sql`insert into t (id, name) select i, 'name ' || i from generate_series(1, 20) as i`.execute(plain);
  return {
    db,
    plain,
    pool,
    preparing,
    url: database.url,
    async close() {
      await db.destroy();
      await plain.destroy();
      await database.drop();
    },
  };
}

type Conn = Kysely<T> | Transaction<T>;

async function prepared(conn: Conn): Promise<{ name: string; statement: string; executions: number }[]> {
  const { rows } = await sql<{ name: string; statement: string; executions: number }>`
    select name, statement, (generic_plans + custom_plans)::int as executions from pg_prepared_statements order by name`.execute(conn);
  return rows;
}

async function backendPid(conn: Conn): Promise<number> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
  return rows[0]!.pid;
}

/** Another node: its own connection, its own DDL. */
async function alterFromElsewhere(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe('prepared statements on PostgreSQL', () => {
  let s: Setup;
  before(async () => {
    s = await setup();
  });
  after(async () => {
    await s.close();
  });

  test('a parameterized query is prepared once per connection, under a name from its text, and reused', async () => {
    await s.db.connection().execute(async (conn) => {
      const query = (id: number) => conn.selectFrom('t').select(['id', 'name']).where('id', '=', id);
      for (let id = 1; id <= 10; id++) assert.deepEqual(await query(id).execute(), [{ id, name: `name ${id}` }]);
      const text = query(1).compile().sql;
      const statements = await prepared(conn);
      const mine = statements.filter((p) => p.statement === text);
      assert.equal(mine.length, 1, JSON.stringify(statements));
      assert.match(mine[0]!.name, /^p_[0-9a-f]{16}$/);
      assert.equal(mine[0]!.executions, 10);
    });
  });

  test('results equal those of unnamed statements (rows, types, affected counts, no rows)', async () => {
    const queries = (db: Kysely<T>) => [
      db.selectFrom('t').selectAll().where('id', 'in', [3, 5, 7]).orderBy('id'),
      db.selectFrom('t').select((eb) => [eb.fn.countAll().as('n'), eb.fn.max('id').as('top')]).where('name', 'like', 'name 1%'),
      db.selectFrom('t').selectAll().where('id', '>', 1000),
      db.selectFrom('t').select(sql<Date>`${new Date('2024-05-06T07:08:09.123Z')}::timestamptz`.as('at')).where('id', '=', 1),
    ];
    for (const [i, query] of queries(s.db).entries()) {
      for (let round = 0; round < 2; round++) assert.deepEqual(await query.execute(), await queries(s.plain)[i]!.execute(), query.compile().sql);
    }
    const update = await s.db.updateTable('t').set({ name: 'renamed' }).where('id', '<=', 4).executeTakeFirst();
    assert.equal(update.numUpdatedRows, 4n);
    const insert = await s.db.insertInto('t').values([{ id: 101, name: 'a' }, { id: 102, name: 'b' }]).executeTakeFirst();
    assert.equal(insert.numInsertedOrUpdatedRows, 2n);
    const removed = await s.db.deleteFrom('t').where('id', '>', 100).executeTakeFirst();
    assert.equal(removed.numDeletedRows, 2n);
  });

  test('statements without parameters and transaction control are not named', async () => {
    await s.db.connection().execute(async (conn) => {
      await sql`select count(*) from t`.execute(conn);
      const trx = await conn.startTransaction().execute();
      const inner = await trx.savepoint('sp').execute();
      await inner.selectFrom('t').select('id').where('id', '=', 2).execute();
      await inner.releaseSavepoint('sp').execute();
      await trx.commit().execute();
      const statements = await prepared(conn);
      assert.ok(statements.length > 0);
      for (const p of statements) {
        assert.match(p.statement, /\$1/, `only parameterized statements: ${p.statement}`);
        assert.doesNotMatch(p.statement, /^\s*(begin|commit|rollback|savepoint|release)/i);
      }
    });
  });
});

describe('a stale plan: another node altered a table a prepared `select *` reads', () => {
  test('outside a transaction the query succeeds (run again unnamed), and the connection is replaced', async () => {
    const s = await setup();
    try {
      const query = () => s.db.selectFrom('t').selectAll().where('id', '=', 1);
      assert.deepEqual(await query().execute(), [{ id: 1, name: 'name 1' }]);
      const pid = await backendPid(s.db);
      await alterFromElsewhere(s.url, `alter table t add column extra text not null default 'x'`);
      assert.deepEqual(await query().execute(), [{ id: 1, name: 'name 1', extra: 'x' }]);
      assert.equal(s.preparing.stats().stalePlans, 1);
      // The connection that held the stale statement is gone; the next one prepares afresh.
      assert.notEqual(await backendPid(s.db), pid);
      assert.deepEqual(await query().execute(), [{ id: 1, name: 'name 1', extra: 'x' }]);
      assert.deepEqual(await query().execute(), [{ id: 1, name: 'name 1', extra: 'x' }]);
      assert.equal(s.preparing.stats().stalePlans, 1);
    } finally {
      await s.close();
    }
  });

  test('inside a transaction the error is retryable, and the transaction run again succeeds', async () => {
    const s = await setup({ max: 3 });
    try {
      const read = (db: Conn) => db.selectFrom('t').selectAll().where('id', '=', 2).execute();
      // Prepare it on all three connections of the pool.
      await Promise.all([1, 2, 3].map(() => s.db.connection().execute(async (conn) => {
        await read(conn);
        await new Promise((resolve) => setTimeout(resolve, 50));
      })));
      assert.equal(s.pool.totalCount, 3);
      await alterFromElsewhere(s.url, `alter table t add column extra text not null default 'y'`);

      const err = await s.db.transaction().execute(read).then(() => null, (e: unknown) => e);
      assert.ok(err, 'the first run fails');
      assert.ok(isStalePlanError(err), String(err));
      assert.ok(isRetryableTransactionError(err));
      // Run again, as a transaction runner does: on a connection prepared after the stale plan was met.
      assert.deepEqual(await s.db.transaction().execute(read), [{ id: 2, name: 'name 2', extra: 'y' }]);
      const stats = s.preparing.stats();
      assert.equal(stats.stalePlans, 1);
      assert.ok(stats.discarded >= 2, JSON.stringify(stats));
    } finally {
      await s.close();
    }
  });

  test('which errors are retryable', () => {
    assert.ok(isRetryableTransactionError({ code: '40001' }));
    assert.ok(isRetryableTransactionError({ code: '40P01' }));
    assert.ok(isRetryableTransactionError({ code: '0A000', routine: 'RevalidateCachedQuery', message: 'localized' }));
    assert.ok(!isRetryableTransactionError({ code: '0A000', message: 'some other feature is not supported' }));
    assert.ok(!isRetryableTransactionError({ code: '23505' }));
    assert.ok(!isRetryableTransactionError(new Error('x')));
    assert.ok(!isRetryableTransactionError(null));
  });
});

describe('statements the connection lost', () => {
  test('a statement deallocated behind pg’s back (26000) is run again unnamed, and the connection replaced', async () => {
    const s = await setup();
    try {
      const query = (conn: Conn, id: number) => conn.selectFrom('t').select('name').where('id', '=', id).execute();
      const pid = await s.db.connection().execute(async (conn) => {
        assert.deepEqual(await query(conn, 1), [{ name: 'name 1' }]);
        await sql`deallocate all`.execute(conn);
        assert.deepEqual(await query(conn, 2), [{ name: 'name 2' }]);
        assert.deepEqual(await query(conn, 3), [{ name: 'name 3' }]);
        return backendPid(conn);
      });
      assert.notEqual(await backendPid(s.db), pid);
      assert.deepEqual(await query(s.db, 4), [{ name: 'name 4' }]);
    } finally {
      await s.close();
    }
  });

  test('a parameter pg cannot serialize does not leave the statement broken (pg closes it on the server)', async () => {
    const s = await setup();
    try {
      const query = (name: unknown) => s.db.selectFrom('t').select('id').where('name', '=', name as string).execute();
      assert.deepEqual(await query('name 1'), [{ id: 1 }]);
      const unserializable = { toPostgres: () => { throw new Error('cannot serialize'); } };
      await assert.rejects(query(unserializable), /cannot serialize/);
      assert.deepEqual(await query('name 2'), [{ id: 2 }]);
      assert.deepEqual(await query('name 3'), [{ id: 3 }]);
      assert.equal(s.preparing.stats().discarded, 1);
    } finally {
      await s.close();
    }
  });
});

describe('the cap of named statements per connection', () => {
  test('statements beyond it run unnamed, with the same results', async () => {
    const s = await setup({ maxPerConnection: 3 });
    try {
      await s.db.connection().execute(async (conn) => {
        // `in (...)` lists of 1 to 6 ids: six texts.
        for (let round = 0; round < 2; round++) {
          for (let n = 1; n <= 6; n++) {
            const ids = Array.from({ length: n }, (_, i) => i + 1);
            const rows = await conn.selectFrom('t').select('id').where('id', 'in', ids).orderBy('id').execute();
            assert.deepEqual(rows.map((r) => r.id), ids);
          }
        }
        assert.equal((await prepared(conn)).length, 3);
      });
      assert.deepEqual(s.preparing.stats(), { named: 6, overCap: 6, stalePlans: 0, discarded: 0 });
    } finally {
      await s.close();
    }
  });
});

describe('openDatabase and DATABASE_PREPARED_STATEMENTS', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-prepared-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  async function statementsAfterQueries(preparedStatements: boolean | undefined): Promise<string[]> {
    const database = await freshPostgres();
    const opened = await openDatabase({ databaseUrl: database.url, dataDir, databasePreparedStatements: preparedStatements });
    try {
      return await opened.db.connection().execute(async (conn) => {
        for (let i = 0; i < 3; i++) await conn.selectFrom('pg_database' as never).select(sql`datname`.as('d')).where(sql`datname`, '=', 'postgres').execute();
        const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(conn);
        return rows.map((r) => r.statement);
      });
    } finally {
      await opened.close();
      await database.drop();
    }
  }

  test('on by default', async () => {
    assert.equal((await statementsAfterQueries(undefined)).length, 1);
  });

  test('off: nothing is prepared', async () => {
    assert.deepEqual(await statementsAfterQueries(false), []);
  });

  test('the setting', () => {
    const env = {
      CHAT_DATA_DIR: dataDir,
      ...SECRETS,
    };
    assert.equal(loadConfig(env).databasePreparedStatements, true);
    for (const off of ['0', 'false', 'off', 'OFF', 'no']) assert.equal(loadConfig({ ...env, DATABASE_PREPARED_STATEMENTS: off }).databasePreparedStatements, false);
    for (const on of ['1', 'true', 'on', 'yes']) assert.equal(loadConfig({ ...env, DATABASE_PREPARED_STATEMENTS: on }).databasePreparedStatements, true);
    assert.throws(() => loadConfig({ ...env, DATABASE_PREPARED_STATEMENTS: 'sometimes' }), ConfigError);
  });
});
