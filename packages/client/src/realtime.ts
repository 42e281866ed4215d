// pusher-js against Parley's Pusher-protocol server: where to connect (the API's host and port unless told
// otherwise), and private channels authorized by POST /api/chat/v1/broadcasting/auth with the bearer token
// (docs/client-setup.md), through the client's own HTTP so a token refresh covers it too.
import PusherModule, { type Options } from 'pusher-js';
import type { Http } from './http.js';

// pusher-js ships CommonJS whose typings say `export default`: in Node the default import is the module
// (whose .default is the class), in bundlers the class itself. Take whichever is the constructor.
export const Pusher = ((PusherModule as unknown as { default?: unknown }).default ?? PusherModule) as typeof PusherModule.default;
export type PusherClient = InstanceType<typeof Pusher>;

export interface SocketOptions {
  appKey: string;
  wsHost?: string;
  wsPort?: number;
  forceTLS?: boolean;
  /** Any other pusher-js option, added last. */
  pusher?: Partial<Options>;
}

export function createPusher(http: Http, options: SocketOptions): PusherClient {
  const base = new URL(http.baseUrl);
  const tls = options.forceTLS ?? base.protocol === 'https:';
  const port = options.wsPort ?? (base.port ? Number(base.port) : tls ? 443 : 80);
  return new Pusher(options.appKey, {
    cluster: 'parley', // pusher-js requires one; wsHost decides where it connects
    wsHost: options.wsHost ?? base.hostname,
    wsPort: port,
    wssPort: port,
    forceTLS: tls,
    enabledTransports: [tls ? 'wss' : 'ws'], // the one scheme: else pusher-js tries a dropped ws:// again over wss:// too
    disableStats: true,
    channelAuthorization: {
      customHandler: ({ socketId, channelName }, callback) => {
        http
          .request<{ auth: string; channel_data?: string }>('POST', '/broadcasting/auth', { body: { socket_id: socketId, channel_name: channelName } })
          .then((auth) => callback(null, auth), (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null));
      },
    },
    ...options.pusher,
  });
}
