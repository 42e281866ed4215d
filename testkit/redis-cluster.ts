// A Redis Cluster of a test's or benchmark's own on loopback: six redis-server processes (3 masters, each with
// one replica), created with `redis-cli --cluster create`, without persistence, in a temporary directory. A
// short node timeout lets a replica take over within about two seconds of its master's death, so a fault test
// can kill a master and watch Parley follow.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { atExit, exited, runProgram, ServerProcess } from './processes.js';
import { until } from './wait.js';

/** How long a master may be silent before its replica is promoted (cluster-node-timeout). */
export const CLUSTER_NODE_TIMEOUT_MS = 1_000;

/** One line of CLUSTER NODES, as far as a test needs it. */
export interface ClusterNodeInfo {
  readonly id: string;
  readonly port: number;
  readonly role: 'master' | 'replica';
  /** Up and serving (neither `fail` nor `fail?`). */
  readonly up: boolean;
  /** A replica's master's id. */
  readonly masterId: string | null;
}

/** Runs redis-cli against one node; its stdout (empty when the node does not answer). */
export function redisCli(port: number, ...args: string[]): string {
  return spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 2_000 }).stdout?.trim() ?? '';
}

export class RedisCluster {
  private readonly servers = new Map<number, ServerProcess>();
  private readonly forgetDirectory: () => void;

  private constructor(
    readonly ports: readonly number[],
    private readonly directory: string,
  ) {
    this.forgetDirectory = atExit(() => rmSync(directory, { recursive: true, force: true }));
  }

  /** REDIS_CLUSTER_NODES for Parley: every node, comma-separated host:port. */
  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** Starts six nodes, joins them into one cluster (3 masters, 3 replicas) and waits until every slot is served. */
  static async start(): Promise<RedisCluster> {
    const ports: number[] = [];
    while (ports.length < 6) {
      const port = await freePort();
      // The cluster bus listens on port + 10000: both must be free, and distinct from the others'.
      if (port + 10_000 <= 65_535 && !ports.includes(port) && !ports.includes(port + 10_000)) ports.push(port);
    }
    const cluster = new RedisCluster(ports, mkdtempSync(join(tmpdir(), 'parley-redis-cluster-')));
    try {
      await Promise.all(ports.map((port) => cluster.startNode(port)));
      await runProgram('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], 30_000);
      await cluster.waitUntilHealthy(30_000);
      return cluster;
    } catch (err) {
      await cluster.close();
      throw err;
    }
  }

  private async startNode(port: number): Promise<void> {
    const args = [
      '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.directory,
      '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
      '--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS),
      // A replica takes over however long it was cut off from its master (the test kills masters on purpose).
      '--cluster-replica-validity-factor', '0',
    ];
    const server = await ServerProcess.launch(`redis-cluster:${port}`, port, 'redis-server', args, {
      env: process.env,
      ready: async () => redisCli(port, 'ping') === 'PONG',
      readyTimeoutMs: 10_000,
      tailLimit: 5_000,
    });
    this.servers.set(port, server);
  }

  /** The cluster as one node sees it (CLUSTER NODES), or [] when it does not answer. */
  topology(askPort = this.livePorts()[0]!): ClusterNodeInfo[] {
    return redisCli(askPort, 'cluster', 'nodes')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const [id, address, flags, master] = line.split(' ') as [string, string, string, string];
        const flagList = flags.split(',');
        return {
          id,
          port: Number(address.split('@')[0]!.split(':').pop()),
          role: flagList.includes('master') ? 'master' : 'replica',
          up: !flagList.includes('fail') && !flagList.includes('fail?'),
          masterId: master === '-' ? null : master,
        } satisfies ClusterNodeInfo;
      });
  }

  /** Ports of the masters serving slots now. */
  masters(): number[] {
    return this.topology().filter((n) => n.role === 'master' && n.up && this.servers.get(n.port)?.running).map((n) => n.port);
  }

  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): number {
    const slot = Number(redisCli(this.livePorts()[0]!, 'cluster', 'keyslot', key));
    const master = this.masters().find((port) => this.slotRanges(port).some(([from, to]) => slot >= from && slot <= to));
    if (master === undefined) throw new Error(`no master serves slot ${slot}`);
    return master;
  }

  /** The slot ranges a master serves (from its own CLUSTER NODES line). */
  private slotRanges(port: number): [number, number][] {
    const own = redisCli(port, 'cluster', 'nodes').split('\n').find((line) => line.includes('myself'));
    return (own?.split(' ').slice(8) ?? [])
      .filter((part) => /^\d+(-\d+)?$/.test(part))
      .map((part) => {
        const [from, to = from] = part.split('-').map(Number) as [number, number?];
        return [from, to ?? from];
      });
  }

  private livePorts(): number[] {
    return this.ports.filter((port) => this.servers.get(port)?.running);
  }

  /** Waits until every live node reports cluster_state:ok and three masters serve every slot between them. */
  async waitUntilHealthy(timeoutMs: number): Promise<void> {
    await until(
      () =>
        this.livePorts().every((port) => redisCli(port, 'cluster', 'info').includes('cluster_state:ok')) &&
        this.livePorts().every((port) => this.topology(port).filter((n) => n.role === 'master' && n.up).length === 3),
      timeoutMs,
      () => `the cluster is not healthy:\n${redisCli(this.livePorts()[0]!, 'cluster', 'nodes')}`,
      100,
    );
  }

  /**
   * SIGKILL of a master (as in a crash) and the wait for its replica's promotion: resolves with the new
   * master's port once the cluster serves every slot again.
   */
  async killMaster(port: number, timeoutMs = 15_000): Promise<number> {
    const replica = this.topology().find((n) => n.masterId === this.topology().find((m) => m.port === port)?.id);
    const server = this.servers.get(port);
    if (!server || !replica) throw new Error(`no running master with a replica on port ${port}`);
    server.kill();
    await exited(server.child, 5_000);
    await until(
      () => this.topology(replica.port).some((n) => n.port === replica.port && n.role === 'master'),
      timeoutMs,
      () => `replica ${replica.port} was not promoted:\n${redisCli(replica.port, 'cluster', 'nodes')}`,
      100,
    );
    await until(() => this.livePorts().every((p) => redisCli(p, 'cluster', 'info').includes('cluster_state:ok')), timeoutMs, () => 'cluster_state not ok after the failover', 100);
    return replica.port;
  }

  /**
   * Moves the slot of `key` from its master to the master on port `to` (CLUSTER SETSLOT ... NODE on every
   * master, as `redis-cli --cluster reshard` ends): clients using the old master get MOVED from then on. The slot
   * must hold no keys (a shard channel's slot, say).
   */
  moveSlotOf(key: string, to: number): void {
    const from = this.masterOf(key);
    const slot = redisCli(from, 'cluster', 'keyslot', key);
    const id = (port: number) => redisCli(port, 'cluster', 'myid');
    redisCli(to, 'cluster', 'setslot', slot, 'importing', id(from));
    redisCli(from, 'cluster', 'setslot', slot, 'migrating', id(to));
    for (const port of [from, to, ...this.masters().filter((p) => p !== from && p !== to)]) redisCli(port, 'cluster', 'setslot', slot, 'node', id(to));
  }

  /** The shard channels with subscribers, per live master (PUBSUB SHARDCHANNELS on each). */
  shardChannels(pattern = '*'): Map<number, string[]> {
    return new Map(this.masters().map((port) => [port, redisCli(port, 'pubsub', 'shardchannels', pattern).split('\n').filter((c) => c !== '')]));
  }

  /** Deletes every key under prefix on every live master. */
  deleteKeys(prefix: string): void {
    for (const port of this.masters()) {
      const keys = redisCli(port, '--scan', '--pattern', `${prefix}*`).split('\n').filter((k) => k !== '');
      for (const key of keys) redisCli(port, '-c', 'del', key);
    }
  }

  /** Kills every node and removes the directory. Never throws. */
  async close(): Promise<void> {
    for (const server of this.servers.values()) server.kill();
    await Promise.all([...this.servers.values()].map((s) => exited(s.child, 5_000)));
    rmSync(this.directory, { recursive: true, force: true });
    this.forgetDirectory();
  }
}
