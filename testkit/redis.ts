// Redis for tests: the machine's (each user on a key prefix of its own, its keys deleted afterwards), or a
// redis-server of a test's own that a fault test may kill and start again.
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { exited, ServerProcess } from './processes.js';

/** The machine's Redis unless TEST_REDIS_URL names another. */
export const MACHINE_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Deletes every key under prefix. Throws when Redis does not answer (a Redis of a test's own may be gone). */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A redis-server of a test's own on a port of its own, without persistence. */
export class RedisServer {
  private process: ServerProcess | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  /** (Re)starts redis-server on the same port and waits until it answers PING. */
  async start(timeoutMs = 5_000): Promise<void> {
    const ping = async () => spawnSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8', timeout: 1_000 }).stdout?.trim() === 'PONG';
    this.process = await ServerProcess.launch('redis-server', this.port, 'redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      env: process.env,
      ready: ping,
      readyTimeoutMs: timeoutMs,
      tailLimit: 5_000,
    });
  }

  /** SIGKILL: Redis vanishes at once, as in a crash. */
  async kill(): Promise<void> {
    const server = this.process;
    this.process = null;
    if (!server?.running) return;
    server.kill();
    if ((await exited(server.child, 5_000)) === null) throw new Error('redis-server did not die');
  }
}
