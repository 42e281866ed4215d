// The Redis deployments a multinode suite runs on: the machine's one Redis, and a Redis Cluster of the file's own
// (six processes on loopback, testkit/redis-cluster.ts). A suite loops over them: the same tests, each backend
// started once per file.
import { RedisCluster } from '../../testkit/redis-cluster.js';

export interface RedisBackend {
  /** For the suite's name: "one Redis", "a Redis Cluster". */
  readonly name: string;
  /** A Redis Cluster: shard channels to look at. */
  readonly cluster: boolean;
  /** Starts the backend (undefined: the machine's Redis, nothing to start); the result goes to Cluster.start's `redis`. */
  start(): Promise<RedisCluster | undefined>;
}

export const REDIS_BACKENDS: readonly RedisBackend[] = [
  { name: 'one Redis', cluster: false, start: async () => undefined },
  { name: 'a Redis Cluster', cluster: true, start: () => RedisCluster.start() },
];
