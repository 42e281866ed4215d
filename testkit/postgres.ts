// PostgreSQL for tests and benchmarks: a fresh database on the machine's server for each app, cluster or
// run (dropped afterwards), what the server tells about itself, and a server of a test's own (initdb in a
// temporary directory) that a fault test may stop and start again, with streaming replicas of it
// (pg_basebackup -R) for the read-replica tests.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { atExit, runProgram } from './processes.js';

/** The server databases are created on: TEST_DATABASE_URL or DATABASE_URL, else the machine's at 127.0.0.1:5432. */
export const ADMIN_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs fn with a client connected to url, closed afterwards. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface FreshDatabase {
  readonly url: string;
  readonly name: string;
  /** Drops the database, whoever is still connected to it. */
  drop(): Promise<void>;
}

/** Creates an empty database named `${prefix}_<random>` on the server of adminUrl. */
export async function freshPostgres(adminUrl: string = ADMIN_DATABASE_URL, prefix = 'parley_test'): Promise<FreshDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (admin) => admin.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: async () => void (await withClient(adminUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`))),
  };
}

/** The server's version, e.g. "PostgreSQL 16.4". */
export async function postgresVersion(adminUrl: string = ADMIN_DATABASE_URL): Promise<string> {
  const { rows } = await withClient(adminUrl, (admin) => admin.query<{ server_version: string }>('show server_version'));
  return `PostgreSQL ${rows[0]!.server_version}`;
}

/** Process ids of the backends connected to a database now (for CPU accounting). */
export async function backendPids(database: string, adminUrl: string = ADMIN_DATABASE_URL): Promise<number[]> {
  const { rows } = await withClient(adminUrl, (admin) => admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database]));
  return rows.map((r) => r.pid);
}

// -------------------------------------------------------------------------------------------------
// A PostgreSQL server of a test's own, to stop and start again

function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(base, versions[0]!, 'bin') : null;
}

export class PostgresServer {
  private readonly bin: string;
  private readonly runAs: string[];
  private forget: () => void = () => {};

  private constructor(readonly port: number, private readonly dir: string) {
    this.bin = postgresBin()!;
    // PostgreSQL refuses to run as root: as root, run its programs as the postgres user.
    this.runAs = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  }

  /** Why a dedicated PostgreSQL cannot be started here, or null when it can. */
  static unavailable(): string | null {
    if (!postgresBin()) return 'no PostgreSQL server binaries under /usr/lib/postgresql';
    if (process.getuid?.() === 0 && spawnSync('id', ['postgres']).status !== 0) return 'running as root without a postgres user';
    return null;
  }

  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** A new server of its own: initdb, then started. */
  static async start(): Promise<PostgresServer> {
    const server = await PostgresServer.prepare();
    await server.run('initdb', ['-D', join(server.dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'], 60_000);
    await server.start();
    return server;
  }

  /**
   * A streaming replica of this server (hot standby), started: pg_basebackup -R copies the data directory and
   * writes the standby's connection to this one (primary_conninfo, standby.signal). initdb's defaults allow it:
   * wal_level replica, 10 WAL senders, trust for replication connections from 127.0.0.1.
   */
  async startReplica(): Promise<PostgresServer> {
    const replica = await PostgresServer.prepare();
    const data = join(replica.dir, 'data');
    rmSync(data, { recursive: true }); // pg_basebackup creates it (as the user it runs as)
    await replica.run('pg_basebackup', ['-D', data, '-R', '-X', 'stream', '-c', 'fast', '-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '--no-sync'], 60_000);
    await replica.start();
    return replica;
  }

  /** A temporary directory (owned by the postgres user when we are root) on a free port, nothing started yet. */
  private static async prepare(): Promise<PostgresServer> {
    const dir = mkdtempSync(join(tmpdir(), 'parley-pg-'));
    const server = new PostgresServer(await freePort(), dir);
    mkdirSync(join(dir, 'data'));
    mkdirSync(join(dir, 'socket'));
    if (process.getuid?.() === 0) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      for (const path of [dir, join(dir, 'data'), join(dir, 'socket')]) chownSync(path, uid, gid);
      chmodSync(dir, 0o755);
    }
    server.forget = atExit(server.stopNow);
    return server;
  }

  /** Runs one of PostgreSQL's programs (as the postgres user when we are root), without blocking the event loop. */
  private run(program: string, args: string[], timeoutMs: number): Promise<void> {
    const [command, ...rest] = [...this.runAs, join(this.bin, program), ...args];
    return runProgram(command!, rest, timeoutMs);
  }

  /** pg_ctl start, waiting until it accepts connections. */
  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${join(this.dir, 'socket')} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
    await this.run('pg_ctl', ['start', '-w', '-t', '30', '-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-o', options], 40_000);
  }

  /** pg_ctl stop: fast (connections terminated, clean shutdown) or immediate (as in a crash). */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.run('pg_ctl', ['stop', '-w', '-t', '30', '-m', mode, '-D', join(this.dir, 'data')], 40_000);
  }

  /** Stops the server if it runs (immediately, blocking: it also runs at exit) and removes its directory. Never throws. */
  private readonly stopNow = (): void => {
    const [command, ...rest] = [...this.runAs, join(this.bin, 'pg_ctl'), 'stop', '-w', '-t', '10', '-m', 'immediate', '-D', join(this.dir, 'data')];
    spawnSync(command!, rest, { stdio: 'ignore', timeout: 20_000 });
    rmSync(this.dir, { recursive: true, force: true });
  };

  async destroy(): Promise<void> {
    this.forget();
    this.stopNow();
  }
}
