// The database: PostgreSQL through a `pg` pool when DATABASE_URL is set, else embedded PGlite in the data
// directory. One set of migrations and queries serves both.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, sql, type Dialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { migrationProvider } from './migrations/index.js';
import { preparingPool, type PreparedStatementStats } from './prepared.js';
import type { Schema } from './schema.js';

export { isRetryableTransactionError, isStalePlanError } from './errors.js';

export type DB = Kysely<Schema>;

export interface Database {
  readonly db: DB;
  readonly kind: 'postgres' | 'pglite';
  ping(): Promise<void>;
  /** Connection pool figures (PostgreSQL only). */
  poolStats(): { total: number; idle: number; waiting: number } | null;
  /** Prepared statement figures (PostgreSQL with DATABASE_PREPARED_STATEMENTS on), else null. */
  preparedStats(): PreparedStatementStats | null;
  close(): Promise<void>;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;
// Ids are bigint columns; every id the host app uses fits a JS number, so hand them out as numbers.
const toNumber = (value: string): number => Number(value);

async function pgliteDialect(dataDir: string): Promise<Dialect> {
  const { PGlite } = await import('@electric-sql/pglite');
  const dir = join(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const client = await PGlite.create(dir, { parsers: { [INT8_OID]: toNumber, [NUMERIC_OID]: toNumber } });
  return new PGliteDialect(client);
}

export interface DatabaseOptions {
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** PostgreSQL: parameterized queries as named prepared statements (see prepared.ts). Default true. */
  readonly databasePreparedStatements?: boolean;
}

function postgresDialect(url: string, prepared: boolean) {
  const types = {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8_OID || oid === NUMERIC_OID ? toNumber : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString: url, max: 20, connectionTimeoutMillis: 5_000, types });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Nor may a dropped connection that is checked out (between the queries of a transaction, say): the pool
  // listens on idle clients only, and an 'error' event nobody listens to kills the process. The query that
  // uses it next fails (a 503), and the pool discards it on release since it is no longer queryable.
  pool.on('connect', (client) => client.on('error', () => {}));
  const preparing = prepared ? preparingPool(pool) : null;
  return { dialect: new PostgresDialect({ pool: preparing ?? pool }), pool, preparing };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const kind = options.databaseUrl ? 'postgres' : 'pglite';
  const postgres = options.databaseUrl ? postgresDialect(options.databaseUrl, options.databasePreparedStatements ?? true) : null;
  const dialect = postgres?.dialect ?? (await pgliteDialect(options.dataDir));
  const db = new Kysely<Schema>({ dialect });
  return {
    db,
    kind,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    poolStats: () =>
      postgres ? { total: postgres.pool.totalCount, idle: postgres.pool.idleCount, waiting: postgres.pool.waitingCount } : null,
    preparedStats: () => postgres?.preparing?.stats() ?? null,
    close: () => db.destroy(),
  };
}

export async function migrateToLatest(db: DB): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
