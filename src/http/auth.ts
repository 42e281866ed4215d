// Who is calling: a user with a JWT (HS256, sub = user id, exp required; iss and aud when configured; a lifetime
// of at most CHAT_JWT_MAX_TTL_S), or the host app's backend with the server key.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { Actor } from '../chat/context.js';
import { ChatError, invalid } from '../contract/api-errors.js';
import type { JwtPolicy } from '../config/index.js';
import { settingDefault } from '../config/settings.js';
import { USER_AVATAR_URL_MAX_CHARS, USER_NAME_MAX_CHARS, ensureUser } from '../chat/users.js';
import { wellFormed } from '../chat/text.js';
import { isValidSocketId } from '../realtime/index.js';
import type { DB } from '../store/database.js';
import { TokenCache, type VerifiedToken } from './token-cache.js';

declare module 'fastify' {
  interface FastifyRequest {
    actor: Actor;
  }
}

const MAX_USER_ID = Number.MAX_SAFE_INTEGER;

export function parseUserId(sub: unknown): number | null {
  if (typeof sub !== 'string' || !/^[1-9]\d{0,15}$/.test(sub)) return null;
  const id = Number(sub);
  return id <= MAX_USER_ID ? id : null;
}

export interface TokenIssuer {
  /** Throws a 422 ChatError (ttl_seconds) when ttlSeconds exceeds the policy's maxTtlSeconds. */
  issue(userId: number, options?: { name?: string; avatarUrl?: string; ttlSeconds?: number }): Promise<{ token: string; expiresAt: Date }>;
}

/** A token's lifetime when none is asked for (or the maximum, if that is shorter). */
export const DEFAULT_TOKEN_TTL_SECONDS = 24 * 3600;

/** What a policy leaves out is the settings' default: no issuer or audience, CHAT_JWT_MAX_TTL_S's default. */
function fullPolicy(policy: Partial<JwtPolicy>): JwtPolicy {
  return { issuer: policy.issuer ?? null, audience: policy.audience ?? null, maxTtlSeconds: policy.maxTtlSeconds ?? settingDefault('CHAT_JWT_MAX_TTL_S') };
}

/** Tokens as Parley's own verification accepts them: with iat and exp, and iss and aud when the policy names them. */
export function createTokenIssuer(secret: string, policy: Partial<JwtPolicy> = {}): TokenIssuer {
  const key = new TextEncoder().encode(secret);
  const { issuer, audience, maxTtlSeconds } = fullPolicy(policy);
  return {
    async issue(userId, { name, avatarUrl, ttlSeconds = Math.min(DEFAULT_TOKEN_TTL_SECONDS, maxTtlSeconds) } = {}) {
      if (ttlSeconds > maxTtlSeconds) {
        throw invalid('ttl_seconds', `ttl_seconds must be at most ${maxTtlSeconds}, the longest token lifetime this server accepts (CHAT_JWT_MAX_TTL_S).`);
      }
      const issuedAt = Math.floor(Date.now() / 1000);
      const expiresAt = new Date((issuedAt + ttlSeconds) * 1000);
      const claims: Record<string, string> = {};
      if (name !== undefined) claims.name = name;
      if (avatarUrl !== undefined) claims.avatar_url = avatarUrl;
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(userId))
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + ttlSeconds);
      if (issuer !== null) jwt.setIssuer(issuer);
      if (audience !== null) jwt.setAudience(audience);
      return { token: await jwt.sign(key), expiresAt };
    },
  };
}

/** Clock difference allowed between the token's issuer and this server when exp is compared with now. */
export const MAX_TTL_CLOCK_SKEW_SECONDS = 60;

/** Why jose refused a token, in words for the 401's message. */
function refusal(err: unknown): string {
  if (err instanceof joseErrors.JWTExpired) return 'The token has expired.';
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'exp' && err.reason === 'missing') return 'The token has no exp claim: tokens must expire.';
    if (err.claim === 'iss') return 'The token\'s iss claim is not the issuer this server expects.';
    if (err.claim === 'aud') return 'The token\'s aud claim is not the audience this server expects.';
    if (err.claim === 'nbf') return 'The token is not valid yet (nbf).';
    return `The token's ${err.claim} claim is not valid.`;
  }
  return 'The token is not valid.';
}

/** A verified payload's lifetime against the maximum: exp - iat, and exp - now (with some clock skew). */
function checkLifetime(payload: JWTPayload & { exp: number }, maxTtlSeconds: number): void {
  const now = Math.floor(Date.now() / 1000);
  const fromIat = typeof payload.iat === 'number' ? payload.exp - payload.iat : 0;
  if (fromIat > maxTtlSeconds || payload.exp - now > maxTtlSeconds + MAX_TTL_CLOCK_SKEW_SECONDS) {
    throw new ChatError('unauthenticated', `The token lives longer than this server accepts: at most ${maxTtlSeconds} s from iat (or from now) to exp.`);
  }
}

/**
 * A token's name as it is stored: the same limit as `PUT /users` (USER_NAME_MAX_CHARS), a longer one cut to it
 * (never inside a character). The name is copied into events and answers, so it is never longer than that.
 */
function nameClaim(name: string | undefined): string | undefined {
  if (name === undefined || name.length <= USER_NAME_MAX_CHARS) return name; // UTF-16 units: never fewer than code points
  const chars = [...name];
  return chars.length <= USER_NAME_MAX_CHARS ? name : chars.slice(0, USER_NAME_MAX_CHARS).join('');
}

/** A token's avatar URL longer than `PUT /users` takes is ignored (a URL cut short is not one): the stored one stays. */
function avatarClaim(url: string | undefined): string | undefined {
  return url !== undefined && [...url].length > USER_AVATAR_URL_MAX_CHARS ? undefined : url;
}

/**
 * An onRequest hook: verifies the bearer token, creates or refreshes its user, refuses a user banned from the
 * service (403 user_banned), sets request.actor. A token
 * seen before on this node is not verified again while it has not expired, and its user is not read again
 * while the claims equal the profile last seen (token-cache.ts). The cache is this authenticator's, so of one
 * secret and one policy: a token it holds passed exactly these checks, and of them only exp can change its
 * answer later (the lifetime left, exp - now, only shrinks).
 */
export function userAuthenticator(
  { jwtSecret: secret, jwt = {} }: { readonly jwtSecret: string; readonly jwt?: Partial<JwtPolicy> },
  db: DB,
  tokens: TokenCache = new TokenCache(),
) {
  const { issuer, audience, maxTtlSeconds } = fullPolicy(jwt);
  // Imported once: given the raw bytes, jose imports the key again on every request (about 50 µs of CPU each).
  let key: Promise<CryptoKey> | undefined;
  const verifyKey = () =>
    (key ??= crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']));

  async function verify(token: string): Promise<VerifiedToken> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, await verifyKey(), {
        algorithms: ['HS256'],
        requiredClaims: ['exp'],
        issuer: issuer ?? undefined,
        audience: audience ?? undefined,
      }));
    } catch (err) {
      throw new ChatError('unauthenticated', refusal(err));
    }
    // jose has checked that exp is present and a number.
    const exp = payload.exp!;
    checkLifetime({ ...payload, exp }, maxTtlSeconds);
    const userId = parseUserId(payload.sub);
    if (userId === null) throw new ChatError('unauthenticated', 'The token has no valid user id in sub.');
    // PostgreSQL text cannot hold U+0000 nor a lone surrogate: drop the one and replace the other (as for bodies)
    // so the profile answered is the profile stored.
    const claim = (value: unknown): string | undefined =>
      typeof value === 'string' ? wellFormed(value.replaceAll('\u0000', '')) : undefined;
    const verified: VerifiedToken = { userId, exp, claims: { name: nameClaim(claim(payload.name)), avatar_url: avatarClaim(claim(payload.avatar_url)) } };
    tokens.set(token, verified);
    return verified;
  }

  // Requests with a token this node has not verified yet that arrive together (a client's channel authorizations
  // after a reconnect) share one verification, as they share the read of the user (store/users.ts).
  const verifying = new Map<string, Promise<VerifiedToken>>();
  function verifyOnce(token: string): Promise<VerifiedToken> {
    let pending = verifying.get(token);
    if (pending === undefined) {
      pending = verify(token).finally(() => verifying.delete(token));
      verifying.set(token, pending);
    }
    return pending;
  }

  return async function authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) throw new ChatError('unauthenticated', 'A bearer token is required.');
    const { userId, claims } = tokens.get(match[1]) ?? (await verifyOnce(match[1]));
    // Erased or banned users are refused here; every node forgets a user at their ban's or erasure's commit (known-users.ts).
    await ensureUser(db, userId, claims);
    const socketId = request.headers['x-socket-id'];
    request.actor = { userId, socketId: typeof socketId === 'string' && isValidSocketId(socketId) ? socketId : undefined };
  };
}

/** An onRequest hook for the host app's backend: X-Chat-Server-Key, compared in constant time. */
export function serverKeyAuthenticator(serverKey: string) {
  const expected = Buffer.from(serverKey);
  return async function authenticateServer(request: FastifyRequest): Promise<void> {
    const given = request.headers['x-chat-server-key'];
    const candidate = Buffer.from(typeof given === 'string' ? given : '');
    if (candidate.length !== expected.length || !timingSafeEqual(candidate, expected)) {
      throw new ChatError('unauthenticated', 'A valid X-Chat-Server-Key is required.');
    }
  };
}
