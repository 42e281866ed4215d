// Parley as a real process for a benchmark, as the multi-node tests start it (test/support/nodes.ts):
// `node --import tsx src/main.ts` with its configuration in the environment, on a fresh PostgreSQL database
// that is dropped afterwards. Rate limits are off: the benchmarks send far more than one user would.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTokenIssuer } from '../../src/http/auth.js';
import { answers, freePort, startServer, type Server } from './procs.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The PostgreSQL server the benchmarks create their databases on (the same default as the tests). */
export const ADMIN_DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const SECRETS = {
  CHAT_JWT_SECRET: 'bench-jwt-secret-of-sufficient-length',
  CHAT_SERVER_KEY: 'bench-server-key',
  BROADCAST_APP_ID: '90210',
  BROADCAST_APP_KEY: 'bench-app-key',
  BROADCAST_APP_SECRET: 'bench-app-secret',
} as const;

export interface FreshDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<FreshDatabase> {
  const name = `parley_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(ADMIN_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** PostgreSQL's version string, for the report. */
export async function postgresVersion(): Promise<string> {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('show server_version');
    return `PostgreSQL ${rows[0]!.server_version}`;
  } finally {
    await client.end();
  }
}

/** Process ids of the PostgreSQL backends connected to a database now (for CPU accounting). */
export async function backendPids(database: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database]);
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

export interface ParleyProcess extends Server {
  readonly baseUrl: string;
  readonly api: string;
  readonly wsUrl: string;
  readonly database: FreshDatabase;
  token(userId: number): Promise<string>;
  /** The PostgreSQL backends serving this Parley right now. */
  databasePids(): Promise<number[]>;
  /** JSON request with X-Chat-Server-Key. */
  server(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** JSON request as a user. */
  as(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

export async function startParley(env: Record<string, string> = {}): Promise<ParleyProcess> {
  const database = await freshDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-bench-'));
  const port = await freePort();
  let server: Server;
  try {
    // BENCH_PARLEY_NODE_ARGS: extra node options for Parley, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a run.
    const extra = (process.env.BENCH_PARLEY_NODE_ARGS ?? '').split(' ').filter(Boolean);
    server = await startServer('parley', process.execPath, [...extra, '--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      port,
      env: {
        ...SECRETS,
        HOST: '127.0.0.1',
        PORT: String(port),
        CHAT_DATA_DIR: dataDir,
        DATABASE_URL: database.url,
        REDIS_URL: '',
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        CHAT_RATE_SENDS_PER_MINUTE: '0',
        CHAT_RATE_CHANNEL_AUTHS_PER_MINUTE: '0',
        CHAT_RATE_TYPING_PER_MINUTE: '0',
        CHAT_RATE_HEARTBEATS_PER_MINUTE: '0',
        ...env,
      },
      ready: () => answers(`http://127.0.0.1:${port}/readyz`),
    });
  } catch (err) {
    await database.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = `${baseUrl}/api/chat/v1`;
  const issuer = createTokenIssuer(SECRETS.CHAT_JWT_SECRET);
  const request = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null };
  };
  return {
    ...server,
    baseUrl,
    api,
    wsUrl: `ws://127.0.0.1:${port}/app/${SECRETS.BROADCAST_APP_KEY}?protocol=7&client=js&version=8.6.0&flash=false`,
    database,
    databasePids: () => backendPids(database.name),
    token: async (userId) => (await issuer.issue(userId, { name: `User ${userId}` })).token,
    server: (method, path, body) => request(method, path, { 'x-chat-server-key': SECRETS.CHAT_SERVER_KEY }, body),
    as: (token, method, path, body) => request(method, path, { authorization: `Bearer ${token}` }, body),
    async close() {
      await server.stop();
      await database.drop().catch((err: unknown) => console.error(`dropping ${database.name} failed: ${(err as Error).message}`));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
