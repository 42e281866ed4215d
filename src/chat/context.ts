// What every use case is given: the database, the broadcaster, the limits, the send queue. Built once in src/app/chat.ts.
import type { Limits } from '../config/index.js';
import type { Broadcaster } from '../events/broadcaster.js';
import type { Notifications } from '../delivery/index.js';
import type { CopyOut } from '../store/copy-out.js';
import type { DB } from '../store/database.js';
import type { ForgetEverywhere } from '../store/known-users.js';
import type { ReadReplicas } from '../store/read-replicas.js';
import type { BlockedWords } from './blocked-words.js';
import type { SendQueue } from './messages.js';
import type { RateLimiter } from './rate-limiter.js';

export interface ChatContext {
  readonly db: DB;
  readonly broadcaster: Broadcaster;
  readonly limits: Limits;
  readonly rateLimiter: RateLimiter;
  /** Sends waiting to be written together (group commit). */
  readonly sends: SendQueue;
  /** The outbox rows (webhooks, push) of each action, written in its transaction (src/delivery). */
  readonly notifications?: Notifications;
  /** CHAT_BLOCKED_WORDS: checked on every message and edit (none when absent). */
  readonly blockedWords?: BlockedWords;
  /** Makes every node forget what it knew of a user (a ban, an erasure); this node only when absent. */
  readonly forgetUser?: ForgetEverywhere;
  /** DATABASE_REPLICA_URLS: where the reads that tolerate lag go (lagTolerant); all on db when absent. */
  readonly replicas?: ReadReplicas;
  /** PostgreSQL: a COPY's output as it arrives (a user's export); absent on the embedded database. */
  readonly copyOut?: CopyOut;
}

/**
 * Runs a read that tolerates lag (history, threads, pins, search, user search, exports) for `userId` (null: the
 * server's): on a read replica when one may serve it (store/read-replicas.ts: within the max lag, and not while
 * the user's own write may be missing there), else on the primary. fn must only read.
 */
export function lagTolerant<T>(ctx: ChatContext, userId: number | null, fn: (db: DB) => Promise<T>): Promise<T> {
  return ctx.replicas ? ctx.replicas.read(userId, fn) : fn(ctx.db);
}

/** Who is acting: the token's user, and the socket (X-Socket-ID) that must not receive the echo of its own action. */
export interface Actor {
  readonly userId: number;
  readonly socketId?: string;
}

/** The host app's backend (the server key): it acts for no user (the audit log's actor_id null) and has no socket. */
export const SERVER = { userId: null, socketId: undefined } as const;
export type ServerActor = typeof SERVER;
