// One Web Push request: the payload encrypted for the subscription (aes128gcm, RFC 8291), signed with VAPID
// (RFC 8292), sent to the address the endpoint guard checked. The web-push library builds the request; it is
// sent here (not by web-push's sendNotification) so it goes to the checked address and http is possible in
// development.
import http from 'node:http';
import https from 'node:https';
import webpush from 'web-push';
import type { PushSubscriptionRow } from '../../store/push-subscriptions.js';
import { parseEndpoint, resolveEndpoint, type Resolver } from './endpoint-guard.js';
import type { VapidKeys } from './vapid.js';

export const PUSH_TIMEOUT_MS = 10_000;

export interface PushOptions {
  /** Replaces a push of the same topic still waiting at the push service (up to 32 URL-safe base64 characters). */
  readonly topic: string;
  /** Seconds the push service keeps the push for an offline browser. */
  readonly ttlSeconds: number;
}

export interface PushSenderOptions {
  readonly vapid: VapidKeys;
  readonly allowHttp: boolean;
  readonly resolver?: Resolver;
  readonly timeoutMs?: number;
}

/** The push service's answer: its status (2xx delivered; 404/410 the subscription is gone). */
export type PushResult = { readonly status: number; readonly body: string };

export function createPushSender(options: PushSenderOptions) {
  const { vapid, allowHttp, resolver, timeoutMs = PUSH_TIMEOUT_MS } = options;
  return async function sendPush(sub: Pick<PushSubscriptionRow, 'endpoint' | 'p256dh' | 'auth'>, payload: unknown, push: PushOptions): Promise<PushResult> {
    const url = parseEndpoint(sub.endpoint, allowHttp);
    const target = await resolveEndpoint(url, allowHttp, resolver);
    const details = webpush.generateRequestDetails({ endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } }, JSON.stringify(payload), {
      vapidDetails: { subject: vapid.subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
      contentEncoding: 'aes128gcm',
      TTL: push.ttlSeconds,
      topic: push.topic,
      urgency: 'high',
    });
    const body = details.body as Buffer;
    const headers: Record<string, string | number> = { ...(details.headers as Record<string, string | number>), 'Content-Length': body.length };
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<PushResult>((resolve, reject) => {
      const request = client.request(
        url,
        {
          method: 'POST',
          headers,
          timeout: timeoutMs,
          // The checked address, not a second lookup (TLS still verifies the certificate against the host name).
          lookup: (_hostname, opts, callback) => {
            if ((opts as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
            else callback(null, target.address, target.family);
          },
          agent: false,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size <= 4096) chunks.push(chunk);
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 4096) }));
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`The push service did not answer within ${timeoutMs} ms.`)));
      request.on('error', reject);
      request.end(body);
    });
  };
}

export type PushSender = ReturnType<typeof createPushSender>;
