// Rate limits by action, per user (per address for failed authentication): at most N requests in any 60 s (a
// sliding window), or in any hour for the actions of WINDOWS_MS (creating groups). In memory, a node limits what
// it serves; with Redis (REDIS_URL), the nodes of a deployment share one log per user and action, so a user gets
// the limit once however many nodes serve them.
//
// The log holds the times of the requests of the last window (at most N per user and action), so the answer is
// exact: a request is refused while N were counted in the window, and Retry-After says when the oldest of them
// leaves it (1 s to the window). A refused request is not counted, so a client that waits as told gets through.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { RedisConnections } from '../redis/connections.js';
import { ChatError } from '../contract/api-errors.js';

export const RATE_LIMITED_ACTIONS = [
  'send',
  'typing',
  'heartbeat',
  'channel_auth',
  'edit',
  'read',
  'conversation',
  'group_create',
  'upload',
  'block',
  'write',
  'search',
  'history',
  'auth_failure',
] as const;
export type RateLimitedAction = (typeof RATE_LIMITED_ACTIONS)[number];

/** Requests per window (a minute; an hour for the actions of WINDOWS_MS) by action; 0 turns that limit off. */
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
  group_create: 'groups created',
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

/** The actions counted over a longer window than a minute: creating groups, per hour (CHAT_RATE_GROUPS_PER_HOUR). */
export const WINDOWS_MS: Readonly<Partial<Record<RateLimitedAction, number>>> = { group_create: 3_600_000 };

export const windowOf = (action: RateLimitedAction): number => WINDOWS_MS[action] ?? WINDOW_MS;

function refusal(action: RateLimitedAction, waitMs: number): ChatError {
  const retryAfterSeconds = Math.min(windowOf(action) / 1000, Math.max(1, Math.ceil(waitMs / 1000)));
  return new ChatError('rate_limited', `Too many ${WHAT[action]}; retry in ${retryAfterSeconds} s.`, { retryAfterSeconds });
}

/** The logs of the actions of one window length, in memory, turned over once per window (see memoryRateLimiter). */
interface Generations {
  index: number;
  touched: Map<string, number[]>; // keys used in this period of one window
  before: Map<string, number[]>; // keys used in the period before
}

/**
 * One node's limits, in its memory: per user and action, the times of the requests of the last window.
 * Memory stays bounded: a key untouched for a whole window is dropped at the next window's turn.
 */
export function memoryRateLimiter(limits: RateLimits, now: () => number = Date.now): RateLimiter {
  const byWindow = new Map<number, Generations>();
  return {
    async consume(action, subject) {
      const limit = limits[action];
      if (!limit) return; // 0 turns a limit off
      const t = now();
      const window = windowOf(action);
      const index = Math.floor(t / window);
      let logs = byWindow.get(window);
      if (logs === undefined) byWindow.set(window, (logs = { index, touched: new Map(), before: new Map() }));
      if (index !== logs.index) {
        logs.before = index === logs.index + 1 ? logs.touched : new Map();
        logs.touched = new Map();
        logs.index = index;
      }
      const key = `${action}:${subject}`;
      const times = logs.touched.get(key) ?? logs.before.get(key) ?? [];
      logs.touched.set(key, times);
      let expired = 0;
      while (expired < times.length && times[expired]! <= t - window) expired++;
      if (expired > 0) times.splice(0, expired);
      if (times.length >= limit) throw refusal(action, times[times.length - limit]! + window - t);
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
      const window = windowOf(action);
      const [counted, waitMs = window] = await Promise.race([consume(key, t, window, limit, `${t}:${node}:${sequence++}`), timeout]);
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

/** The limits of CHAT_RATE_* (config.limits) by action. */
export function rateLimitsFrom({ limits }: Pick<Config, 'limits'>): RateLimits {
  return {
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
}

/** The rate limiter of the configuration: shared by the nodes through Redis when there is one, else this node's own. */
export function createRateLimiter(config: Pick<Config, 'limits'>, redis: RedisConnections | null, logger: Logger): RateLimiter {
  const limits = rateLimitsFrom(config);
  if (!redis) return memoryRateLimiter(limits);
  let warnedAt = 0;
  return redisRateLimiter(redis, limits, {
    // Redis away or slow: this node limits on its own meanwhile (fail open to the per-node limit). Said once in 10 s.
    onError: (err) => {
      if (Date.now() - warnedAt < 10_000) return;
      warnedAt = Date.now();
      logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'rate limits: Redis unavailable, limiting per node');
    },
  });
}
