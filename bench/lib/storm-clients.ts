// The driver's side of the reconnect storm's clients (bench/load/storm-worker.ts): forks the workers, hands each
// a share of the clients, and merges their reports.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { StormClient, StormCommand, StormMessage, StormNode, StormReport } from '../load/storm-worker.js';
import { track } from '../../testkit/processes.js';

const WORKER = fileURLToPath(new URL('../load/storm-worker.ts', import.meta.url));

export class StormClients {
  private constructor(private readonly workers: ChildProcess[]) {}

  get pids(): number[] {
    return this.workers.map((w) => w.pid!);
  }

  /** Connects every client to its home node (subscribed, with a sync cursor). */
  static async connect(nodes: readonly StormNode[], clients: readonly StormClient[], workers = 2): Promise<{ pool: StormClients; connected: number; failed: number; errors: string[] }> {
    const shares: StormClient[][] = Array.from({ length: workers }, () => []);
    clients.forEach((c, i) => shares[i % workers]!.push(c));
    const children = await Promise.all(
      shares.map(async () => {
        const child = track(fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' }));
        await next(child, 'ready', 30_000);
        return child;
      }),
    );
    const pool = new StormClients(children);
    try {
      const results = await Promise.all(
        children.map((child, i) => {
          const done = next(child, 'connected', 600_000) as Promise<Extract<StormMessage, { type: 'connected' }>>;
          child.send({ type: 'connect', nodes, clients: shares[i]!, concurrency: 25 } satisfies StormCommand);
          return done;
        }),
      );
      return {
        pool,
        connected: results.reduce((s, r) => s + r.connected, 0),
        failed: results.reduce((s, r) => s + r.failed, 0),
        errors: results.flatMap((r) => r.errors).slice(0, 5),
      };
    } catch (err) {
      pool.close();
      throw err;
    }
  }

  /** Every worker's figures together. */
  async report(): Promise<Omit<StormReport, 'type'>> {
    const reports = await Promise.all(
      this.workers.map((w) => {
        const r = next(w, 'report', 30_000) as Promise<StormReport>;
        w.send({ type: 'report' } satisfies StormCommand);
        return r;
      }),
    );
    const sum = (pick: (r: StormReport) => number) => reports.reduce((s, r) => s + pick(r), 0);
    return {
      clients: sum((r) => r.clients),
      away: sum((r) => r.away),
      firstAwayAt: Math.min(...reports.map((r) => r.firstAwayAt)),
      resubscribed: sum((r) => r.resubscribed),
      lastResubscribedAt: Math.max(...reports.map((r) => r.lastResubscribedAt)),
      synced: sum((r) => r.synced),
      lastSyncedAt: Math.max(...reports.map((r) => r.lastSyncedAt)),
      changes: sum((r) => r.changes),
      missingMessage: sum((r) => r.missingMessage),
      serverErrors: sum((r) => r.serverErrors),
      retries: sum((r) => r.retries),
      errors: reports.flatMap((r) => r.errors).slice(0, 5),
    };
  }

  close(): void {
    for (const w of this.workers) {
      if (w.connected) w.send({ type: 'close' } satisfies StormCommand);
      setTimeout(() => w.kill('SIGKILL'), 3_000).unref();
    }
  }
}

function next(child: ChildProcess, type: StormMessage['type'], timeoutMs: number): Promise<StormMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`storm worker sent no "${type}" within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: StormMessage): void => {
      if (m.type === type) finish(undefined, m);
    };
    const onExit = (code: number | null): void => finish(new Error(`storm worker exited (${code}) before "${type}"`));
    function finish(err?: Error, m?: StormMessage): void {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(m!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
