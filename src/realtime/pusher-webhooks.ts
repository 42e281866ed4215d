// The Pusher app webhooks of the built-in server (not the host app's webhooks, src/delivery/host-webhooks.ts):
// channel_occupied, channel_vacated, member_added, member_removed and client_event, POSTed to each configured URL
// as {"time_ms": <ms>, "events": [...]}, with X-Pusher-Key (the app key) and X-Pusher-Signature (HMAC-SHA256 of
// the body with the app secret, hex), as the official server SDKs' webhook() checkers expect.
//
// The socket path only calls enqueue(), which appends to an array: events are gathered for batchMs and sent
// by a timer, never while a frame is being handled. A delivery that fails (network error or a non-2xx answer)
// is retried with exponential backoff (retryBaseMs, 2×, 4×, …) up to maxAttempts, then dropped and logged.
// Which node sends an occupancy or membership event is decided elsewhere (once per cluster); this only sends.

import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';

export type WebhookEvent =
  | { readonly name: 'channel_occupied' | 'channel_vacated'; readonly channel: string }
  | { readonly name: 'member_added' | 'member_removed'; readonly channel: string; readonly user_id: string }
  | {
      readonly name: 'client_event';
      readonly channel: string;
      readonly event: string;
      readonly data: string;
      readonly socket_id: string;
      readonly user_id?: string;
    };

export interface WebhookOptions {
  readonly urls: readonly string[];
  readonly appKey: string;
  readonly appSecret: string;
  readonly logger: Logger;
  /** How long events are gathered before a batch is sent. */
  readonly batchMs?: number;
  /** Most events in one request. */
  readonly maxBatch?: number;
  /** Tries per request, the first included. */
  readonly maxAttempts?: number;
  /** The first retry's delay; each further one doubles it. */
  readonly retryBaseMs?: number;
  /** Abandon one try after this long. */
  readonly timeoutMs?: number;
}

export interface WebhookSender {
  enqueue(event: WebhookEvent): void;
  /** Sends what is queued and waits (at most timeoutMs per try) for the deliveries in flight; pending retries are dropped. */
  close(): Promise<void>;
}

export const WEBHOOK_DEFAULTS = { batchMs: 50, maxBatch: 100, maxAttempts: 5, retryBaseMs: 1_000, timeoutMs: 5_000 } as const;

/** The X-Pusher-Signature of a body. */
export function webhookSignature(appSecret: string, body: string): string {
  return createHmac('sha256', appSecret).update(body).digest('hex');
}

export function createWebhookSender(options: WebhookOptions): WebhookSender {
  const { urls, appKey, appSecret } = options;
  const batchMs = options.batchMs ?? WEBHOOK_DEFAULTS.batchMs;
  const maxBatch = options.maxBatch ?? WEBHOOK_DEFAULTS.maxBatch;
  const maxAttempts = options.maxAttempts ?? WEBHOOK_DEFAULTS.maxAttempts;
  const retryBaseMs = options.retryBaseMs ?? WEBHOOK_DEFAULTS.retryBaseMs;
  const timeoutMs = options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
  const logger = options.logger.child({ component: 'webhooks' });
  let queue: WebhookEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const retries = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();
  let closed = false;

  function flush(): void {
    timer = undefined;
    while (queue.length > 0) {
      const events = queue.slice(0, maxBatch);
      queue = queue.slice(maxBatch);
      const body = JSON.stringify({ time_ms: Date.now(), events });
      for (const url of urls) attempt(url, body, 1);
    }
  }

  function attempt(url: string, body: string, n: number): void {
    const sending = post(url, body).then(
      () => undefined,
      (err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        if (n >= maxAttempts || closed) {
          logger.warn({ url, attempts: n, reason }, 'webhook dropped after its last try');
          return;
        }
        const delay = retryBaseMs * 2 ** (n - 1);
        logger.debug({ url, attempt: n, delay, reason }, 'webhook failed; retrying');
        const retry = setTimeout(() => {
          retries.delete(retry);
          attempt(url, body, n + 1);
        }, delay);
        retry.unref();
        retries.add(retry);
      },
    );
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
  }

  async function post(url: string, body: string): Promise<void> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Pusher-Key': appKey, 'X-Pusher-Signature': webhookSignature(appSecret, body) },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
  }

  return {
    enqueue(event) {
      if (closed || urls.length === 0) return;
      queue.push(event);
      if (timer === undefined) {
        timer = setTimeout(flush, batchMs);
        timer.unref();
      }
    },
    async close() {
      clearTimeout(timer);
      flush();
      closed = true;
      for (const retry of retries) clearTimeout(retry);
      retries.clear();
      await Promise.all(inFlight);
    },
  };
}
