// A lean keep-alive JSON client for the load loops (node:http; cheaper per request than fetch, so the
// driver takes less of the CPU it shares with the server).
import { Agent, request } from 'node:http';

export interface JsonClient {
  post(path: string, token: string, body: unknown): Promise<{ status: number; text: string }>;
  get(path: string, token: string): Promise<{ status: number; text: string }>;
  /** Any method (PATCH, PUT, DELETE, ...); a body is sent as JSON when given. */
  request(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; text: string }>;
  close(): void;
}

export function jsonClient(baseUrl: string, connections: number): JsonClient {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const send = (method: string, path: string, token: string, payload: string | null): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
      if (payload !== null) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      const req = request(
        { agent, host: url.hostname, port: url.port, method, path: `${url.pathname}${path}`, headers, timeout: 30_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', reject);
      req.end(payload ?? undefined);
    });
  return {
    get: (path, token) => send('GET', path, token, null),
    post: (path, token, body) => send('POST', path, token, JSON.stringify(body)),
    request: (method, path, token, body) => send(method, path, token, body === undefined ? null : JSON.stringify(body)),
    close: () => agent.destroy(),
  };
}
