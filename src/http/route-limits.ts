// Which rate limit each request of the user API counts against, in two tables, and the hooks that apply them:
// every POST, PUT, PATCH and DELETE behind a user token is limited per user, so are the reads that cost (searches,
// history pages), and a failed authentication (a missing or bad token, a bad server key) per address. Other reads
// (GET) are not limited.
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { isIPv6 } from 'node:net';
import { ChatError } from '../contract/api-errors.js';
import type { RateLimitedAction, RateLimiter } from '../chat/rate-limiter.js';

/** A route as `METHOD /path` below the API prefix, e.g. `PATCH /messages/:id`. */
export type RouteKey = `${string} /${string}`;

/**
 * The user API's writes and their limits. `in use case`: counted where the action is carried out (sends and
 * forwards, typing, heartbeats, channel authorizations: src/chat/*.ts, routes/broadcasting.ts). A write that is
 * not listed counts against `write` (the other writes' limit), so a new endpoint is never unlimited.
 */
export const WRITE_LIMITS: Readonly<Record<RouteKey, RateLimitedAction | 'in use case'>> = {
  'POST /conversations': 'conversation',
  'POST /conversations/:id/messages': 'in use case', // send
  'POST /conversations/:id/read': 'read',
  'POST /conversations/:id/typing': 'in use case', // typing
  'PATCH /messages/:id': 'edit',
  'DELETE /messages/:id': 'edit',
  'POST /messages/:id/forward': 'in use case', // send
  'POST /groups': 'conversation',
  'PATCH /groups/:id': 'conversation',
  'DELETE /groups/:id': 'conversation',
  'POST /groups/:id/participants': 'conversation',
  'DELETE /groups/:id/participants/:user_id': 'conversation',
  'PATCH /groups/:id/participants/:user_id': 'conversation',
  'POST /groups/:id/leave': 'conversation',
  'POST /blocks': 'block',
  'DELETE /blocks/:user_id': 'block',
  'POST /attachments': 'upload',
  'POST /presence/heartbeat': 'in use case', // heartbeat
  'POST /presence/offline': 'heartbeat',
  'POST /broadcasting/auth': 'in use case', // channel_auth
  'POST /broadcasting/user-auth': 'in use case', // channel_auth
};

/** The reads that cost enough to be limited: one request can make the database search or page through a lot. */
export const READ_LIMITS: Readonly<Record<RouteKey, RateLimitedAction>> = {
  'GET /search/messages': 'search',
  'GET /users': 'search',
  'GET /conversations/:id/messages': 'history',
};

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The limit a request counts against in the hook, or null (a cheap read, or counted in its use case). */
export function limitOf(method: string, route: string): RateLimitedAction | null {
  if (READS.has(method)) return READ_LIMITS[`${method === 'HEAD' ? 'GET' : method} ${route}` as RouteKey] ?? null;
  const limit = WRITE_LIMITS[`${method} ${route}` as RouteKey] ?? 'write';
  return limit === 'in use case' ? null : limit;
}

/**
 * An onRequest hook for the user routes, after authentication: counts the request against its route's limit
 * (before its body is read, so an upload over the limit is refused before it is received). prefix: the API
 * prefix the routes are registered under.
 */
export function limitRequests(limiter: RateLimiter, prefix: string): onRequestAsyncHookHandler {
  return async function limitRequest(request) {
    const route = request.routeOptions.url;
    if (route === undefined) return;
    const limit = limitOf(request.method, route.startsWith(prefix) ? route.slice(prefix.length) : route);
    if (limit) await limiter.consume(limit, request.actor.userId);
  };
}

/**
 * The address failed authentications are counted by: the client's IP (behind a proxy, only when
 * CHAT_TRUSTED_PROXIES names it), and for IPv6 its /64, which one client usually has whole.
 */
export function addressOf(request: FastifyRequest): string {
  const ip = request.ip.startsWith('::ffff:') ? request.ip.slice(7) : request.ip;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/**
 * Wraps an authentication hook: a request it refuses (401) counts against the address's failed-authentication
 * limit, and once over it, answers 429 with Retry-After instead. Requests that authenticate are not counted nor
 * refused, so one misbehaving client behind a shared address does not lock the others out.
 */
export function limitFailedAuthentication(authenticate: (request: FastifyRequest) => Promise<void>, limiter: RateLimiter): onRequestAsyncHookHandler {
  return async function authenticateLimited(request) {
    try {
      await authenticate(request);
    } catch (err) {
      if (err instanceof ChatError && err.code === 'unauthenticated') await limiter.consume('auth_failure', addressOf(request));
      throw err;
    }
  };
}
