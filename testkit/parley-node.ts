// A real Parley node process, as a deployment runs it: `node --import tsx src/main.ts` with its configuration
// in the environment (and nothing else of this process's), on a port and a data directory of its own. Without
// DATABASE_URL it runs on the embedded default (PGlite in its data directory).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { requestJson, statusOf, type JsonResponse } from './http.js';
import { freePort } from './ports.js';
import { atExit, ServerProcess } from './processes.js';
import { pusherWsUrl } from './pusher.js';
import { ROOT } from './root.js';
import { SECRETS } from './secrets.js';

export interface ParleyNodeOptions {
  /** Node options before `--import tsx`, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof']. */
  readonly nodeArgs?: readonly string[];
  /** How long it may take until /readyz answers 200 (default 60 s). */
  readonly readyTimeoutMs?: number;
}

export class ParleyNode extends ServerProcess {
  readonly baseUrl: string;
  /** Base URL of the API: http://127.0.0.1:PORT/api/chat/v1 */
  readonly api: string;
  /** The socket URL pusher-js opens. */
  readonly wsUrl: string;
  /** What a client needs of the node's configuration (as a TestApp's config has it). */
  readonly config = { broadcast: { appKey: SECRETS.BROADCAST_APP_KEY } };
  private readonly jwtKey = new TextEncoder().encode(SECRETS.CHAT_JWT_SECRET);
  private readonly tokens = new Map<number, Promise<string>>();
  private readonly forgetDataDir: () => void;

  private constructor(name: string, port: number, private readonly dataDir: string, env: Record<string, string>, nodeArgs: readonly string[]) {
    super(name, port, process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...SECRETS,
        CHAT_DATA_DIR: dataDir,
        PORT: String(port),
        ...env,
      },
    });
    this.baseUrl = `http://127.0.0.1:${port}`;
    this.api = `${this.baseUrl}/api/chat/v1`;
    this.wsUrl = pusherWsUrl(port, SECRETS.BROADCAST_APP_KEY);
    this.forgetDataDir = atExit(() => rmSync(dataDir, { recursive: true, force: true }));
  }

  /** Spawns a node on a free port and waits until /readyz answers 200. */
  static async start(name: string, env: Record<string, string> = {}, options: ParleyNodeOptions = {}): Promise<ParleyNode> {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), `parley-${name}-`));
    const node = new ParleyNode(name, port, dataDir, env, options.nodeArgs ?? []);
    return node.whenReady(async () => (await node.ready()) === 200, options.readyTimeoutMs);
  }

  /** GET /readyz's status, 0 when nothing answers within 2 s. */
  ready(): Promise<number> {
    return statusOf(`${this.baseUrl}/readyz`);
  }

  /**
   * A fresh token for the user, signed as a host app's backend signs one (docs/api.md "User requests", way 2: jose
   * and CHAT_JWT_SECRET), not with the server's own code: the harness and bench reach Parley as a deployment does.
   */
  async token(userId: number, name = `User ${userId}`): Promise<string> {
    return new SignJWT({ name }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setSubject(String(userId)).setIssuedAt().setExpirationTime('24h').sign(this.jwtKey);
  }

  /** fetch against the API as a user (one token per user, issued once), JSON in and out; bounded by timeoutMs. */
  async request(
    userId: number | null,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    timeoutMs = 10_000,
  ): Promise<JsonResponse> {
    let token: Promise<string> | null = null;
    if (userId !== null) {
      token = this.tokens.get(userId) ?? this.token(userId);
      this.tokens.set(userId, token);
    }
    return requestJson(`${this.api}${path}`, { method, token: token && (await token), body, headers, timeoutMs });
  }

  /** fetch against the API as the host app's server (X-Chat-Server-Key). */
  server(method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<JsonResponse> {
    return requestJson(`${this.api}${path}`, { method, body, headers: { 'x-chat-server-key': SECRETS.CHAT_SERVER_KEY }, timeoutMs });
  }

  /** SIGKILL if still running, and the data directory removed. Safe to call twice. */
  override kill(): void {
    super.kill();
    rmSync(this.dataDir, { recursive: true, force: true });
    this.forgetDataDir();
  }

  /** Stops the node as a deployment does (SIGTERM, waiting for its exit) and removes its data directory. */
  async close(): Promise<void> {
    try {
      await this.stop();
    } finally {
      this.kill();
    }
  }
}
