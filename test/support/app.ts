// Starts a real Parley (HTTP + Pusher sockets) in this process on a free port for a test file, on PGlite or
// on a fresh PostgreSQL database. The server comes from TEST_DATABASE_URL or DATABASE_URL (default: the
// machine's at 127.0.0.1:5432); each app gets its own database there, dropped afterwards.
// (Parley as node processes, databases, Redis and the rest of the machinery: testkit/.)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApp, type App } from '../../src/app/index.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createTokenIssuer } from '../../src/http/auth.js';
import { requestJson, type JsonResponse } from '../../testkit/http.js';
import { freshPostgres } from '../../testkit/postgres.js';
import { SECRETS } from '../../testkit/secrets.js';

export { ADMIN_DATABASE_URL, freshPostgres } from '../../testkit/postgres.js';

export type DatabaseKind = 'pglite' | 'postgres';

/** The kinds to run database-backed suites on: both by default; TEST_DATABASES=pglite (or postgres) narrows. */
export const DATABASES: DatabaseKind[] = (process.env.TEST_DATABASES?.split(',') as DatabaseKind[] | undefined) ?? ['pglite', 'postgres'];

export interface TestApp {
  readonly app: App;
  readonly config: Config;
  readonly port: number;
  readonly baseUrl: string;
  /** Base URL of the API: http://127.0.0.1:PORT/api/chat/v1 */
  readonly api: string;
  token(userId: number, name?: string): Promise<string>;
  /** fetch against the API as a user: JSON in and out. */
  request(userId: number | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse>;
  close(): Promise<void>;
}

export async function startTestApp(
  options: { database?: DatabaseKind; env?: Record<string, string>; /** Where the app's JSON log lines go (else nowhere, or TEST_LOG_LEVEL's). */ logTo?: (line: string) => void } = {},
): Promise<TestApp> {
  const database = options.database ?? 'pglite';
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-test-'));
  const postgres = database === 'postgres' ? await freshPostgres() : null;
  const config = loadConfig({
    CHAT_DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    ...SECRETS,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...(postgres ? { DATABASE_URL: postgres.url } : {}),
    // TEST_REDIS_URL runs a suite with Redis fan-out and presence, on a prefix of its own.
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL, REDIS_PREFIX: `parley-test-${randomBytes(4).toString('hex')}:` } : {}),
    ...options.env,
  });
  const logger = options.logTo
    ? pino({ level: 'info' }, { write: (line: string) => options.logTo!(line) })
    : pino({ level: config.logLevel });
  const app = await createApp(config, logger);
  const port = await app.listen();
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = `${baseUrl}/api/chat/v1`;
  const issuer = createTokenIssuer(config.jwtSecret, config.jwt);
  const tokens = new Map<number, string>();

  async function token(userId: number, name = `User ${userId}`): Promise<string> {
    const { token } = await issuer.issue(userId, { name });
    tokens.set(userId, token);
    return token;
  }

  return {
    app,
    config,
    port,
    baseUrl,
    api,
    token,
    async request(userId, method, path, body, headers = {}) {
      const token_ = userId === null ? null : (tokens.get(userId) ?? (await token(userId)));
      return requestJson(`${api}${path}`, { method, token: token_, body, headers });
    },
    async close() {
      await app.close();
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
