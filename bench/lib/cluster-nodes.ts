// Parley as a scaled-out deployment for the cluster benchmark: N node processes (testkit/cluster.ts) on one fresh
// PostgreSQL database and one Redis or a Redis Cluster of the benchmark's own, with the benchmarks' environment
// (rate limits off), and what the benchmark reads of them from outside: each node's cross-node counters on
// /metrics, and the Redis server processes' ids (for their CPU).
import { spawnSync } from 'node:child_process';
import { Cluster } from '../../testkit/cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { backendPids, withClient } from '../../testkit/postgres.js';
import { RedisCluster } from '../../testkit/redis-cluster.js';
import { MACHINE_REDIS_URL } from '../../testkit/redis.js';
import { BENCH_ADMIN_DATABASE_URL, BENCH_ENV } from './targets.js';

/** The Redis the nodes share: the machine's single Redis (REDIS_URL), or a Redis Cluster (REDIS_CLUSTER_NODES). */
export interface BenchRedis {
  /** As printed in the report. */
  readonly label: string;
  /** A Redis Cluster of the benchmark's own; none: the machine's Redis. */
  readonly cluster?: RedisCluster;
  /** The redis-server processes (for their CPU). */
  readonly pids: readonly number[];
  close(): Promise<void>;
}

/** The machine's Redis at MACHINE_REDIS_URL (the nodes share it under a key prefix of their cluster's own). */
export function machineRedis(): BenchRedis {
  const url = new URL(MACHINE_REDIS_URL);
  const pid = redisPid(Number(url.port || 6379));
  return { label: 'one Redis (REDIS_URL)', pids: pid === null ? [] : [pid], close: async () => {} };
}

/** Whether a Redis Cluster can run here: redis-server 7 or newer (sharded pub/sub). */
export function redisClusterAvailable(): boolean {
  const version = /v=(\d+)\./.exec(spawnSync('redis-server', ['--version'], { encoding: 'utf8', timeout: 2_000 }).stdout ?? '');
  return version !== null && Number(version[1]) >= 7;
}

/** Six redis-server processes of the benchmark's own on loopback: 3 masters, each with a replica (testkit/redis-cluster.ts). */
export async function redisCluster(): Promise<BenchRedis> {
  const cluster = await RedisCluster.start();
  const pids = cluster.ports.map(redisPid).filter((pid): pid is number => pid !== null);
  return { label: 'a Redis Cluster (3 masters, 3 replicas; REDIS_CLUSTER_NODES)', cluster, pids, close: () => cluster.close() };
}

/** The process id of the redis-server on a port of this machine (INFO server), null when it does not say. */
export function redisPid(port: number): number | null {
  const info = spawnSync('redis-cli', ['-p', String(port), 'info', 'server'], { encoding: 'utf8', timeout: 2_000 }).stdout ?? '';
  const match = /^process_id:(\d+)/m.exec(info);
  return match ? Number(match[1]) : null;
}

export interface BenchCluster {
  readonly nodes: readonly ParleyNode[];
  /** The PostgreSQL backends serving the nodes right now. */
  databasePids(): Promise<number[]>;
  /** VACUUM (ANALYZE) of the cluster's database, or of one table: what autovacuum does where it is on. */
  vacuum(table?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startCluster(nodes: number, redis: BenchRedis): Promise<BenchCluster> {
  // BENCH_NODE_ARGS: node options for every node, to look inside a run (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const cluster = await Cluster.start({ nodes, adminDatabaseUrl: BENCH_ADMIN_DATABASE_URL, env: BENCH_ENV, nodeArgs, ...(redis.cluster ? { redis: redis.cluster } : {}) });
  const database = new URL(cluster.databaseUrl).pathname.slice(1);
  return {
    nodes: cluster.nodes,
    databasePids: () => backendPids(database, BENCH_ADMIN_DATABASE_URL),
    vacuum: (table) => withClient(cluster.databaseUrl, async (c) => void (await c.query(`vacuum (analyze)${table ? ` ${table}` : ''}`))),
    close: () => cluster.close(),
  };
}

/** Whether autovacuum is on in the benchmarks' PostgreSQL (a CI configuration may turn it off). */
export async function autovacuumOn(): Promise<boolean> {
  return withClient(BENCH_ADMIN_DATABASE_URL, async (c) => (await c.query<{ autovacuum: string }>('show autovacuum')).rows[0]?.autovacuum === 'on');
}

/** A node's cross-node counters (docs/deployment.md, Metrics). */
export interface CrossNodeCounters {
  /** Channel messages it received from the other nodes through Redis. */
  readonly received: number;
  /** Of those, the ones it wrote to at least one of its sockets. */
  readonly delivered: number;
}

export async function crossNodeCounters(node: ParleyNode): Promise<CrossNodeCounters> {
  const text = await (await fetch(`${node.baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const value = (name: string) => {
    const match = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
    if (match === null) throw new Error(`${node.name}'s /metrics has no ${name} (is the node on Redis?)`);
    return Number(match[1]);
  };
  return { received: value('parley_cluster_channel_messages_received_total'), delivered: value('parley_cluster_channel_messages_delivered_total') };
}
