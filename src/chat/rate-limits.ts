// Per-user fixed-window rate limits by action (sends, typing, heartbeats, channel auth). In memory: a node
// limits what it serves.
import { ChatError } from './errors.js';

export type RateLimitedAction = 'send' | 'typing' | 'heartbeat' | 'channel_auth';

export interface RateLimiter {
  /** Throws a 429 ChatError with a Retry-After when userId is over the limit for action. */
  consume(action: RateLimitedAction, userId: number): void;
}

const WINDOW_MS = 60_000;

export function createRateLimiter(perMinute: Record<RateLimitedAction, number>, now: () => number = Date.now): RateLimiter {
  let windowStart = now();
  let counts = new Map<string, number>();
  return {
    consume(action, userId) {
      const limit = perMinute[action];
      if (limit === 0) return; // 0 turns a limit off
      const t = now();
      if (t - windowStart >= WINDOW_MS) {
        windowStart = t;
        counts = new Map(); // the whole window is dropped at once: memory stays bounded by active users
      }
      const key = `${action}:${userId}`;
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      if (count > limit) {
        const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_MS - t) / 1000));
        throw new ChatError('rate_limited', `Too many ${action.replace('_', ' ')} requests; retry in ${retryAfterSeconds} s.`, {
          retryAfterSeconds,
        });
      }
    },
  };
}
