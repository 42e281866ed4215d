// A lean keep-alive JSON client for the load loops (node:http; cheaper per request than fetch, so the
// driver takes less of the CPU it shares with the server).
import { Agent, request } from 'node:http';

export interface JsonClient {
  post(path: string, token: string, body: unknown): Promise<{ status: number; text: string }>;
  close(): void;
}

export function jsonClient(baseUrl: string, connections: number): JsonClient {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  return {
    post(path, token, body) {
      const payload = JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const req = request(
          {
            agent,
            host: url.hostname,
            port: url.port,
            method: 'POST',
            path: `${url.pathname}${path}`,
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
            timeout: 30_000,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error('request timed out')));
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
