// Where events go: the built-in server's default app, the external Pusher server's HTTP API
// (BROADCAST_DRIVER=pusher), or the log (BROADCAST_DRIVER=log); and the channel authorizations browsers get for it.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { createBroadcaster, logFanout, type Broadcaster, type Fanout } from '../events/broadcaster.js';
import type { ChannelAuthorizer } from '../http/deps.js';
import type { Metrics } from '../ops/metrics.js';
import { pusherAuthorizer, pusherHttpFanout, type PusherHttpFanout } from '../realtime/index.js';
import type { PusherApp } from './builtin-server.js';

export interface Broadcast {
  readonly broadcaster: Broadcaster;
  /** Signs channel and user authorizations for the server the browsers connect to. */
  readonly channels: ChannelAuthorizer;
  /** BROADCAST_DRIVER=pusher's HTTP client; null otherwise. */
  readonly pusherHttp: PusherHttpFanout | null;
}

export async function startBroadcast(config: Config, apps: readonly PusherApp[], metrics: Metrics, logger: Logger): Promise<Broadcast> {
  const defaultApp = apps[0];
  let fanout: Fanout = defaultApp?.realtime ?? logFanout(logger.child({ component: 'broadcast' }));
  // BROADCAST_DRIVER=pusher: no socket server here; events go to the external server's HTTP API.
  let pusherHttp: PusherHttpFanout | null = null;
  if (config.pusher) {
    pusherHttp = await pusherHttpFanout({
      ...config.pusher,
      logger: logger.child({ component: 'pusher-http' }),
      metrics: metrics.pusher,
      bodyMaxChars: config.limits.bodyMaxChars,
    });
    fanout = pusherHttp;
  }
  // Channel authorizations are signed for the server the browsers connect to.
  const { appKey, appSecret } = config.broadcast;
  const signing = config.pusher ? { key: config.pusher.key, secret: config.pusher.secret } : { key: appKey, secret: appSecret };
  const authorizer = pusherAuthorizer(signing, defaultApp?.authorizations);
  const channels: ChannelAuthorizer = {
    authorize: (socketId, channelName, actor) => authorizer.authorizeChannel(socketId, channelName, String(actor.userId)),
    authenticateUser: (socketId, actor) => authorizer.authenticateUser(socketId, String(actor.userId)),
  };
  return { broadcaster: createBroadcaster(fanout, logger, metrics.eventDispatched), channels, pusherHttp };
}
