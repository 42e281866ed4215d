// The servers a benchmark can point its clients at, each started as a process of its own (testkit/): Parley
// (on a fresh PostgreSQL database, or on the embedded default), the bare `ws` broadcast server in
// bench/servers, and Soketi 1.6.1 when `npm run bench:install-soketi` installed it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { answers } from '../../testkit/http.js';
import { ParleyNode } from '../../testkit/parley-node.js';
import { freePort } from '../../testkit/ports.js';
import { ADMIN_DATABASE_URL, backendPids, freshPostgres, type FreshDatabase } from '../../testkit/postgres.js';
import { ServerProcess } from '../../testkit/processes.js';
import { pusherWsUrl } from '../../testkit/pusher.js';
import { ROOT } from '../../testkit/root.js';
import { SECRETS } from '../../testkit/secrets.js';

/** The PostgreSQL server the benchmarks create their databases on: BENCH_DATABASE_URL, else the tests' one. */
export const BENCH_ADMIN_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? ADMIN_DATABASE_URL;

export interface Target {
  readonly name: string;
  readonly parley: boolean;
  readonly port: number;
  readonly pid: number;
  /** The Pusher-protocol WebSocket URL clients connect to. */
  readonly wsUrl: string;
  readonly appId: string;
  readonly key: string;
  readonly secret: string;
  /** Set for Parley: the node, its HTTP API and helpers. */
  readonly node?: ParleyNode;
  /** Set for Parley on PostgreSQL: its database (dropped by stop()). */
  readonly database?: FreshDatabase;
  /** The PostgreSQL backends serving this target right now (none for the embedded default and the baselines). */
  databasePids(): Promise<number[]>;
  stop(): Promise<void>;
}

/**
 * Environment of every Parley a benchmark starts: rate limits off (the benchmarks send far more than one user would),
 * and no limit on sockets per address (every client of a benchmark connects from 127.0.0.1).
 */
export const BENCH_ENV = {
  NODE_ENV: 'production',
  BROADCAST_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
  CHAT_RATE_SENDS_PER_MINUTE: '0',
  CHAT_RATE_CHANNEL_AUTHS_PER_MINUTE: '0',
  CHAT_RATE_TYPING_PER_MINUTE: '0',
  CHAT_RATE_HEARTBEATS_PER_MINUTE: '0',
  CHAT_RATE_EDITS_PER_MINUTE: '0',
  CHAT_RATE_READS_PER_MINUTE: '0',
  CHAT_RATE_CONVERSATIONS_PER_MINUTE: '0',
  CHAT_RATE_GROUPS_PER_HOUR: '0',
  CHAT_RATE_UPLOADS_PER_MINUTE: '0',
  CHAT_RATE_BLOCKS_PER_MINUTE: '0',
  CHAT_RATE_OTHER_WRITES_PER_MINUTE: '0',
  CHAT_RATE_SEARCHES_PER_MINUTE: '0',
  CHAT_RATE_HISTORY_PAGES_PER_MINUTE: '0',
} as const;

export type ParleyDatabase = 'postgres' | 'pglite';

/**
 * Parley as `node --import tsx src/main.ts`: on a fresh PostgreSQL database (dropped by stop()), or on the
 * embedded default (no DATABASE_URL: PGlite in the node's own temporary CHAT_DATA_DIR).
 */
export async function parleyTarget(options: { database?: ParleyDatabase; env?: Record<string, string> } = {}): Promise<Target> {
  const database = options.database === 'pglite' ? undefined : await freshPostgres(BENCH_ADMIN_DATABASE_URL, 'parley_bench');
  let node: ParleyNode;
  try {
    // BENCH_PARLEY_NODE_ARGS: extra node options for Parley, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile a run.
    const nodeArgs = (process.env.BENCH_PARLEY_NODE_ARGS ?? '').split(' ').filter(Boolean);
    node = await ParleyNode.start('parley', { ...BENCH_ENV, ...(database ? { DATABASE_URL: database.url } : {}), ...options.env }, { nodeArgs });
  } catch (err) {
    await database?.drop().catch(() => {});
    throw err;
  }
  return {
    name: database ? 'Parley' : 'Parley (PGlite)',
    parley: true,
    port: node.port,
    pid: node.pid,
    wsUrl: node.wsUrl,
    appId: SECRETS.BROADCAST_APP_ID,
    key: SECRETS.BROADCAST_APP_KEY,
    secret: SECRETS.BROADCAST_APP_SECRET,
    node,
    database,
    databasePids: async () => (database ? backendPids(database.name, BENCH_ADMIN_DATABASE_URL) : []),
    async stop() {
      try {
        await node.close();
      } finally {
        await database?.drop().catch((err: unknown) => console.error(`dropping ${database.name} failed: ${(err as Error).message}`));
      }
    },
  };
}

/** A baseline server (not Parley): `node args` on a free port, ready once GET / answers. */
async function baseline(name: string, cwd: string, spec: (port: number) => { args: readonly string[]; env: Record<string, string> }) {
  const port = await freePort();
  const { args, env } = spec(port);
  return ServerProcess.launch(name, port, process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    ready: () => answers(`http://127.0.0.1:${port}/`),
  });
}

export async function bareTarget(mode: 'string' | 'buffer', name?: string): Promise<Target> {
  const server = await baseline(`bare ws (${mode})`, ROOT, (port) => ({
    args: ['--import', 'tsx', 'bench/servers/bare-ws.ts', '--port', String(port), '--mode', mode],
    env: { NODE_ENV: 'production' },
  }));
  return {
    name: name ?? (mode === 'string' ? 'bare ws, string per socket' : 'bare ws, Buffer built once'),
    parley: false,
    port: server.port,
    pid: server.pid,
    wsUrl: pusherWsUrl(server.port, 'bare'),
    appId: 'bare',
    key: 'bare',
    secret: 'bare',
    databasePids: async () => [],
    stop: async () => void (await server.stop()),
  };
}

export const SOKETI_BIN = join(ROOT, 'bench', 'soketi', 'node_modules', '@soketi', 'soketi', 'bin', 'server.js');

export const soketiInstalled = (): boolean => existsSync(SOKETI_BIN);

export async function soketiTarget(): Promise<Target> {
  const metricsPort = await freePort();
  const app = { id: 'bench-app', key: 'bench-key', secret: 'bench-secret' };
  const server = await baseline('Soketi 1.6.1', join(ROOT, 'bench', 'soketi'), (port) => ({
    args: [SOKETI_BIN, 'start'],
    env: {
      NODE_ENV: 'production',
      SOKETI_HOST: '127.0.0.1',
      SOKETI_PORT: String(port),
      SOKETI_METRICS_SERVER_PORT: String(metricsPort),
      SOKETI_DEFAULT_APP_ID: app.id,
      SOKETI_DEFAULT_APP_KEY: app.key,
      SOKETI_DEFAULT_APP_SECRET: app.secret,
      SOKETI_DEBUG: '0',
    },
  }));
  return {
    name: 'Soketi 1.6.1',
    parley: false,
    port: server.port,
    pid: server.pid,
    wsUrl: pusherWsUrl(server.port, app.key),
    appId: app.id,
    key: app.key,
    secret: app.secret,
    databasePids: async () => [],
    stop: async () => void (await server.stop()),
  };
}
