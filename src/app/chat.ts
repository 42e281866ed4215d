// The chat's context (database, broadcaster, limits, rate limiter, send queue, outbox) and its ephemeral
// state: who is online and who is typing, shared by the nodes through Redis when there is one.
import type { Logger } from 'pino';
import { blockedWords } from '../chat/blocked-words.js';
import type { ChatContext } from '../chat/context.js';
import { createSendQueue } from '../chat/messages.js';
import { createOnlineStatusService, type OnlineStatusService } from '../chat/online-status.js';
import { createRateLimiter } from '../chat/rate-limiter.js';
import { createTypingTracker, memoryTypingLeases, redisTypingLeases, type TypingTracker } from '../chat/typing.js';
import type { Config } from '../config/index.js';
import type { Broadcaster } from '../events/broadcaster.js';
import type { Notifications } from '../delivery/index.js';
import { memoryOnlineStatusTracker, redisOnlineStatusTracker, type OnlineStatusTracker } from '../online-status/tracker.js';
import { shareForgetting } from '../store/known-users.js';
import type { Stores } from './stores.js';

/** Users' last heartbeats (CHAT_PRESENCE_TIMEOUT_MS): the chat's online status, also asked by the deliverers. */
export function onlineStatus(config: Config, { redis }: Stores): OnlineStatusTracker {
  return redis ? redisOnlineStatusTracker(redis, config.presenceTimeoutMs) : memoryOnlineStatusTracker(config.presenceTimeoutMs);
}

export interface Chat {
  readonly chat: ChatContext;
  readonly typing: TypingTracker;
  readonly presence: OnlineStatusService;
  /** Stops the online-status sweep and the typing leases' timers. */
  stop(): void;
}

export async function createChat(config: Config, { database, redis, replicas }: Stores, broadcaster: Broadcaster, notifications: Notifications, online: OnlineStatusTracker, logger: Logger): Promise<Chat> {
  const chat: ChatContext = {
    db: database.db,
    copyOut: database.copyOut ?? undefined,
    broadcaster,
    limits: config.limits,
    rateLimiter: createRateLimiter(config, redis, logger),
    // PGlite has one connection: one lane. On PostgreSQL a few lanes keep several batches in flight.
    sends: createSendQueue({ db: database.db, broadcaster, notifications }, { lanes: database.kind === 'pglite' ? 1 : config.databaseSendLanes }),
    notifications,
    blockedWords: blockedWords(config.limits.blockedWords),
    forgetUser: await shareForgetting(database.db, redis, logger.child({ component: 'known-users' })),
    ...(replicas ? { replicas } : {}),
  };
  const typing = createTypingTracker(config.typingTimeoutMs, redis ? redisTypingLeases(redis) : memoryTypingLeases());
  const presence = createOnlineStatusService(online);
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
