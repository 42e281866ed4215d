// The realtime node's settings of one Pusher app, built from the Config (BROADCAST_*, CHAT_TRUSTED_PROXIES) and
// the app (the default one, or one of BROADCAST_APPS_FILE). Its parts (broker, presence, occupancy,
// authorizations), webhooks and logger are the composition's (src/app/builtin-server.ts).
import type { Config } from '../config/index.js';
import type { PusherAppConfig } from '../config/pusher-apps.js';
import { CHAT_CHANNEL_PREFIX, CONVERSATION_CHANNEL_PREFIX } from '../contract/channels.js';
import { PONG_TIMEOUT_SECONDS, type RealtimeSettings } from './node.js';

/** The settings that come from configuration; `chat`: the default app, which carries Parley's own channels. */
export type RealtimeConfigSettings = Omit<RealtimeSettings, 'broker' | 'presence' | 'occupancy' | 'authorizations' | 'webhooks' | 'logger'>;

export function realtimeSettingsFrom(config: Pick<Config, 'broadcast' | 'trustedProxies'>, app: PusherAppConfig & { readonly chat: boolean }): RealtimeConfigSettings {
  const { broadcast } = config;
  return {
    appKey: app.key,
    appSecret: app.secret,
    activityTimeoutSeconds: broadcast.activityTimeoutSeconds,
    pongTimeoutSeconds: PONG_TIMEOUT_SECONDS,
    maxMessageBytes: broadcast.maxMessageBytes,
    maxBufferedBytes: broadcast.maxBufferedBytes,
    maxConnections: app.maxConnections,
    maxConnectionsPerAddress: broadcast.maxConnectionsPerAddress,
    trustedProxies: config.trustedProxies,
    maxChannelsPerConnection: broadcast.maxChannelsPerConnection,
    maxFramesPerSecond: broadcast.maxFramesPerSecond,
    maxFrameBurst: broadcast.maxFrameBurst,
    maxPresenceMembers: broadcast.maxPresenceMembers,
    allowedOrigins: broadcast.allowedOrigins,
    clientEvents: { enabled: app.clientEvents, perSecond: broadcast.clientEventsPerSecond, maxDataBytes: broadcast.maxEventBytes },
    // Chat traffic goes through the HTTP API, where it is authorized, rate limited and blocked users are refused.
    serverOwnedChannelPrefixes: app.chat ? [CHAT_CHANNEL_PREFIX] : [],
    // Relaying another Parley's chat (BROADCAST_CHAT_CHANNELS=relay), that Parley authorizes and revokes them.
    revocableChannelPrefixes: app.chat && broadcast.chatChannels === 'own' ? [CONVERSATION_CHANNEL_PREFIX] : [],
  };
}
