import type { Config } from '../config/index.js';
import type { Actor, ChatContext } from '../chat/context.js';
import type { OnlineStatusService } from '../chat/online-status.js';
import type { PushSettings } from '../delivery/web-push/subscriptions.js';
import type { TypingTracker } from '../chat/typing.js';
import type { AttachmentStorage } from '../store/attachment-storage.js';
import type { Metrics } from '../ops/metrics.js';
import type { PusherApiApp } from '../realtime/index.js';
import type { TokenIssuer } from './auth.js';

/** Signs channel subscriptions and tells the socket server whose subscription it will be. */
export interface ChannelAuthorizer {
  authorize(socketId: string, channelName: string, actor: Actor): Promise<string>;
  /** Signs a pusher:signin for the actor: `user_data` is `{"id":"<user id>"}`. */
  authenticateUser(socketId: string, actor: Actor): { auth: string; user_data: string };
}

/** Everything the routes use, built once in src/app/. */
export interface HttpDeps {
  readonly config: Config;
  readonly chat: ChatContext;
  readonly typing: TypingTracker;
  readonly presence: OnlineStatusService;
  readonly storage: AttachmentStorage;
  readonly tokens: TokenIssuer;
  readonly channels: ChannelAuthorizer;
  readonly metrics: Metrics;
  /** The Pusher HTTP API's apps on the built-in server (BROADCAST_DRIVER=builtin), the default first; without them the API is not served. */
  readonly pusherApi?: readonly PusherApiApp[];
  /** Web Push: the VAPID public key and which endpoints are accepted; without it the push routes are not served. */
  readonly push?: PushSettings;
  /** Readiness checks by dependency name (database, redis): each resolves when reachable. */
  readonly readiness: Record<string, () => Promise<void>>;
}
