// The broker in memory, for a node alone (no REDIS_URL): every publication goes straight back to the node's handler,
// there are no other nodes to order or ask.
import type { Broker, BrokerHandler } from './broker.js';

export function memoryBroker(): Broker {
  let handler: BrokerHandler | undefined;
  return {
    async start(h) {
      if (handler !== undefined) throw new Error('realtime: a broker serves one node');
      handler = h;
    },
    publish(channels, publication) {
      handler?.publication(channels, publication);
    },
    subscribe: () => undefined,
    unsubscribe() {},
    command: async () => {},
    survey: async () => new Map(),
    received: () => 0,
  };
}
