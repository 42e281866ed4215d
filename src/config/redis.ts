// Where the deployment's Redis is: one of REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (with
// REDIS_SENTINEL_MASTER), never two, so a node never silently picks one of two answers.
import { ConfigError, type SettingValues } from './settings.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export type RedisDeployment =
  | { readonly kind: 'single'; readonly url: string }
  | { readonly kind: 'sentinel'; readonly sentinels: readonly HostPort[]; readonly master: string }
  | { readonly kind: 'cluster'; readonly nodes: readonly HostPort[] };

const hostPort = (entry: string): HostPort => {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(at + 1)) };
};

export function redisDeployment(v: Pick<SettingValues, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_SENTINELS' | 'REDIS_SENTINEL_MASTER'>): RedisDeployment | null {
  const given = [v.REDIS_URL !== null && 'REDIS_URL', v.REDIS_CLUSTER_NODES.length > 0 && 'REDIS_CLUSTER_NODES', v.REDIS_SENTINELS.length > 0 && 'REDIS_SENTINELS'].filter(
    (name): name is string => typeof name === 'string',
  );
  if (given.length > 1) {
    throw new ConfigError(`${given.join(' and ')} are both set: a deployment has one Redis. Fix: keep one of REDIS_URL (one Redis), REDIS_CLUSTER_NODES (a Redis Cluster) or REDIS_SENTINELS (a Sentinel-managed primary), and unset the others.`);
  }
  if (v.REDIS_SENTINELS.length > 0 && !v.REDIS_SENTINEL_MASTER) {
    throw new ConfigError('REDIS_SENTINELS needs REDIS_SENTINEL_MASTER. Fix: set it to the name the sentinels monitor the primary under (`sentinel monitor <name> ...`).');
  }
  if (v.REDIS_SENTINEL_MASTER && v.REDIS_SENTINELS.length === 0) {
    throw new ConfigError('REDIS_SENTINEL_MASTER is set without REDIS_SENTINELS. Fix: set REDIS_SENTINELS to the sentinels (host:port, comma-separated), or unset REDIS_SENTINEL_MASTER.');
  }
  if (v.REDIS_URL !== null) return { kind: 'single', url: v.REDIS_URL };
  if (v.REDIS_CLUSTER_NODES.length > 0) return { kind: 'cluster', nodes: v.REDIS_CLUSTER_NODES.map(hostPort) };
  if (v.REDIS_SENTINELS.length > 0) return { kind: 'sentinel', sentinels: v.REDIS_SENTINELS.map(hostPort), master: v.REDIS_SENTINEL_MASTER! };
  return null;
}
