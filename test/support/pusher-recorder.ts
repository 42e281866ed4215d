// A stand-in for an external Pusher server's HTTP API: a real node:http server that checks each request's
// signature as Pusher does (independently of Parley's own code), records it, and answers as the test says
// (a status, a delay, or a dropped connection). Used to test BROADCAST_DRIVER=pusher without a socket server.
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly rawBody: string;
  /** The body parsed as JSON (null when empty). */
  readonly body: any;
  /** auth_signature and body_md5 verified with the app's secret. */
  readonly signatureValid: boolean;
  /** When the request was received and when its answer went out (performance.now()). */
  readonly receivedAt: number;
  answeredAt: number;
}

/** How to answer one request: a status (default 200) after delayMs, or drop the connection without an answer. */
export type Answer = { readonly status?: number; readonly body?: string; readonly delayMs?: number } | 'drop';

export class PusherRecorder {
  readonly requests: RecordedRequest[] = [];
  /** Decides each answer; default 200 {}. */
  answer: (request: RecordedRequest, index: number) => Answer = () => ({});
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly appId: string,
    readonly key: string,
    readonly secret: string,
  ) {}

  static async start(appId = '777', key = 'external-key', secret = 'external-secret'): Promise<PusherRecorder> {
    let recorder: PusherRecorder | undefined;
    const server = createServer((req, res) => void recorder!.handle(req, res));
    server.on('connection', (socket) => {
      recorder?.sockets.add(socket);
      socket.once('close', () => recorder?.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    recorder = new PusherRecorder(server, (server.address() as AddressInfo).port, appId, key, secret);
    return recorder;
  }

  /** The events triggered so far (POST /apps/{id}/events), in arrival order. */
  events(): { name: string; channels: string[]; data: string; socket_id?: string }[] {
    return this.requests.filter((r) => r.path === `/apps/${this.appId}/events`).map((r) => r.body);
  }

  /** Environment for a Parley that publishes here. */
  env(): Record<string, string> {
    return {
      BROADCAST_DRIVER: 'pusher',
      PUSHER_APP_ID: this.appId,
      PUSHER_APP_KEY: this.key,
      PUSHER_APP_SECRET: this.secret,
      PUSHER_HOST: '127.0.0.1',
      PUSHER_PORT: String(this.port),
      PUSHER_SCHEME: 'http',
    };
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const query = Object.fromEntries(url.searchParams);
    const request: RecordedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query,
      rawBody,
      body: rawBody ? JSON.parse(rawBody) : null,
      signatureValid: this.verify(req.method ?? '', url.pathname, query, rawBody),
      receivedAt: performance.now(),
      answeredAt: 0,
    };
    const index = this.requests.push(request) - 1;
    const answer = this.answer(request, index);
    if (answer === 'drop') {
      req.socket.destroy();
      return;
    }
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    request.answeredAt = performance.now();
    res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    res.end(answer.body ?? '{}');
  }

  /** Pusher's request signing: HMAC-SHA256 of "METHOD\nPATH\nsorted query without auth_signature", and body_md5. */
  private verify(method: string, path: string, query: Record<string, string>, rawBody: string): boolean {
    if (query.auth_key !== this.key) return false;
    if (rawBody && query.body_md5 !== createHash('md5').update(rawBody).digest('hex')) return false;
    const signed = Object.keys(query)
      .filter((k) => k !== 'auth_signature')
      .sort()
      .map((k) => `${k}=${query[k]}`)
      .join('&');
    const expected = createHmac('sha256', this.secret).update(`${method}\n${path}\n${signed}`).digest('hex');
    return expected === query.auth_signature;
  }
}

/** A pino destination that keeps every log line, parsed. */
export function logCapture(): { lines: Record<string, any>[]; stream: { write(line: string): void } } {
  const lines: Record<string, any>[] = [];
  return { lines, stream: { write: (line: string) => void lines.push(JSON.parse(line)) } };
}
