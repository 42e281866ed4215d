// The door of src/realtime: what the composition root and the HTTP layer take from it. The node (node.ts) and
// the parts it is built with: a broker (fanout/local.ts, fanout/redis.ts), a presence store
// (shared-presence.ts, Redis in fanout/redis-presence.ts and fanout/redis-occupied.ts) and an authorization
// store (remembered-subscribers.ts, Redis in fanout/redis.ts); the Pusher HTTP API driver for an external
// server (fanout/pusher-http.ts), webhooks, several apps on one port (apps.ts), the signatures the HTTP auth
// endpoint gives out, and what the Pusher HTTP API routes check (request signatures, channel names).
export { PONG_TIMEOUT_SECONDS, REMEMBER_TTL_MS, createRealtimeNode, type RealtimeNode, type RealtimeSettings, type RealtimeStats } from './node.js';
export type { Broker, BrokerHandler, NodeCommand, Publication } from './broker.js';
export type { Occupancy, OccupancyQuery, OccupancyReport, PusherApiBackend } from './api-backend.js';
export { localBroker } from './fanout/local.js';
export { redisAuthorizationLedger, redisBroker, redisPresence } from './fanout/redis.js';
export { pusherHttpFanout, type PusherHttpFanout } from './fanout/pusher-http.js';
export { LOCAL_PRESENCE, type PresenceStore, type SharedPresence } from './shared-presence.js';
export { RememberedSubscribers, type AuthorizationLedger } from './remembered-subscribers.js';
export { createWebhookSender, type WebhookSender } from './webhooks.js';
export { redisForApp, upgradeRouter } from './apps.js';
export { channelAuth, isValidSocketId, userAuth } from './pusher/signature.js';
export { verifyApiRequest } from './pusher/api-signature.js';
export { channelTypeOf, isValidChannelName } from './pusher/channel-types.js';
export { SERVER_TO_USER_PREFIX, serverToUserChannel } from './pusher/signin.js';
