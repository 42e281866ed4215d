// Rate limits by action, per user (per address for failed authentication): at most N requests in any 60 s (a
// sliding window). In memory, a node limits what it serves; with Redis (REDIS_URL), the nodes of a deployment
// share one log per user and action, so a user gets the limit once however many nodes serve them.
//
// The log holds the times of the requests of the last minute (at most N per user and action), so the answer is
// exact: a request is refused while N were counted in the last 60 s, and Retry-After says when the oldest of them
// leaves the window (1 to 60 s). A refused request is not counted, so a client that waits as told gets through.
import { randomBytes } from 'node:crypto';
import type { RedisConnections } from '../store/redis.js';
import { ChatError } from './errors.js';

export const RATE_LIMITED_ACTIONS = [
  'send',
  'typing',
  'heartbeat',
  'channel_auth',
  'edit',
  'read',
  'conversation',
  'upload',
  'block',
  'write',
  'search',
  'history',
  'auth_failure',
] as const;
export type RateLimitedAction = (typeof RATE_LIMITED_ACTIONS)[number];

/** Requests per minute by action; 0 turns that limit off. */
export type RateLimits = Readonly<Record<RateLimitedAction, number>>;

/** Every limit off (tests, tools). */
export const NO_RATE_LIMITS: RateLimits = Object.freeze(Object.fromEntries(RATE_LIMITED_ACTIONS.map((action) => [action, 0])) as Record<RateLimitedAction, number>);

/** What a 429 says was too much. */
const WHAT: Record<RateLimitedAction, string> = {
  send: 'messages sent',
  typing: 'typing signals',
  heartbeat: 'presence signals',
  channel_auth: 'channel authorizations',
  edit: 'message edits and deletions',
  read: 'read marks',
  conversation: 'conversation and group changes',
  upload: 'uploads',
  block: 'blocks and unblocks',
  write: 'requests',
  search: 'searches',
  history: 'history pages',
  auth_failure: 'failed authentications from this address',
};

export interface RateLimiter {
  /**
   * Counts one request of subject (a user id; an address for auth_failure) against action's limit; rejects with
   * a 429 ChatError carrying Retry-After when it is over, and then does not count it.
   */
  consume(action: RateLimitedAction, subject: number | string): Promise<void>;
}

export const WINDOW_MS = 60_000;

function refusal(action: RateLimitedAction, waitMs: number): ChatError {
  const retryAfterSeconds = Math.min(WINDOW_MS / 1000, Math.max(1, Math.ceil(waitMs / 1000)));
  return new ChatError('rate_limited', `Too many ${WHAT[action]}; retry in ${retryAfterSeconds} s.`, { retryAfterSeconds });
}

/**
 * One node's limits, in its memory: per user and action, the times of the requests of the last minute.
 * Memory stays bounded: a key untouched for a whole minute is dropped at the next minute's turn.
 */
export function memoryRateLimiter(limits: RateLimits, now: () => number = Date.now): RateLimiter {
  let minute = Math.floor(now() / WINDOW_MS);
  let touched = new Map<string, number[]>(); // keys used this minute
  let before = new Map<string, number[]>(); // keys used the minute before
  return {
    async consume(action, subject) {
      const limit = limits[action];
      if (!limit) return; // 0 turns a limit off
      const t = now();
      const index = Math.floor(t / WINDOW_MS);
      if (index !== minute) {
        before = index === minute + 1 ? touched : new Map();
        touched = new Map();
        minute = index;
      }
      const key = `${action}:${subject}`;
      const times = touched.get(key) ?? before.get(key) ?? [];
      touched.set(key, times);
      let expired = 0;
      while (expired < times.length && times[expired]! <= t - WINDOW_MS) expired++;
      if (expired > 0) times.splice(0, expired);
      if (times.length >= limit) throw refusal(action, times[times.length - limit]! + WINDOW_MS - t);
      times.push(t);
    },
  };
}

// The shared log of one user and action: a sorted set of request times. KEYS: the set. ARGV: now (ms), the
// window (ms), the limit, a member unique to this request. {1}: counted; {0, ms}: refused, fits again in ms.
const CONSUME_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, math.ceil(tonumber(oldest[2]) + window - now)}
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return {1}
`;

type ConsumeCommand = (key: string, now: number, window: number, limit: number, member: string) => Promise<[number, number?]>;

export interface RedisRateLimiterOptions {
  /** How long a Redis answer may take before the node decides alone (default 250 ms). */
  readonly timeoutMs?: number;
  /** Hears Redis failures (the limiter then falls back to the node's own memory). */
  readonly onError?: (err: unknown) => void;
  readonly now?: () => number;
}

/**
 * The limits shared by every node through Redis: one script per request counts and decides atomically. While
 * Redis fails or is slow, each node limits on its own (memoryRateLimiter): fail open to the per-node limit,
 * never to none and never to a 503.
 */
export function redisRateLimiter(redis: RedisConnections, limits: RateLimits, options: RedisRateLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 250;
  const local = memoryRateLimiter(limits, now);
  const commands = redis.commands as unknown as { parleyRateLimit?: ConsumeCommand; defineCommand(name: string, def: { numberOfKeys: number; lua: string }): void };
  if (!commands.parleyRateLimit) commands.defineCommand('parleyRateLimit', { numberOfKeys: 1, lua: CONSUME_SCRIPT });
  const consume = commands.parleyRateLimit!.bind(commands);

  let sequence = 0;
  const node = randomBytes(6).toString('hex');

  async function shared(action: RateLimitedAction, subject: number | string, limit: number): Promise<ChatError | null> {
    const t = now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const key = `${redis.prefix}ratelimit:${action}:${subject}`;
      const [counted, waitMs = WINDOW_MS] = await Promise.race([consume(key, t, WINDOW_MS, limit, `${t}:${node}:${sequence++}`), timeout]);
      return counted === 1 ? null : refusal(action, waitMs);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async consume(action, subject) {
      const limit = limits[action];
      if (!limit) return;
      let refused: ChatError | null;
      try {
        refused = await shared(action, subject, limit);
      } catch (err) {
        options.onError?.(err);
        return local.consume(action, subject);
      }
      if (refused) throw refused;
    },
  };
}
