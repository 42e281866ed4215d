// Authorizations: who a subscription belongs to, one of the four parts a realtime node is built with. The HTTP
// auth endpoint knows the user; the socket only shows a signature. The endpoint records (socket id, channel) →
// user id here, and the subscribe that follows claims it, so unsubscribeUser can later find that user's sockets
// (and on revocable channels, an old signature cannot be replayed). The interface is here, with a memory
// implementation for a node alone (memory.ts) and a Redis one for several nodes (redis.ts) side by side.
import type { MaybePromise } from '../maybe-promise.js';

/** How long an authorization waits for its subscribe before the ledger forgets it. */
export const REMEMBER_TTL_MS = 60_000;

/** Pending authorizations (socket id, channel) → user id. The memory ledger answers at once, the Redis one with promises. */
export interface AuthorizationLedger {
  remember(socketId: string, channel: string, userId: string): MaybePromise<void>;
  /** Returns and forgets the user id remembered for this socket and channel, if still fresh. */
  claim(socketId: string, channel: string): MaybePromise<string | undefined>;
  /** Forgets every pending authorization of userId for channel (the user lost access to it). */
  forgetUser(channel: string, userId: string): MaybePromise<void>;
  clear(): void;
}
