// What a node remembers between requests of the same user, so that a request with a token it has seen costs
// neither a JWT verification (about 70 µs of CPU) nor a database round trip:
//
//  - verified tokens: the token string → its user id, expiry and profile claims. Only a token that verified
//    (signature and claims) is kept, under its exact string, and it is used only while jose would still
//    accept it: `exp` is compared as jose does, so a cached token expires at the same second.
//  - known users (store/known-users.ts): per database, the profile each user had when this node last read or wrote it.
//
// Bounded, least recently used first out.
import { LruCache } from '../util/lru-cache.js';

export const TOKEN_CACHE_SIZE = 10_000;

export interface TokenClaims {
  readonly name?: string;
  readonly avatar_url?: string | null;
}

export interface VerifiedToken {
  readonly userId: number;
  /** The `exp` claim (seconds since the epoch); every accepted token has one. */
  readonly exp: number;
  readonly claims: TokenClaims;
}

/** Is a verified token still accepted now? jose's own test: rejected once exp <= floor(now in seconds). */
export function stillValid(token: VerifiedToken, nowMs: number = Date.now()): boolean {
  return !(token.exp <= Math.floor(nowMs / 1000));
}

/** Verified tokens of one authenticator (one secret). */
export class TokenCache {
  readonly #tokens: LruCache<string, VerifiedToken>;
  /** Lookups answered from the cache, those that were not, and the verifications kept (one per token verified). */
  readonly stats = { hits: 0, misses: 0, verified: 0 };

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
    this.stats.verified++;
    this.#tokens.set(token, verified);
  }
}
