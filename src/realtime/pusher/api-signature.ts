// Request signing of the Pusher HTTP API (what the official server SDKs send):
//   auth_signature = hex(HMAC-SHA256(secret, `${METHOD}\n${path}\n${query}`))
// where query is every query parameter except auth_signature, keys lowercased, sorted by key, joined as
// `key=value` with `&`, values not URL-escaped. The query also carries auth_key, auth_timestamp (seconds,
// within 600 s of now), auth_version ("1.0") and, when there is a body, body_md5 (hex MD5 of the raw body).
// Every check fails closed; the signature is compared in constant time.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** How far auth_timestamp may be from the server's clock, either way. */
export const API_TIMESTAMP_GRACE_SECONDS = 600;

export interface ApiRequest {
  readonly method: string;
  /** The URL as received: path and query string (`/apps/1/events?auth_key=...`). */
  readonly url: string;
  /** The raw body bytes; undefined or empty when there is none. */
  readonly body: Buffer | undefined;
}

export interface ApiCredentials {
  readonly key: string;
  readonly secret: string;
}

export type ApiVerification =
  | { readonly ok: true; readonly query: ReadonlyMap<string, string> }
  | { readonly ok: false; readonly reason: string };

const REQUIRED = ['auth_key', 'auth_timestamp', 'auth_version', 'auth_signature'] as const;

/** Parses the query string; lowercases keys. undefined when a key appears twice (ambiguous: what was signed?). */
export function parseApiQuery(url: string): Map<string, string> | undefined {
  const at = url.indexOf('?');
  const query = new Map<string, string>();
  if (at === -1) return query;
  for (const [key, value] of new URLSearchParams(url.slice(at + 1))) {
    const k = key.toLowerCase();
    if (query.has(k)) return undefined;
    query.set(k, value);
  }
  return query;
}

/** The string the client signed. */
export function apiStringToSign(method: string, path: string, query: ReadonlyMap<string, string>): string {
  const pairs = [...query].filter(([key]) => key !== 'auth_signature').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${method.toUpperCase()}\n${path}\n${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`;
}

export function signApiRequest(secret: string, method: string, path: string, query: ReadonlyMap<string, string>): string {
  return createHmac('sha256', secret).update(apiStringToSign(method, path, query)).digest('hex');
}

export function verifyApiRequest(request: ApiRequest, credentials: ApiCredentials, nowMs: number = Date.now()): ApiVerification {
  const fail = (reason: string): ApiVerification => ({ ok: false, reason });
  const query = parseApiQuery(request.url);
  if (query === undefined) return fail('A query parameter appears more than once.');
  for (const name of REQUIRED) if (!query.get(name)) return fail(`Missing ${name}.`);

  if (!equalText(query.get('auth_key')!, credentials.key)) return fail('Unknown auth_key.');
  if (query.get('auth_version') !== '1.0') return fail('auth_version must be 1.0.');
  const timestamp = query.get('auth_timestamp')!;
  if (!/^\d{1,12}$/.test(timestamp)) return fail('auth_timestamp must be a Unix time in seconds.');
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > API_TIMESTAMP_GRACE_SECONDS) {
    return fail(`auth_timestamp is more than ${API_TIMESTAMP_GRACE_SECONDS} s from the server's time; check the clock.`);
  }

  const body = request.body ?? Buffer.alloc(0);
  const bodyMd5 = query.get('body_md5');
  if (body.length > 0 && bodyMd5 === undefined) return fail('Missing body_md5.');
  if (bodyMd5 !== undefined && !equalText(bodyMd5.toLowerCase(), createHash('md5').update(body).digest('hex'))) {
    return fail('body_md5 does not match the body.');
  }

  // The path as sent, and decoded: a client may sign a path its HTTP library then percent-encodes (a user id with a space).
  const rawPath = pathOf(request.url);
  const paths = new Set([rawPath, decodedOrSame(rawPath)]);
  const given = query.get('auth_signature')!;
  let valid = false;
  for (const path of paths) valid = equalText(given.toLowerCase(), signApiRequest(credentials.secret, request.method, path, query)) || valid;
  return valid ? { ok: true, query } : fail('Invalid signature: check the secret, and that the query and body are sent as signed.');
}

function pathOf(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? url : url.slice(0, at);
}

function decodedOrSame(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** Constant-time string comparison (the length is not secret: hex digests have a fixed one). */
function equalText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
