// A webhook receiver for tests: a node:http server that keeps every request and checks each one with the
// official `pusher` server SDK's webhook() checker, as an app's receiver would. It can be told to fail the
// next N requests (HTTP 500) to exercise retries.

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import PusherServer from 'pusher';

export interface Delivery {
  readonly timeMs: number;
  readonly events: Record<string, unknown>[];
  readonly headers: Record<string, string | string[] | undefined>;
}

export interface WebhookReceiver {
  readonly url: string;
  /** Requests answered 2xx, each validated by the SDK; in arrival order. */
  readonly deliveries: Delivery[];
  /** Every event of every accepted delivery, in order. */
  events(): Record<string, unknown>[];
  /** Answers the next `n` requests with 500. */
  failNext(n: number): void;
  /** Requests refused on purpose so far. */
  refused(): number;
  /** Bodies the SDK's checker refused (wrong key or signature): a test expects none. */
  readonly invalid: string[];
  close(): Promise<void>;
}

export async function webhookReceiver(app: { key: string; secret: string }): Promise<WebhookReceiver> {
  const sdk = new PusherServer({ appId: '1', key: app.key, secret: app.secret, host: '127.0.0.1' });
  const deliveries: Delivery[] = [];
  let failing = 0;
  let refused = 0;
  const invalid: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (failing > 0) {
        failing--;
        refused++;
        res.writeHead(500).end();
        return;
      }
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const hook = sdk.webhook({ headers: req.headers as Record<string, string>, rawBody });
      // Every delivery must pass the SDK's checks: right key, valid HMAC of the body, well-formed JSON.
      if (!hook.isValid()) {
        invalid.push(rawBody);
        res.writeHead(401).end();
        return;
      }
      deliveries.push({ timeMs: hook.getTime().getTime(), events: hook.getEvents() as unknown as Record<string, unknown>[], headers: req.headers });
      res.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/pusher/webhook`,
    deliveries,
    events: () => deliveries.flatMap((d) => d.events),
    failNext(n) {
      failing = n;
    },
    refused: () => refused,
    invalid,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
