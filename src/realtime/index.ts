// The door of src/realtime, the built-in Pusher server: what the composition root and the HTTP layer take from
// it. The node (node.ts) and its four parts, each an interface with a memory and a Redis implementation side by
// side: broker/ (publications, orders and occupancy questions between nodes), presence/ (Pusher presence
// channel members), occupancy/ (occupied channels, for the webhooks) and authorizations/ (pending channel
// authorizations); parts.ts builds all four in memory or all in Redis. Beside them: the Pusher protocol in
// pusher/ (sockets, frames, signatures, and the Pusher HTTP API as a Fastify plugin, http-api.ts), the channel
// registry (channels.ts), Pusher app webhooks, several apps on one port (apps.ts), and the driver for an
// external Pusher server (external-pusher.ts, BROADCAST_DRIVER=pusher).
export { PONG_TIMEOUT_SECONDS, createRealtimeNode, type RealtimeNode, type RealtimeSettings, type RealtimeStats } from './node.js';
export { memoryParts, redisParts, type NodeParts } from './parts.js';
export type { Broker, BrokerHandler, NodeCommand, Publication } from './broker/broker.js';
export type { PresenceManager } from './presence/presence.js';
export type { OccupancyTracker } from './occupancy/occupancy.js';
export { REMEMBER_TTL_MS, type AuthorizationLedger } from './authorizations/authorizations.js';
export type { Occupancy, OccupancyQuery, OccupancyReport, PusherApiBackend } from './api-backend.js';
export { pusherHttpFanout, type PusherHttpFanout } from './external-pusher.js';
export { createWebhookSender, type WebhookSender } from './pusher-webhooks.js';
export { redisForApp, upgradeRouter } from './apps.js';
export { channelAuth, isValidSocketId, userAuth } from './pusher/signature.js';
export { pusherAuthorizer, type PusherAuthorizer } from './pusher/channel-authorizer.js';
export { PUSHER_API_LIMITS, pusherHttpApi, type PusherApiApp, type PusherApiOptions } from './pusher/http-api.js';
export { channelTypeOf, isValidChannelName } from './pusher/channel-types.js';
export { SERVER_TO_USER_PREFIX, serverToUserChannel } from './pusher/signin.js';
