// The database: PostgreSQL through a `pg` pool when DATABASE_URL is set, else embedded PGlite in the data
// directory. One set of migrations and queries serves both.
import { spawnSync } from 'node:child_process';
import fs, { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, Migrator, PostgresDialect, sql, type Dialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { applyDefinitions } from './functions/index.js';
import { migrationProvider } from './migrations/index.js';
import { copyOutFrom, type CopyOut } from './copy-out.js';
import { preparingPool, type PreparedStatementStats } from './prepared.js';
import type { Schema } from './schema.js';

export { isRetryableTransactionError, isStalePlanError } from './retryable-errors.js';

export type DB = Kysely<Schema>;

export interface Database {
  readonly db: DB;
  readonly kind: 'postgres' | 'pglite';
  ping(): Promise<void>;
  /** Connection pool figures (PostgreSQL only). */
  poolStats(): { total: number; idle: number; waiting: number } | null;
  /** Prepared statement figures (PostgreSQL with DATABASE_PREPARED_STATEMENTS on), else null. */
  preparedStats(): PreparedStatementStats | null;
  /** PostgreSQL: the output of a COPY ... TO STDOUT as it arrives (copy-out.ts); null on the embedded database. */
  readonly copyOut: CopyOut | null;
  close(): Promise<void>;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;
// Ids are bigint columns; every id the host app uses fits a JS number, so hand them out as numbers.
const toNumber = (value: string): number => Number(value);

// Durability of the embedded database. PGlite's NODEFS writes every page straight to the file (fs.writeSync: a
// killed process loses nothing), but never makes it reach the disk: PGlite starts PostgreSQL with fsync off (-F),
// Emscripten's fdatasync is a no-op and NODEFS has no fsync, so a power cut could lose acknowledged commits or
// leave a torn database. (PGlite's relaxedDurability and syncToFs are about IndexedDB, not NODEFS.) So:
// PostgreSQL runs with fsync on and wal_sync_method=fsync, and NODEFS gains an fsync that syncs the real file:
// every commit then waits for its WAL to be on disk (one sync per transaction, so per batch of sends), and
// checkpoints and crash recovery sync the data files, as PostgreSQL does on a real disk.

/** The PostgreSQL options of the embedded database: PGlite's defaults with fsync on (see above). */
async function durableStartParams(): Promise<string[]> {
  const { PGlite } = await import('@electric-sql/pglite');
  return [...PGlite.defaultStartParams.filter((p) => p !== '-F'), '-c', 'fsync=on', '-c', 'wal_sync_method=fsync'];
}

interface EmscriptenStream {
  nfd?: number;
  node: unknown;
}
interface EmscriptenNodeFs {
  stream_ops?: { fsync?: (stream: EmscriptenStream) => number };
  realPath?: (node: unknown) => string;
  tryFSOperation?: <T>(f: () => T) => T;
}

/** Gives Emscripten's NODEFS an fsync that reaches the disk: fdatasync of the file, or fsync of a directory. */
function makeNodeFsSync(nodefs: EmscriptenNodeFs | undefined): void {
  const ops = nodefs?.stream_ops;
  const realPath = nodefs?.realPath;
  if (!ops || !realPath) throw new Error('this PGlite version has no NODEFS stream operations to make durable');
  const attempt = nodefs.tryFSOperation?.bind(nodefs) ?? (<T>(f: () => T) => f());
  ops.fsync = (stream) => {
    attempt(() => {
      if (typeof stream.nfd === 'number') {
        fs.fdatasyncSync(stream.nfd); // the data and the size; PostgreSQL needs no more of a file
      } else {
        // A directory (PostgreSQL syncs one after creating or renaming a file in it): NODEFS keeps no descriptor.
        const fd = fs.openSync(realPath(stream.node), 'r');
        try {
          fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
      }
    });
    return 0;
  };
}

/**
 * Everything under dir on disk (initdb's --sync, which PGlite's initdb skips): one syncfs of its filesystem
 * (`sync -f`, 0.1 s for a new database here) where coreutils or BusyBox has it, else an fsync per file (1 s).
 */
function syncTree(dir: string): void {
  if (spawnSync('sync', ['-f', dir], { stdio: 'ignore', timeout: 60_000 }).status === 0) return;
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(path, entry.name));
      else if (entry.isFile()) syncPath(join(path, entry.name));
    }
    syncPath(path);
  };
  walk(dir);
}

function syncPath(path: string): void {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function openPglite(dataDir: string): Promise<{ dialect: Dialect; close: () => Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { NodeFS } = await import('@electric-sql/pglite/nodefs');
  const dir = join(dataDir, 'pglite');
  mkdirSync(dir, { recursive: true });
  const fresh = !existsSync(join(dir, 'PG_VERSION'));

  class DurableNodeFS extends NodeFS {
    override async init(pg: Parameters<InstanceType<typeof NodeFS>['init']>[0], opts: Parameters<InstanceType<typeof NodeFS>['init']>[1]) {
      const result = await super.init(pg, opts);
      // After NodeFS's own preRun has mounted the directory, before PostgreSQL opens a file.
      const preRun = [...(result.emscriptenOpts.preRun ?? [])];
      preRun.push((mod) => makeNodeFsSync((mod.FS as unknown as { filesystems: { NODEFS?: EmscriptenNodeFs } }).filesystems.NODEFS));
      return { emscriptenOpts: { ...result.emscriptenOpts, preRun } };
    }
  }

  const client = await PGlite.create({
    fs: new DurableNodeFS(dir),
    startParams: await durableStartParams(),
    parsers: { [INT8_OID]: toNumber, [NUMERIC_OID]: toNumber },
  });
  try {
    const settings = await client.query<{ name: string; setting: string }>(
      `select name, setting from pg_settings where name in ('fsync', 'wal_sync_method', 'synchronous_commit')`,
    );
    const setting = Object.fromEntries(settings.rows.map((r) => [r.name, r.setting]));
    if (setting.fsync !== 'on' || setting.wal_sync_method !== 'fsync' || setting.synchronous_commit !== 'on') {
      throw new Error(`the embedded database did not start durable (${JSON.stringify(setting)})`);
    }
    // A new database was copied in by PGlite's initdb without a sync: make it whole on disk once.
    if (fresh) syncTree(dir);
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  // Kysely closes the client only if it ever ran a query: close it here too, so the process can exit.
  return { dialect: new PGliteDialect(client), close: async () => (client.closed ? undefined : client.close()) };
}

export interface DatabaseOptions {
  readonly databaseUrl: string | null;
  readonly dataDir: string;
  /** PostgreSQL: parameterized queries as named prepared statements (see prepared.ts). Default true. */
  readonly databasePreparedStatements?: boolean;
  /** Hears what the embedded database warns about at opening (a data directory lock held by pid only). */
  readonly onWarning?: (message: string) => void;
}

/** A pool on url (20 connections unless poolConfig says otherwise) and its Kysely dialect; also the read replicas' (read-replicas.ts). */
export function postgresDialect(url: string, prepared: boolean, poolConfig: Partial<pg.PoolConfig> = {}) {
  const types = {
    getTypeParser: ((oid: number, format?: string) =>
      oid === INT8_OID || oid === NUMERIC_OID ? toNumber : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
  };
  const pool = new pg.Pool({ connectionString: url, max: 20, connectionTimeoutMillis: 5_000, ...poolConfig, types });
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
  // The embedded database is one process's: a second process on the directory stops here (data-dir-lock.ts).
  let lock: DataDirLock | null = null;
  let closePglite = async (): Promise<void> => {};
  let dialect: Dialect;
  if (postgres) {
    dialect = postgres.dialect;
  } else {
    lock = lockDataDir(options.dataDir, options.onWarning);
    try {
      ({ dialect, close: closePglite } = await openPglite(options.dataDir));
    } catch (err) {
      lock.release();
      throw err;
    }
  }
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
    copyOut: postgres ? copyOutFrom(postgres.pool, db) : null,
    async close() {
      try {
        await db.destroy();
        await closePglite();
      } finally {
        lock?.release();
      }
    },
  };
}

/** The versioned migrations not yet run, then the database functions whose definitions changed (store/functions). */
export async function migrateToLatest(db: DB): Promise<string[]> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  const migrated = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  const defined = await applyDefinitions(db as unknown as Kysely<unknown>);
  return [...migrated, ...defined.map((name) => `function ${name}`)];
}
