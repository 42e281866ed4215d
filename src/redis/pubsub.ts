// Topics between the nodes of a deployment. On one Redis (or behind Sentinel): PUBLISH and SUBSCRIBE. On a Redis
// Cluster: shard channels (SPUBLISH and SSUBSCRIBE, Redis 7), so each topic lives on the one master that serves
// its slot and a publication crosses no cluster bus; classic PUBLISH on a Cluster would reach every master, and
// its answer would count only one master's subscribers.
import type { Cluster, Redis } from 'ioredis';

export interface RedisPubSub {
  /** Resolves with how many subscribers received the message (on a Cluster: every subscriber, all on the topic's shard). */
  publish(topic: string, message: string): Promise<number>;
  subscribe(topic: string): Promise<void>;
  unsubscribe(topic: string): Promise<void>;
  /** Every message of every subscribed topic (several listeners may each take the topics they own). */
  onMessage(listener: (topic: string, message: string) => void): void;
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
    };
  }
  const { commands, subscriber } = clients;
  return {
    publish: async (topic, message) => Number(await commands.spublish(topic, message)),
    // One topic per call: ioredis sends an SSUBSCRIBE to the master of that topic's slot.
    subscribe: async (topic) => void (await subscriber.ssubscribe(topic)),
    unsubscribe: async (topic) => void (await subscriber.sunsubscribe(topic)),
    onMessage: (listener) => void subscriber.on('smessage', listener),
  };
}
