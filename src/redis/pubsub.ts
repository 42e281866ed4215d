// Topics between the nodes of a deployment. On one Redis (or behind Sentinel): PUBLISH and SUBSCRIBE. On a Redis
// Cluster: shard channels (SPUBLISH and SSUBSCRIBE, Redis 7), so each topic lives on the one master that serves
// its slot and a publication crosses no cluster bus; classic PUBLISH on a Cluster would reach every master, and
// its answer would count only one master's subscribers.
import calculateSlot from 'cluster-key-slot';
import type { Cluster, Redis } from 'ioredis';

/** Topics grouped by the Redis server that carries them, each group with a topic of `base` on that same server. */
export interface ShardGroup {
  /** A topic of `base` on the server of this group's topics (what every node listens to: shardTopics). */
  readonly via: string;
  /** Indexes into the topics given. */
  readonly indexes: number[];
}

export interface RedisPubSub {
  /** Resolves with how many subscribers received the message (on a Cluster: every subscriber, all on the topic's shard). */
  publish(topic: string, message: string): Promise<number>;
  subscribe(topic: string): Promise<void>;
  unsubscribe(topic: string): Promise<void>;
  /** Every message of every subscribed topic (several listeners may each take the topics they own). */
  onMessage(listener: (topic: string, message: string) => void): void;
  /**
   * The topics of `base` every node listens to: one per Redis server (one on one Redis, one per master on a
   * Cluster), so that a message on one of them keeps its place among the messages of the same publisher to the
   * other topics of that server (a server delivers a connection's messages in the order it sent them).
   */
  shardTopics(base: string): string[];
  /** `topics` grouped by server, each group with the shard topic of `base` on that server; null when the map of servers is not known yet. */
  shards(base: string, topics: readonly string[]): ShardGroup[] | null;
  /** Called when the servers may have changed (a Cluster's slot map was refreshed): listen to shardTopics again. */
  onShardsChanged(listener: () => void): void;
}

/** A Cluster's master of each slot (the first node of its slot map entry). */
function masterOf(cluster: Cluster, topic: string): string | undefined {
  return (cluster.slots[calculateSlot(topic)] as string[] | undefined)?.[0];
}

/** For each master of the cluster's slot map, the first topic `${base}{n}` (n = 0, 1, ...) whose slot it serves. */
function shardTopicsOf(cluster: Cluster, base: string): Map<string, string> {
  const masters = new Set<string>();
  for (const nodes of cluster.slots as (string[] | undefined)[]) if (nodes?.[0] !== undefined) masters.add(nodes[0]);
  const topics = new Map<string, string>();
  for (let n = 0; topics.size < masters.size && n < 100_000; n++) {
    const topic = `${base}{${n}}`;
    const master = masterOf(cluster, topic);
    if (master !== undefined && !topics.has(master)) topics.set(master, topic);
  }
  return topics;
}

export type PubSubClients =
  | { readonly kind: 'classic'; readonly commands: Redis; readonly subscriber: Redis }
  | { readonly kind: 'sharded'; readonly commands: Cluster; readonly subscriber: Cluster };

export function redisPubSub(clients: PubSubClients): RedisPubSub {
  if (clients.kind === 'classic') {
    const { commands, subscriber } = clients;
    return {
      publish: (topic, message) => commands.publish(topic, message),
      subscribe: async (topic) => void (await subscriber.subscribe(topic)),
      unsubscribe: async (topic) => void (await subscriber.unsubscribe(topic)),
      onMessage: (listener) => void subscriber.on('message', listener),
      shardTopics: (base) => [`${base}{0}`],
      shards: (base, topics) => [{ via: `${base}{0}`, indexes: topics.map((_, i) => i) }],
      onShardsChanged: () => {},
    };
  }
  const { commands, subscriber } = clients;
  return {
    publish: async (topic, message) => Number(await commands.spublish(topic, message)),
    // One topic per call: ioredis sends an SSUBSCRIBE to the master of that topic's slot.
    subscribe: async (topic) => void (await subscriber.ssubscribe(topic)),
    unsubscribe: async (topic) => void (await subscriber.sunsubscribe(topic)),
    onMessage: (listener) => void subscriber.on('smessage', listener),
    // The subscriber's slot map decides what a node listens to, the commands client's where a node publishes: both
    // maps follow the same cluster, and a node listens again whenever its map was refreshed.
    shardTopics: (base) => [...shardTopicsOf(subscriber, base).values()],
    shards(base, topics) {
      const via = shardTopicsOf(commands, base);
      const groups = new Map<string, ShardGroup>();
      for (let i = 0; i < topics.length; i++) {
        const master = masterOf(commands, topics[i]!);
        const topic = master === undefined ? undefined : via.get(master);
        if (master === undefined || topic === undefined) return null;
        let group = groups.get(master);
        if (group === undefined) groups.set(master, (group = { via: topic, indexes: [] }));
        group.indexes.push(i);
      }
      return [...groups.values()];
    },
    onShardsChanged: (listener) => void subscriber.on('refresh', listener),
  };
}
