// A Sentinel-managed Redis of a test's or benchmark's own on loopback: a primary, one replica and three
// sentinels (`redis-server --sentinel`), without persistence, in a temporary directory. The sentinels judge the
// primary down after SENTINEL_DOWN_AFTER_MS and promote the replica, so a fault test can kill the primary and
// watch Parley follow.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { atExit, exited, ServerProcess } from './processes.js';
import { until } from './wait.js';

/** How long the primary may be silent before the sentinels call it down (down-after-milliseconds). */
export const SENTINEL_DOWN_AFTER_MS = 1_000;

const cli = (port: number, ...args: string[]) => spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 2_000 }).stdout?.trim() ?? '';

export class RedisSentinelSet {
  private readonly servers = new Map<number, ServerProcess>();
  private readonly forgetDirectory: () => void;

  private constructor(
    /** The name the sentinels monitor the primary under (REDIS_SENTINEL_MASTER). */
    readonly master: string,
    readonly redisPorts: readonly [number, number],
    readonly sentinelPorts: readonly number[],
    private readonly directory: string,
  ) {
    this.forgetDirectory = atExit(() => rmSync(directory, { recursive: true, force: true }));
  }

  /** REDIS_SENTINELS for Parley: comma-separated host:port. */
  get sentinels(): string {
    return this.sentinelPorts.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** Starts the primary, its replica and three sentinels; resolves once every sentinel knows both and the other sentinels. */
  static async start(master = 'parley'): Promise<RedisSentinelSet> {
    const ports: number[] = [];
    while (ports.length < 5) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const [primary, replica, ...sentinelPorts] = ports as [number, number, number, number, number];
    const set = new RedisSentinelSet(master, [primary, replica], sentinelPorts, mkdtempSync(join(tmpdir(), 'parley-redis-sentinel-')));
    try {
      await set.startRedis(primary);
      await set.startRedis(replica, ['--replicaof', '127.0.0.1', String(primary)]);
      await Promise.all(sentinelPorts.map((port) => set.startSentinel(port, primary)));
      await until(
        () => sentinelPorts.every((port) => /num-other-sentinels\n2\b/.test(cli(port, 'sentinel', 'master', master)) && /num-slaves\n1\b/.test(cli(port, 'sentinel', 'master', master))),
        30_000,
        () => `the sentinels do not know each other and the replica yet:\n${cli(sentinelPorts[0], 'sentinel', 'master', master)}`,
        100,
      );
      return set;
    } catch (err) {
      await set.close();
      throw err;
    }
  }

  private async startRedis(port: number, extra: string[] = []): Promise<void> {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.directory, ...extra];
    this.servers.set(port, await ServerProcess.launch(`redis:${port}`, port, 'redis-server', args, { env: process.env, ready: async () => cli(port, 'ping') === 'PONG', readyTimeoutMs: 10_000, tailLimit: 5_000 }));
  }

  private async startSentinel(port: number, primary: number): Promise<void> {
    // A sentinel rewrites its configuration file as it learns: one file each, in the set's directory.
    const file = join(this.directory, `sentinel-${port}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${this.directory}`,
        `sentinel monitor ${this.master} 127.0.0.1 ${primary} 2`,
        `sentinel down-after-milliseconds ${this.master} ${SENTINEL_DOWN_AFTER_MS}`,
        `sentinel failover-timeout ${this.master} 5000`,
        `sentinel parallel-syncs ${this.master} 1`,
        '',
      ].join('\n'),
    );
    this.servers.set(port, await ServerProcess.launch(`sentinel:${port}`, port, 'redis-server', [file, '--sentinel'], { env: process.env, ready: async () => cli(port, 'ping') === 'PONG', readyTimeoutMs: 10_000, tailLimit: 5_000 }));
  }

  /** The primary's port as the sentinels tell it now. */
  primary(): number {
    return Number(cli(this.sentinelPorts[0]!, 'sentinel', 'get-master-addr-by-name', this.master).split('\n')[1]);
  }

  /** SIGKILL of the primary (as in a crash) and the wait until the sentinels name the replica primary and it takes writes. */
  async killPrimary(timeoutMs = 20_000): Promise<number> {
    const old = this.primary();
    const server = this.servers.get(old);
    if (!server) throw new Error(`no primary on port ${old}`);
    server.kill();
    await exited(server.child, 5_000);
    const next = this.redisPorts.find((p) => p !== old)!;
    await until(
      () => this.sentinelPorts.every((port) => cli(port, 'sentinel', 'get-master-addr-by-name', this.master).endsWith(String(next))) && /role:master/.test(cli(next, 'info', 'replication')),
      timeoutMs,
      () => `the sentinels did not promote ${next}: ${cli(this.sentinelPorts[0]!, 'sentinel', 'get-master-addr-by-name', this.master)}`,
      100,
    );
    return next;
  }

  /** Kills every process and removes the directory. Never throws. */
  async close(): Promise<void> {
    for (const server of this.servers.values()) server.kill();
    await Promise.all([...this.servers.values()].map((s) => exited(s.child, 5_000)));
    rmSync(this.directory, { recursive: true, force: true });
    this.forgetDirectory();
  }
}
