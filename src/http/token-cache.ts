// What a node remembers between requests of the same user, so that a request with a token it has seen costs
// neither a JWT verification (about 70 µs of CPU) nor a database round trip:
//
//  - verified tokens: the token string → its user id, expiry and profile claims. Only a token that verified
//    (signature and claims) is kept, under its exact string, and it is used only while jose would still
//    accept it: `exp` is compared as jose does, so a cached token expires at the same second.
//  - known users: per database, the profile (name, avatar_url) each user had when this node last read or
//    wrote it. A token whose claims equal it needs no SELECT; claims that differ are written.
//
// Users are never deleted, so "known to exist" stays true. The profile can go stale when another node (or
// anything but upsertUser here) writes the user: PUT /users/{id} on another node does not reach this cache.
// That is accepted: the cache only decides whether a token's claims are written, and what it leaves out is
// a token's claims that this node already saw written, i.e. not news. So after a PUT on node B, a request on
// node A with a token whose claims A has already applied keeps the PUT's profile (as it should: it is newer
// than the token), while a token with claims that are new to A still updates the user, as on one node. Both
// caches are bounded, least recently used first out.
import type { DB } from '../store/database.js';

/** A Map with a bound: reading an entry makes it the most recent; past the capacity, the least recent goes. */
export class LruCache<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.capacity) this.#map.delete(this.#map.keys().next().value as K);
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}

export const TOKEN_CACHE_SIZE = 10_000;
export const USER_CACHE_SIZE = 10_000;

export interface TokenClaims {
  readonly name?: string;
  readonly avatar_url?: string | null;
}

export interface VerifiedToken {
  readonly userId: number;
  /** The `exp` claim (seconds since the epoch), or undefined: then jose accepts the token for ever. */
  readonly exp: number | undefined;
  readonly claims: TokenClaims;
}

/** Is a verified token still accepted now? jose's own test: rejected once exp <= floor(now in seconds). */
export function stillValid(token: VerifiedToken, nowMs: number = Date.now()): boolean {
  return token.exp === undefined || !(token.exp <= Math.floor(nowMs / 1000));
}

/** Verified tokens of one authenticator (one secret). */
export class TokenCache {
  readonly #tokens: LruCache<string, VerifiedToken>;
  /** Lookups answered from the cache, and those that were not (a verification follows). */
  readonly stats = { hits: 0, misses: 0 };

  constructor(capacity = TOKEN_CACHE_SIZE) {
    this.#tokens = new LruCache(capacity);
  }

  get size(): number {
    return this.#tokens.size;
  }

  /** The token's verification, if it was verified here and has not expired since. */
  get(token: string): VerifiedToken | undefined {
    const verified = this.#tokens.get(token);
    if (verified !== undefined && stillValid(verified)) {
      this.stats.hits++;
      return verified;
    }
    if (verified !== undefined) this.#tokens.delete(token);
    this.stats.misses++;
    return undefined;
  }

  set(token: string, verified: VerifiedToken): void {
    this.#tokens.set(token, verified);
  }
}

export interface KnownProfile {
  readonly name: string;
  readonly avatar_url: string | null;
}

// Per database (its root Kysely instance): tests and tools may run several apps in one process.
const knownUsersByDb = new WeakMap<DB, LruCache<number, KnownProfile>>();

function knownUsers(db: DB): LruCache<number, KnownProfile> | null {
  // A transaction's writes may still be rolled back, and it is another Kysely instance: not cached.
  if (db.isTransaction) return null;
  let users = knownUsersByDb.get(db);
  if (!users) knownUsersByDb.set(db, (users = new LruCache(USER_CACHE_SIZE)));
  return users;
}

/** The profile this node last read or wrote for a user, if it remembers one. */
export function knownUser(db: DB, id: number): KnownProfile | undefined {
  return knownUsers(db)?.get(id);
}

/** Remembers a user's profile as just read from, or written to, the database (not in a transaction). */
export function rememberUser(db: DB, id: number, profile: KnownProfile): void {
  knownUsers(db)?.set(id, { name: profile.name, avatar_url: profile.avatar_url });
}

export function forgetUser(db: DB, id: number): void {
  knownUsers(db)?.delete(id);
}

/** Would writing these claims change the profile? (A claim that is absent changes nothing.) */
export function claimsDiffer(claims: TokenClaims, profile: KnownProfile): boolean {
  return (claims.name !== undefined && claims.name !== profile.name) || (claims.avatar_url !== undefined && claims.avatar_url !== profile.avatar_url);
}
