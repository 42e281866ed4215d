// A push service for tests, as a browser's would be: an HTTP server that receives Web Push requests and
// DECRYPTS each with the subscription's private key (RFC 8291 over RFC 8188 aes128gcm, with node:crypto's
// ECDH and HKDF; nothing of web-push), and checks the VAPID Authorization header (RFC 8292: an ES256 JWT
// whose aud is the endpoint's origin, signed by the key in k=).
import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A browser's side of a subscription: its P-256 key pair and auth secret. */
export interface BrowserKeys {
  readonly ecdh: ECDH;
  /** base64url of the uncompressed public key (65 bytes): PushSubscription.keys.p256dh */
  readonly p256dh: string;
  /** base64url of the 16-byte auth secret: PushSubscription.keys.auth */
  readonly auth: string;
}

export function browserKeys(): BrowserKeys {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { ecdh, p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') };
}

const hkdf = (salt: Buffer, ikm: Buffer, info: Buffer, length: number) => Buffer.from(hkdfSync('sha256', ikm, salt, info, length));

/** Decrypts an aes128gcm Web Push body (RFC 8291 §3.4, RFC 8188 §2) with the browser's keys. Throws when it does not authenticate. */
export function decryptPush(body: Buffer, keys: BrowserKeys): Buffer {
  if (body.length < 21) throw new Error('aes128gcm body shorter than its header');
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20]!;
  const senderPublic = body.subarray(21, 21 + idlen);
  if (idlen !== 65 || senderPublic[0] !== 0x04) throw new Error(`keyid is not an uncompressed P-256 key (${idlen} bytes)`);
  if (rs < 18) throw new Error(`record size ${rs} too small`);
  const userPublic = keys.ecdh.getPublicKey();
  const ecdhSecret = keys.ecdh.computeSecret(senderPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), userPublic, senderPublic]);
  const ikm = hkdf(Buffer.from(keys.auth, 'base64url'), ecdhSecret, keyInfo, 32);
  const cek = hkdf(salt, ikm, Buffer.from('Content-Encoding: aes128gcm\0'), 16);
  const baseNonce = hkdf(salt, ikm, Buffer.from('Content-Encoding: nonce\0'), 12);
  const records = body.subarray(21 + idlen);
  const parts: Buffer[] = [];
  for (let offset = 0, seq = 0; offset < records.length; offset += rs, seq++) {
    const record = records.subarray(offset, offset + rs);
    const nonce = Buffer.from(baseNonce);
    for (let i = 0; i < 6; i++) nonce[11 - i]! ^= Math.floor(seq / 2 ** (8 * i)) & 0xff; // NONCE XOR SEQ (96-bit big-endian)
    const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
    decipher.setAuthTag(record.subarray(record.length - 16));
    const plain = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
    let end = plain.length - 1;
    while (end >= 0 && plain[end] === 0) end--;
    const last = offset + rs >= records.length;
    if (plain[end] !== (last ? 2 : 1)) throw new Error(`record ${seq}: padding delimiter ${plain[end]} (expected ${last ? 2 : 1})`);
    parts.push(plain.subarray(0, end));
  }
  return Buffer.concat(parts);
}

/** Checks `Authorization: vapid t=<JWT>, k=<public key>`; returns the JWT's claims and the key. Throws when it does not verify. */
export function verifyVapid(authorization: string | undefined, audience: string): { claims: { aud: string; exp: number; sub: string }; publicKey: string } {
  const m = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? '');
  if (!m) throw new Error(`Authorization is not "vapid t=..., k=...": ${authorization}`);
  const [jwt, k] = [m[1]!, m[2]!];
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  const head = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg: string };
  if (head.alg !== 'ES256') throw new Error(`VAPID JWT alg ${head.alg}`);
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 key');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' });
  const ok = verify('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!ok) throw new Error('VAPID JWT signature does not verify');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { aud: string; exp: number; sub: string };
  if (claims.aud !== audience) throw new Error(`VAPID aud ${claims.aud}, expected ${audience}`);
  if (!(claims.exp > Date.now() / 1000) || claims.exp > Date.now() / 1000 + 24 * 3600) throw new Error(`VAPID exp ${claims.exp} not within 24 h`);
  return { claims, publicKey: k };
}

export interface ReceivedPush {
  readonly path: string;
  /** What the service answered (201 unless told otherwise with answer()). */
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The decrypted payload, parsed as JSON. */
  readonly payload: any;
  readonly vapid: { claims: { aud: string; exp: number; sub: string }; publicKey: string };
}

export interface PushService {
  readonly origin: string;
  /** A new subscription on this service: its endpoint and the browser's keys. */
  subscription(): { endpoint: string; keys: BrowserKeys };
  /** Pushes received and decrypted, in order. */
  readonly received: ReceivedPush[];
  /** Requests that could not be decrypted or verified (each is an error: a test expects none). */
  readonly errors: string[];
  /** The status to answer for an endpoint path (default 201). */
  answer(path: string, status: number): void;
  close(): Promise<void>;
}

export async function startPushService(): Promise<PushService> {
  const keysByPath = new Map<string, BrowserKeys>();
  const statusByPath = new Map<string, number>();
  const received: ReceivedPush[] = [];
  const errors: string[] = [];
  let origin = '';
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const path = request.url ?? '';
      const status = statusByPath.get(path) ?? 201;
      try {
        const keys = keysByPath.get(path);
        if (!keys) throw new Error(`no subscription at ${path}`);
        if (request.method !== 'POST') throw new Error(`method ${request.method}`);
        if (request.headers['content-encoding'] !== 'aes128gcm') throw new Error(`Content-Encoding ${request.headers['content-encoding']}`);
        // aud: the origin the request was made to (as a push service checks against its own).
        const vapid = verifyVapid(request.headers.authorization, `http://${request.headers.host}`);
        const payload = JSON.parse(decryptPush(Buffer.concat(chunks), keys).toString('utf8'));
        received.push({ path, status, headers: request.headers, payload, vapid });
      } catch (err) {
        errors.push(`${path}: ${(err as Error).message}`);
        response.writeHead(400).end();
        return;
      }
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    subscription() {
      const path = `/push/${randomBytes(8).toString('hex')}`;
      const keys = browserKeys();
      keysByPath.set(path, keys);
      return { endpoint: `${origin}${path}`, keys };
    },
    received,
    errors,
    answer: (path, status) => void statusByPath.set(path, status),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
