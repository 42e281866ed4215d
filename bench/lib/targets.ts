// The servers a benchmark can point its clients at, each started as a process of its own: Parley, the bare
// `ws` broadcast server in bench/servers, and Soketi 1.6.1 when `npm run bench:install-soketi` installed it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startParley, ROOT, SECRETS, type ParleyProcess } from './parley.js';
import { answers, freePort, startServer } from './procs.js';

export interface Target {
  readonly name: string;
  readonly parley: boolean;
  readonly port: number;
  readonly pid: number;
  /** The Pusher-protocol WebSocket URL clients connect to. */
  readonly wsUrl: string;
  readonly appId: string;
  readonly key: string;
  readonly secret: string;
  /** Set for Parley: its HTTP API and helpers. */
  readonly parleyProcess?: ParleyProcess;
  stop(): Promise<void>;
}

const wsQuery = 'protocol=7&client=js&version=8.6.0&flash=false';

export async function parleyTarget(env: Record<string, string> = {}): Promise<Target> {
  const parley = await startParley(env);
  return {
    name: 'Parley',
    parley: true,
    port: parley.port,
    pid: parley.child.pid!,
    wsUrl: parley.wsUrl,
    appId: SECRETS.BROADCAST_APP_ID,
    key: SECRETS.BROADCAST_APP_KEY,
    secret: SECRETS.BROADCAST_APP_SECRET,
    parleyProcess: parley,
    stop: () => parley.close(),
  };
}

export async function bareTarget(mode: 'string' | 'buffer', name?: string): Promise<Target> {
  const port = await freePort();
  const server = await startServer(`bare ws (${mode})`, process.execPath, ['--import', 'tsx', 'bench/servers/bare-ws.ts', '--port', String(port), '--mode', mode], {
    cwd: ROOT,
    port,
    env: { NODE_ENV: 'production' },
    ready: () => answers(`http://127.0.0.1:${port}/`),
  });
  return {
    name: name ?? (mode === 'string' ? 'bare ws, string per socket' : 'bare ws, Buffer built once'),
    parley: false,
    port,
    pid: server.child.pid!,
    wsUrl: `ws://127.0.0.1:${port}/app/bare?${wsQuery}`,
    appId: 'bare',
    key: 'bare',
    secret: 'bare',
    stop: () => server.stop(),
  };
}

export const SOKETI_BIN = join(ROOT, 'bench', 'soketi', 'node_modules', '@soketi', 'soketi', 'bin', 'server.js');

export const soketiInstalled = (): boolean => existsSync(SOKETI_BIN);

export async function soketiTarget(): Promise<Target> {
  const port = await freePort();
  const metricsPort = await freePort();
  const app = { id: 'bench-app', key: 'bench-key', secret: 'bench-secret' };
  const server = await startServer('Soketi 1.6.1', process.execPath, [SOKETI_BIN, 'start'], {
    cwd: join(ROOT, 'bench', 'soketi'),
    port,
    env: {
      NODE_ENV: 'production',
      SOKETI_HOST: '127.0.0.1',
      SOKETI_PORT: String(port),
      SOKETI_METRICS_SERVER_PORT: String(metricsPort),
      SOKETI_DEFAULT_APP_ID: app.id,
      SOKETI_DEFAULT_APP_KEY: app.key,
      SOKETI_DEFAULT_APP_SECRET: app.secret,
      SOKETI_DEBUG: '0',
    },
    ready: () => answers(`http://127.0.0.1:${port}/`),
  });
  return {
    name: 'Soketi 1.6.1',
    parley: false,
    port,
    pid: server.child.pid!,
    wsUrl: `ws://127.0.0.1:${port}/app/${app.key}?${wsQuery}`,
    appId: app.id,
    key: app.key,
    secret: app.secret,
    stop: () => server.stop(),
  };
}
