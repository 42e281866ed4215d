// The chat's context (database, broadcaster, limits, rate limits, send queue, outbox) and its ephemeral
// state: who is online and who is typing, shared by the nodes through Redis when there is one.
import type { Logger } from 'pino';
import { blockedWords } from '../chat/blocked-words.js';
import type { ChatContext } from '../chat/context.js';
import { createSendQueue } from '../chat/messages.js';
import { createPresenceService, type PresenceService } from '../chat/presence.js';
import { memoryRateLimiter, redisRateLimiter, type RateLimiter, type RateLimits } from '../chat/rate-limits.js';
import { createTypingTracker, memoryTypingLeases, redisTypingLeases, type TypingTracker } from '../chat/typing.js';
import type { Config } from '../config/index.js';
import type { Broadcaster } from '../events/broadcaster.js';
import type { Notifications } from '../delivery/index.js';
import { memoryPresenceTracker, redisPresenceTracker, type PresenceTracker } from '../presence/tracker.js';
import { shareForgetting } from '../store/known-users.js';
import type { Stores } from './stores.js';

/** Users' last heartbeats (CHAT_PRESENCE_TIMEOUT_MS): the chat's online status, also asked by the deliverers. */
export function onlineStatus(config: Config, { redis }: Stores): PresenceTracker {
  return redis ? redisPresenceTracker(redis, config.presenceTimeoutMs) : memoryPresenceTracker(config.presenceTimeoutMs);
}

export interface Chat {
  readonly chat: ChatContext;
  readonly typing: TypingTracker;
  readonly presence: PresenceService;
  /** Stops the online-status sweep and the typing leases' timers. */
  stop(): void;
}

export async function createChat(config: Config, { database, redis }: Stores, broadcaster: Broadcaster, notifications: Notifications, online: PresenceTracker, logger: Logger): Promise<Chat> {
  const chat: ChatContext = {
    db: database.db,
    broadcaster,
    limits: config.limits,
    rateLimiter: rateLimiter(config, redis, logger),
    // PGlite has one connection: one lane. On PostgreSQL a few lanes keep several batches in flight.
    sends: createSendQueue({ db: database.db, broadcaster, notifications }, { lanes: database.kind === 'pglite' ? 1 : config.databaseSendLanes }),
    notifications,
    blockedWords: blockedWords(config.limits.blockedWords),
    forgetUser: await shareForgetting(database.db, redis, logger.child({ component: 'known-users' })),
  };
  const typing = createTypingTracker(config.typingTimeoutMs, redis ? redisTypingLeases(redis) : memoryTypingLeases());
  const presence = createPresenceService(online);
  // With Redis every node sweeps, and each expiry is claimed by exactly one of them.
  const sweep = setInterval(() => {
    presence.sweep(chat).catch((err: unknown) => logger.warn({ err }, 'presence sweep failed'));
  }, config.presenceSweepMs);
  sweep.unref();
  return {
    chat,
    typing,
    presence,
    stop() {
      clearInterval(sweep);
      typing.stop();
    },
  };
}

/** The rate limits (CHAT_RATE_*): shared by the nodes through Redis when there is one, else this node's own. */
function rateLimiter(config: Config, redis: Stores['redis'], logger: Logger): RateLimiter {
  const { limits } = config;
  const perMinute: RateLimits = {
    send: limits.sendsPerMinute,
    typing: limits.typingPerMinute,
    heartbeat: limits.heartbeatsPerMinute,
    channel_auth: limits.channelAuthsPerMinute,
    edit: limits.editsPerMinute,
    read: limits.readsPerMinute,
    conversation: limits.conversationChangesPerMinute,
    group_create: limits.groupsPerHour, // per hour: see WINDOWS_MS
    upload: limits.uploadsPerMinute,
    block: limits.blocksPerMinute,
    write: limits.otherWritesPerMinute,
    search: limits.searchesPerMinute,
    history: limits.historyPagesPerMinute,
    auth_failure: limits.authFailuresPerMinute,
  };
  if (!redis) return memoryRateLimiter(perMinute);
  let warnedAt = 0;
  return redisRateLimiter(redis, perMinute, {
    // Redis away or slow: this node limits on its own meanwhile (fail open to the per-node limit). Said once in 10 s.
    onError: (err) => {
      if (Date.now() - warnedAt < 10_000) return;
      warnedAt = Date.now();
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'rate limits: Redis unavailable, limiting per node');
    },
  });
}
