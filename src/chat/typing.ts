// Typing indication: relayed at once; a start not renewed within the timeout is ended by the server itself.
// The latest start holds a lease; only the timer of the lease still current sends the closing `false`, so a
// renewal on another node (leases in Redis) is never cut short, and the closing event goes out once.
import { randomUUID } from 'node:crypto';
import { event } from '../events/catalog.js';
import type { RedisConnections } from '../redis/connections.js';
import { refuseIfDirectBlocked, requireParticipant } from './access.js';
import type { Actor, ChatContext } from './context.js';

export interface TypingLeases {
  /** Takes the lease for key, replacing any other. */
  take(key: string, token: string, ttlMs: number): Promise<void>;
  /** Releases the lease if token (or, with no token, anyone) holds it; true when it was held. */
  release(key: string, token?: string): Promise<boolean>;
}

export function memoryTypingLeases(): TypingLeases {
  const leases = new Map<string, string>();
  return {
    async take(key, token) {
      leases.set(key, token);
    },
    async release(key, token) {
      const holder = leases.get(key);
      if (holder === undefined || (token !== undefined && holder !== token)) return false;
      leases.delete(key);
      return true;
    },
  };
}

const RELEASE_IF_HELD = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export function redisTypingLeases(redis: RedisConnections): TypingLeases {
  const keyOf = (key: string) => `${redis.prefix}typing:${key}`;
  return {
    async take(key, token, ttlMs) {
      await redis.commands.set(keyOf(key), token, 'PX', ttlMs * 2);
    },
    async release(key, token) {
      const released = token === undefined ? await redis.commands.del(keyOf(key)) : await redis.commands.eval(RELEASE_IF_HELD, 1, keyOf(key), token);
      return released === 1;
    },
  };
}

export interface TypingTracker {
  signal(ctx: ChatContext, actor: Actor, conversationId: number, isTyping: boolean): Promise<void>;
  /** Cancel every pending expiry on this node (shutdown). */
  stop(): void;
}

export function createTypingTracker(timeoutMs: number, leases: TypingLeases = memoryTypingLeases()): TypingTracker {
  const timers = new Map<string, NodeJS.Timeout>();

  function clearTimer(key: string): void {
    clearTimeout(timers.get(key));
    timers.delete(key);
  }

  return {
    async signal(ctx, actor, conversationId, isTyping) {
      await ctx.rateLimiter.consume('typing', actor.userId);
      const membership = await requireParticipant(ctx.db, conversationId, actor.userId);
      // A blocked pair cannot start typing at each other; stopping is always allowed.
      if (isTyping) await refuseIfDirectBlocked(ctx.db, membership, actor.userId);
      const key = `${conversationId}:${actor.userId}`;
      const payload = { conversation_id: conversationId, user_id: actor.userId, is_typing: isTyping };
      clearTimer(key);
      if (isTyping) {
        const token = randomUUID();
        await leases.take(key, token, timeoutMs);
        const timer = setTimeout(() => {
          timers.delete(key);
          leases
            .release(key, token)
            .then(async (held) => {
              if (held) await ctx.broadcaster.dispatch([event('UserTyping', conversationId, { ...payload, is_typing: false })]);
            })
            .catch(() => {}); // Redis away: the client's own stop, or its next start, settles it
        }, timeoutMs);
        timer.unref();
        timers.set(key, timer);
      } else {
        await leases.release(key);
      }
      await ctx.broadcaster.dispatch([event('UserTyping', conversationId, payload)], actor.socketId);
    },
    stop() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
