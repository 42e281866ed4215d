// A cluster of Parley node processes as a scaled-out deployment runs them: N nodes on one fresh PostgreSQL
// database and one Redis (or a Redis Cluster, or a Sentinel-managed primary), under a key prefix of the
// cluster's own.
import { randomBytes } from 'node:crypto';
import { ParleyNode } from './parley-node.js';
import { ADMIN_DATABASE_URL, freshPostgres } from './postgres.js';
import { exited } from './processes.js';
import { RedisCluster } from './redis-cluster.js';
import type { RedisSentinelSet } from './redis-sentinel.js';
import { deleteKeys, MACHINE_REDIS_URL } from './redis.js';

export interface ClusterOptions {
  readonly nodes: number;
  /** Default: the machine's Redis. */
  readonly redisUrl?: string;
  /** A Redis Cluster (REDIS_CLUSTER_NODES) or a Sentinel set (REDIS_SENTINELS) instead of redisUrl. */
  readonly redis?: RedisCluster | RedisSentinelSet;
  /** Server on which the cluster's database is created (default: the test PostgreSQL). */
  readonly adminDatabaseUrl?: string;
  /** Extra environment for every node. */
  readonly env?: Record<string, string>;
  /** Node options for every node, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof']. */
  readonly nodeArgs?: readonly string[];
}

export class Cluster {
  readonly nodes: ParleyNode[] = [];
  readonly redisPrefix = `parley-multinode-${randomBytes(4).toString('hex')}:`;

  private constructor(
    readonly databaseUrl: string,
    readonly redisUrl: string,
    private readonly env: Record<string, string>,
    readonly redis: RedisCluster | RedisSentinelSet | undefined,
    private readonly dropDatabase: () => Promise<void>,
    private readonly nodeArgs: readonly string[] = [],
  ) {}

  /** Starts the nodes at once (they migrate the fresh database concurrently, as a deployment's would). */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const database = await freshPostgres(options.adminDatabaseUrl ?? ADMIN_DATABASE_URL);
    const redisUrl = options.redisUrl ?? MACHINE_REDIS_URL;
    const cluster = new Cluster(database.url, redisUrl, options.env ?? {}, options.redis, database.drop, options.nodeArgs);
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
      ...this.redisEnv(),
      REDIS_PREFIX: this.redisPrefix,
      ...this.env,
    }, { nodeArgs: this.nodeArgs });
    this.nodes.push(node);
    return node;
  }

  /** Where the nodes find Redis. */
  redisEnv(): Record<string, string> {
    if (this.redis instanceof RedisCluster) return { REDIS_CLUSTER_NODES: this.redis.nodes };
    if (this.redis) return { REDIS_SENTINELS: this.redis.sentinels, REDIS_SENTINEL_MASTER: this.redis.master };
    return { REDIS_URL: this.redisUrl };
  }

  /** Everything every node wrote, for a failure message. */
  logs(): string {
    return this.nodes.map((n) => `--- ${n.name} (port ${n.port}) ---\n${n.logs()}`).join('\n');
  }

  /** Kills every node still running, drops the database and deletes the cluster's Redis keys. Never throws. */
  async close(): Promise<void> {
    // With node options (a profiler, say), each node is stopped as a deployment stops it, so it can write what it keeps.
    if (this.nodeArgs.length > 0) await Promise.all(this.nodes.map((n) => n.stop('SIGTERM', 30_000).catch(() => {})));
    for (const node of this.nodes) node.kill();
    await Promise.all(this.nodes.map((n) => exited(n.child, 5_000)));
    await this.dropDatabase().catch((err: unknown) => console.error(`dropping the test database failed: ${(err as Error).message}`));
    // A Redis of the test's own may be gone already; a Sentinel set is the test's own, closed by it.
    if (this.redis instanceof RedisCluster) this.redis.deleteKeys(this.redisPrefix);
    else if (!this.redis) await deleteKeys(this.redisUrl, this.redisPrefix).catch(() => {});
  }
}
