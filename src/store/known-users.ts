// The users this node knows, per database: each one's profile as this node last read or wrote it, and that they
// were neither banned nor erased then (an erased user is known as erased: that is for good). A token's request
// whose user is known costs no query at all (store/users.ts ensureUser); a banned user is never known, so each of
// their requests reads their ban again until it is lifted or runs out.
//
// A ban or an erasure on any node makes every node forget the user (forgetEverywhere, after its commit, through
// Redis when nodes share one): the next request of theirs reads their standing again. Two guards keep a stale
// entry out: a read that started before a forget is not remembered after it (the generation), and while this node
// cannot hear the others' forgets (its Redis subscription down) it remembers nothing and forgets everything once
// it hears again.
import type { Logger } from 'pino';
import { LruCache } from '../util/lru-cache.js';
import type { DB } from './database.js';
import type { RedisConnections } from '../redis/connections.js';

export interface KnownUser {
  readonly name: string;
  readonly avatar_url: string | null;
  /** Erased (DELETE /users/{id}): the profile is "Deleted user" for good and the user's tokens are refused. */
  readonly erased?: boolean;
}

export const KNOWN_USERS_PER_NODE = 10_000;

class KnownUsers {
  readonly users = new LruCache<number, KnownUser>(KNOWN_USERS_PER_NODE);
  /** Grows at every forget: a read begun at an older generation may predate the ban that caused it. */
  generation = 0;
  /** Whether this node hears the other nodes' forgets (always, on its own). */
  hearing: () => boolean = () => true;

  forget(id?: number): void {
    this.generation++;
    if (id === undefined) this.users.clear();
    else this.users.delete(id);
  }
}

// Per database (its root Kysely instance): tests and tools may run several apps in one process.
const byDb = new WeakMap<DB, KnownUsers>();

function stateOf(db: DB): KnownUsers {
  let state = byDb.get(db);
  if (!state) byDb.set(db, (state = new KnownUsers()));
  return state;
}

/** What this node knows of the user; nothing inside a transaction (its writes may roll back) or while it is deaf. */
export function knownUser(db: DB, id: number): KnownUser | undefined {
  if (db.isTransaction) return undefined;
  const state = stateOf(db);
  return state.hearing() ? state.users.get(id) : undefined;
}

/** The generation to hand to `rememberUser` for a read about to start. */
export function readGeneration(db: DB): number {
  return stateOf(db).generation;
}

/** Remembers a user read or written at `since` (readGeneration), unless a forget came in the meantime. */
export function rememberUser(db: DB, id: number, user: KnownUser, since: number): void {
  if (db.isTransaction) return;
  const state = stateOf(db);
  if (state.generation === since && state.hearing()) state.users.set(id, user);
}

/** Forgets the user on this node only (see forgetEverywhere). */
export function forgetKnownUser(db: DB, id: number): void {
  stateOf(db).forget(id);
}

/** Makes every node forget a user (a ban, an erasure): this one at once, the others through Redis. */
export type ForgetEverywhere = (userId: number) => Promise<void>;

/**
 * Forgetting shared by the nodes of one deployment over Redis pub/sub: returns how to forget a user on every
 * node. Without Redis (one node) forgetting is local.
 */
export async function shareForgetting(db: DB, redis: RedisConnections | null, logger: Logger): Promise<ForgetEverywhere> {
  if (!redis) return async (userId) => forgetKnownUser(db, userId);
  const topic = `${redis.prefix}known-users:forget`;
  const state = stateOf(db);
  const { subscriber } = redis;
  subscriber.on('message', (channel: string, message: string) => {
    if (channel === topic) state.forget(Number(message));
  });
  // After a reconnection forgets may have been missed: once subscribed again, forget everything.
  subscriber.on('ready', () => {
    subscriber.subscribe(topic).then(
      () => state.forget(),
      (err: unknown) => logger.warn({ err: (err as Error).message }, 'known users: subscribing again failed'),
    );
  });
  await subscriber.subscribe(topic);
  state.hearing = () => subscriber.status === 'ready';
  return async (userId) => {
    state.forget(userId);
    try {
      await redis.commands.publish(topic, String(userId));
    } catch (err) {
      // The ban is committed; the send function refuses the user's messages on every node regardless.
      logger.error({ err: (err as Error).message, userId }, 'telling the other nodes to forget a user failed');
    }
  };
}
