// Pusher clients of a server on this machine: the socket URL a client opens, and stock pusher-js set up for
// 127.0.0.1 over plain WebSockets, as an app's browser code configures it.
import PusherModule from 'pusher-js';

// pusher-js ships CommonJS whose typings say `export default`: at runtime the default import is the class
// itself, for TypeScript it is the module. Take whichever is the constructor.
export const Pusher = ((PusherModule as { default?: unknown }).default ?? PusherModule) as typeof PusherModule.default;
export type PusherClient = InstanceType<typeof Pusher>;

/** The query string pusher-js 8 sends when it opens a socket. */
export const PUSHER_WS_QUERY = 'protocol=7&client=js&version=8.6.0&flash=false';

/** The URL pusher-js opens for app key `key` on a server at 127.0.0.1:port. */
export const pusherWsUrl = (port: number, key: string): string => `ws://127.0.0.1:${port}/app/${key}?${PUSHER_WS_QUERY}`;

/** pusher-js options for a server at 127.0.0.1:port: plain ws only, no stats, cluster named only because pusher-js wants one. */
export function localPusherOptions(port: number) {
  return { cluster: 'mt1', wsHost: '127.0.0.1', wsPort: port, forceTLS: false, enabledTransports: ['ws' as const], disableStats: true };
}
