// Who is calling: a user with a JWT (HS256, sub = user id), or the host app's backend with the server key.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Actor } from '../chat/context.js';
import { ChatError } from '../chat/errors.js';
import { ensureUser } from '../chat/users.js';
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
  issue(userId: number, options?: { name?: string; avatarUrl?: string; ttlSeconds?: number }): Promise<{ token: string; expiresAt: Date }>;
}

export function createTokenIssuer(secret: string): TokenIssuer {
  const key = new TextEncoder().encode(secret);
  return {
    async issue(userId, { name, avatarUrl, ttlSeconds = 24 * 3600 } = {}) {
      const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
      const claims: Record<string, string> = {};
      if (name !== undefined) claims.name = name;
      if (avatarUrl !== undefined) claims.avatar_url = avatarUrl;
      const token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(userId))
        .setIssuedAt()
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key);
      return { token, expiresAt };
    },
  };
}

/**
 * An onRequest hook: verifies the bearer token, creates or refreshes its user, sets request.actor. A token
 * seen before on this node is not verified again while it has not expired, and its user is not read again
 * while the claims equal the profile last seen (token-cache.ts).
 */
export function userAuthenticator(secret: string, db: DB, tokens: TokenCache = new TokenCache()) {
  // Imported once: given the raw bytes, jose imports the key again on every request (about 50 µs of CPU each).
  let key: Promise<CryptoKey> | undefined;
  const verifyKey = () =>
    (key ??= crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']));

  async function verify(token: string): Promise<VerifiedToken> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, await verifyKey(), { algorithms: ['HS256'] }));
    } catch (err) {
      const expired = err instanceof joseErrors.JWTExpired;
      throw new ChatError('unauthenticated', expired ? 'The token has expired.' : 'The token is not valid.');
    }
    const userId = parseUserId(payload.sub);
    if (userId === null) throw new ChatError('unauthenticated', 'The token has no valid user id in sub.');
    // PostgreSQL text cannot hold U+0000: drop it from the claims rather than fail the request.
    const claim = (value: unknown): string | undefined => (typeof value === 'string' ? value.replaceAll('\u0000', '') : undefined);
    // jose has checked that exp, when present, is a number.
    const verified: VerifiedToken = { userId, exp: payload.exp, claims: { name: claim(payload.name), avatar_url: claim(payload.avatar_url) } };
    tokens.set(token, verified);
    return verified;
  }

  return async function authenticate(request: FastifyRequest): Promise<void> {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match) throw new ChatError('unauthenticated', 'A bearer token is required.');
    const { userId, claims } = tokens.get(match[1]) ?? (await verify(match[1]));
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
