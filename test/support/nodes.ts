// Real Parley node processes for the multi-node tests: `node --import tsx src/main.ts`, each on a port of its
// own, all on one PostgreSQL database and one Redis (with a key prefix of their own). Every process started
// here is killed when the test process exits, whatever happened, so a failed run never leaves nodes behind.
// Also: dedicated redis-server and PostgreSQL instances that a fault test may kill and restart.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createTokenIssuer } from '../../src/http/auth.js';
import { ADMIN_DATABASE_URL, freshPostgres } from './app.js';
import { requestJson } from './http.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The machine's Redis unless TEST_REDIS_URL names another. */
export const MACHINE_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Values every node of a cluster shares. */
export const SHARED_ENV = {
  HOST: '127.0.0.1',
  CHAT_JWT_SECRET: 'multinode-jwt-secret-of-sufficient-length',
  CHAT_SERVER_KEY: 'multinode-server-key',
  BROADCAST_APP_ID: '4321',
  BROADCAST_APP_KEY: 'multinode-app-key',
  BROADCAST_APP_SECRET: 'multinode-app-secret',
  LOG_LEVEL: 'warn',
} as const;

// -------------------------------------------------------------------------------------------------
// Every child of this process, killed on exit (the test runner ends a file's process after its tests).

const children = new Set<ChildProcess>();
/** Synchronous stops of daemons started here (a dedicated PostgreSQL), run on exit too. */
const daemons = new Set<() => void>();
function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const stop of daemons) stop();
  daemons.clear();
}
process.once('exit', killAll);
// Killed by a signal (a runner's timeout, Ctrl-C), 'exit' does not come: clean up, then die of the signal.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** A port free right now on 127.0.0.1 (the OS picks it; the listener is closed again at once). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls check until it returns true, at most timeoutMs; throws with describe() on timeout. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await sleep(everyMs);
  }
}

/** Keeps the last `limit` characters a child wrote, for failure messages. */
class Tail {
  private text = '';
  constructor(private readonly limit = 20_000) {}
  push(chunk: Buffer | string): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit) this.text = this.text.slice(-this.limit);
  }
  toString(): string {
    return this.text;
  }
}

/** Waits for a child's exit, at most timeoutMs; resolves with the code (or signal name), null on timeout. */
function exited(child: ChildProcess, timeoutMs: number): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => resolveExit(null), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolveExit(code ?? signal);
    });
  });
}

// -------------------------------------------------------------------------------------------------
// A Parley node

export interface Response {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

export class ParleyNode {
  readonly baseUrl: string;
  readonly api: string;
  readonly config = { broadcast: { appKey: SHARED_ENV.BROADCAST_APP_KEY } };
  private readonly output = new Tail();
  private readonly issuer = createTokenIssuer(SHARED_ENV.CHAT_JWT_SECRET);

  private constructor(
    readonly name: string,
    readonly port: number,
    readonly child: ChildProcess,
    private readonly dataDir: string,
  ) {
    this.baseUrl = `http://127.0.0.1:${port}`;
    this.api = `${this.baseUrl}/api/chat/v1`;
    child.stdout?.on('data', (chunk: Buffer) => this.output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.output.push(chunk));
  }

  /** Spawns a node on a free port and waits until /readyz answers 200 (at most readyTimeoutMs). */
  static async start(name: string, env: Record<string, string>, readyTimeoutMs = 20_000): Promise<ParleyNode> {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), `parley-${name}-`));
    const child = track(
      spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...SHARED_ENV, CHAT_DATA_DIR: dataDir, PORT: String(port), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const node = new ParleyNode(name, port, child, dataDir);
    try {
      await until(
        async () => {
          if (!node.running) throw new Error(`node ${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${node.logs()}`);
          return (await node.ready()) === 200;
        },
        readyTimeoutMs,
        () => `node ${name} on port ${port} not ready:\n${node.logs()}`,
        100,
      );
    } catch (err) {
      node.kill();
      throw err;
    }
    return node;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** What the process wrote to stdout and stderr (the last 20 kB). */
  logs(): string {
    return this.output.toString() || '(no output)';
  }

  /** GET /readyz's status, 0 when nothing answers within 2 s. */
  async ready(): Promise<number> {
    try {
      return (await fetch(`${this.baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) })).status;
    } catch {
      return 0;
    }
  }

  async token(userId: number, name = `User ${userId}`): Promise<string> {
    return (await this.issuer.issue(userId, { name })).token;
  }

  /** fetch against the API as a user, JSON in and out; every request is bounded by timeoutMs. */
  async request(
    userId: number | null,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    timeoutMs = 10_000,
  ): Promise<Response> {
    const token = userId === null ? null : await this.token(userId);
    return requestJson(`${this.api}${path}`, { method, token, body, headers, timeoutMs });
  }

  /** Sends signal and waits for the exit (at most timeoutMs, then SIGKILL and an error); resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<number | string> {
    if (!this.running) return this.child.exitCode ?? this.child.signalCode ?? 'exited';
    this.child.kill(signal);
    const code = await exited(this.child, timeoutMs);
    if (code === null) {
      this.kill();
      throw new Error(`node ${this.name} did not exit within ${timeoutMs} ms of ${signal}:\n${this.logs()}`);
    }
    return code;
  }

  /** SIGKILL if still running, and the data directory removed. Safe to call twice. */
  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

// -------------------------------------------------------------------------------------------------
// A cluster: N nodes, one fresh database, one Redis under a prefix of its own

export interface ClusterOptions {
  readonly nodes: number;
  /** Default: the machine's Redis. */
  readonly redisUrl?: string;
  /** Server on which the cluster's database is created (default: the test PostgreSQL). */
  readonly adminDatabaseUrl?: string;
  /** Extra environment for every node. */
  readonly env?: Record<string, string>;
}

export class Cluster {
  readonly nodes: ParleyNode[] = [];
  readonly redisPrefix = `parley-multinode-${randomBytes(4).toString('hex')}:`;

  private constructor(
    readonly databaseUrl: string,
    readonly redisUrl: string,
    private readonly env: Record<string, string>,
    private readonly dropDatabase: () => Promise<void>,
  ) {}

  /** Starts the nodes at once (they migrate the fresh database concurrently, as a deployment's would). */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const database = await freshPostgres(options.adminDatabaseUrl ?? ADMIN_DATABASE_URL);
    const redisUrl = options.redisUrl ?? MACHINE_REDIS_URL;
    const cluster = new Cluster(database.url, redisUrl, options.env ?? {}, database.drop);
    const started = await Promise.allSettled(Array.from({ length: options.nodes }, (_, i) => cluster.startNode(`node${i + 1}`)));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await cluster.close();
      throw failed.reason;
    }
    // Keep the order node1, node2, ... whatever finished first.
    cluster.nodes.sort((a, b) => a.name.localeCompare(b.name));
    return cluster;
  }

  /** Starts one more node of this cluster. */
  async startNode(name = `node${this.nodes.length + 1}`): Promise<ParleyNode> {
    const node = await ParleyNode.start(name, {
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.redisUrl,
      REDIS_PREFIX: this.redisPrefix,
      ...this.env,
    });
    this.nodes.push(node);
    return node;
  }

  /** Everything every node wrote, for a failure message. */
  logs(): string {
    return this.nodes.map((n) => `--- ${n.name} (port ${n.port}) ---\n${n.logs()}`).join('\n');
  }

  /** Kills every node still running, drops the database and deletes the cluster's Redis keys. Never throws. */
  async close(): Promise<void> {
    for (const node of this.nodes) node.kill();
    await Promise.all(this.nodes.map((n) => exited(n.child, 5_000)));
    await this.dropDatabase().catch((err: unknown) => console.error(`dropping the test database failed: ${(err as Error).message}`));
    await this.deleteRedisKeys().catch(() => {}); // a Redis of the test's own may be gone already
  }

  private async deleteRedisKeys(): Promise<void> {
    const redis = new Redis(this.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
    redis.on('error', () => {});
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.redisPrefix}*`, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}

// -------------------------------------------------------------------------------------------------
// A redis-server of a test's own, to stop and start again

export class RedisServer {
  private child: ChildProcess | null = null;
  private readonly output = new Tail(5_000);

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  /** (Re)starts redis-server on the same port, without persistence, and waits until it answers PING. */
  async start(timeoutMs = 5_000): Promise<void> {
    const child = track(
      spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    child.stdout?.on('data', (chunk: Buffer) => this.output.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => this.output.push(chunk));
    this.child = child;
    await until(
      () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}):\n${this.output}`);
        return spawnSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8', timeout: 1_000 }).stdout?.trim() === 'PONG';
      },
      timeoutMs,
      () => `redis-server on port ${this.port} did not answer PING:\n${this.output}`,
    );
  }

  /** SIGKILL: Redis vanishes at once, as in a crash. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    if ((await exited(child, 5_000)) === null) throw new Error('redis-server did not die');
  }
}

// -------------------------------------------------------------------------------------------------
// A PostgreSQL cluster of a test's own (initdb in a temporary directory), to stop and start again

function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(base, versions[0]!, 'bin') : null;
}

export class PostgresServer {
  private readonly bin: string;
  private readonly runAs: string[];

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

  static async start(): Promise<PostgresServer> {
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
    daemons.add(server.stopNow);
    await server.run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'], 60_000);
    await server.start();
    return server;
  }

  /** Runs one of PostgreSQL's programs (as the postgres user when we are root), without blocking the event loop. */
  private run(program: string, args: string[], timeoutMs: number): Promise<void> {
    const [command, ...rest] = [...this.runAs, join(this.bin, program), ...args];
    return new Promise((resolveRun, reject) => {
      const output = new Tail(5_000);
      const child = track(spawn(command!, rest, { stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs, killSignal: 'SIGKILL' }));
      child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
      child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        code === 0 ? resolveRun() : reject(new Error(`${program} ${args.join(' ')} failed (${code ?? signal}):\n${output}`)),
      );
    });
  }

  /** The same, blocking: for the exit handler, where nothing asynchronous runs any more. */
  private runSync(program: string, args: string[], timeoutMs: number): void {
    const [command, ...rest] = [...this.runAs, join(this.bin, program), ...args];
    spawnSync(command!, rest, { stdio: 'ignore', timeout: timeoutMs });
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

  /** Stops the server if it runs (immediately) and removes its directory. Never throws. */
  private readonly stopNow = (): void => {
    this.runSync('pg_ctl', ['stop', '-w', '-t', '10', '-m', 'immediate', '-D', join(this.dir, 'data')], 20_000);
    rmSync(this.dir, { recursive: true, force: true });
  };

  async destroy(): Promise<void> {
    daemons.delete(this.stopNow);
    this.stopNow();
  }
}
