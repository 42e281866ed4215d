// Several Pusher apps on one built-in server (BROADCAST_APPS_FILE): each app is a realtime server of its
// own (a realtime node: channels, presence, limits, client-event switch, webhooks), so nothing of one can reach another.
// What they share is the port: a socket goes to the app whose key its path names, an HTTP API request to
// the app whose id it names; with Redis each app's keys and topics live under a prefix of their own.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RedisConnections } from '../redis/connections.js';
import type { RealtimeNode } from './node.js';

type Upgradable = Pick<RealtimeNode, 'handleUpgrade'>;

/** The same Redis connections, with every key and topic of one app under `{prefix}app:{id}:`. */
export function redisForApp(redis: RedisConnections, appId: string): RedisConnections {
  return {
    kind: redis.kind,
    commands: redis.commands,
    subscriber: redis.subscriber,
    pubsub: redis.pubsub,
    prefix: `${redis.prefix}app:${appId}:`,
    isReady: () => redis.isReady(),
    close: async () => {}, // the connections are the deployment's, closed once by their owner
  };
}

/**
 * Routes a WebSocket upgrade to the app whose key the path names (`/app/{key}`); anything else goes to
 * the default app's server, which answers it (an unknown key with pusher:error 4001, another path with 404).
 */
export function upgradeRouter(
  defaultApp: Upgradable,
  byKey: ReadonlyMap<string, Upgradable>,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => boolean {
  if (byKey.size === 0) return (req, socket, head) => defaultApp.handleUpgrade(req, socket, head);
  return (req, socket, head) => {
    // Keys are unreserved URL characters (config/pusher-apps.ts): compared as written, like the server does.
    const key = /^\/app\/([^/?]+)(?:\?|$)/.exec(req.url ?? '')?.[1];
    const server = (key !== undefined && byKey.get(key)) || defaultApp;
    return server.handleUpgrade(req, socket, head);
  };
}

