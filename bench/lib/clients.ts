// The driver's side of the client workers: forks N worker processes (bench/load/worker.ts), hands each a
// share of the clients, and merges what they measured.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AuthMode, ClientSpec, DriverMessage, WorkerMessage, WorkerReport } from '../load/protocol.js';
import { Histogram } from './stats.js';
import { track } from '../../testkit/processes.js';
import { progress } from './procs.js';

const WORKER = fileURLToPath(new URL('../load/worker.ts', import.meta.url));

export interface PoolOptions {
  readonly url: string;
  readonly clients: readonly ClientSpec[];
  readonly auth: AuthMode;
  /** Worker processes (default 2: one per core of the reference machine). */
  readonly workers?: number;
  /** Source addresses 127.0.0.2 … 127.0.0.(1+n) (default 1 per 10,000 clients, at least 1). */
  readonly sourceAddresses?: number;
  /** Connects in flight per worker (default 50). */
  readonly concurrency?: number;
  readonly timeoutMs?: number;
  /** A label for the progress line. */
  readonly label: string;
}

export interface MergedReport {
  readonly events: Map<string, Histogram>;
  readonly firstAt: number;
  readonly lastAt: number;
  readonly closed: Record<string, number>;
  readonly open: number;
}

interface Worker {
  readonly child: ChildProcess;
  readonly size: number;
}

export class ClientPool {
  private readonly workers: Worker[];
  private readonly completions = new Map<number, { clients: number; lastAt: number; workers: number }>();
  private readonly completionWaiters = new Map<number, (lastAt: number) => void>();
  /** Messages complete on every worker before anyone asked. */
  private readonly finished = new Map<number, number>();
  connected = 0;
  private constructor(workers: Worker[]) {
    this.workers = workers;
    for (const w of workers) {
      w.child.on('message', (m: WorkerMessage) => {
        if (m.type === 'complete') this.onComplete(m.seq, m.clients, m.lastAt);
      });
    }
  }

  /** Forks the workers, connects and subscribes every client; resolves with the pool and how long it took. */
  static async connect(options: PoolOptions): Promise<{ pool: ClientPool; ms: number; failed: number; errors: string[] }> {
    const n = Math.max(1, Math.min(options.workers ?? 2, options.clients.length));
    const addresses = Array.from(
      { length: options.sourceAddresses ?? Math.max(1, Math.ceil(options.clients.length / 10_000)) },
      (_, i) => `127.0.0.${2 + i}`,
    );
    const shares: ClientSpec[][] = Array.from({ length: n }, () => []);
    options.clients.forEach((c, i) => shares[i % n]!.push(c));
    const workers = await Promise.all(
      shares.map(async (share) => {
        const child = track(fork(WORKER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' }));
        await waitFor(child, 'ready', 30_000);
        return { child, size: share.length };
      }),
    );
    const pool = new ClientPool(workers);
    const counts = workers.map(() => ({ connected: 0, failed: 0 }));
    const line = progress(options.label);
    const ticker = setInterval(() => {
      const connected = counts.reduce((s, c) => s + c.connected, 0);
      const failed = counts.reduce((s, c) => s + c.failed, 0);
      line(`${connected.toLocaleString('en-US')}/${options.clients.length.toLocaleString('en-US')} connected${failed ? `, ${failed} failed` : ''}`);
    }, 1000);
    const started = performance.now();
    try {
      const results = await Promise.all(
        workers.map((w, i) => {
          w.child.on('message', (m: WorkerMessage) => {
            if (m.type === 'progress') counts[i] = { connected: m.connected, failed: m.failed };
          });
          const done = waitFor(w.child, 'connected', (options.timeoutMs ?? 60_000) * 4) as Promise<Extract<WorkerMessage, { type: 'connected' }>>;
          pool.post(w, {
            type: 'connect',
            url: options.url,
            clients: shares[i]!,
            auth: options.auth,
            localAddresses: addresses,
            concurrency: options.concurrency ?? 50,
            timeoutMs: options.timeoutMs ?? 60_000,
          });
          return done;
        }),
      );
      const ms = performance.now() - started;
      pool.connected = results.reduce((s, r) => s + r.connected, 0);
      const failed = results.reduce((s, r) => s + r.failed, 0);
      line(`${pool.connected.toLocaleString('en-US')} connected and subscribed in ${(ms / 1000).toFixed(1)} s${failed ? `, ${failed} failed` : ''}`, true);
      return { pool, ms, failed, errors: results.flatMap((r) => r.errors).slice(0, 5) };
    } catch (err) {
      pool.close();
      throw err;
    } finally {
      clearInterval(ticker);
    }
  }

  /** The worker processes' ids (for CPU accounting). */
  get pids(): number[] {
    return this.workers.map((w) => w.child.pid!);
  }

  /** Starts (or restarts) recording in every worker. */
  measure(completion?: readonly string[]): void {
    this.completions.clear();
    this.finished.clear();
    for (const w of this.workers) this.post(w, { type: 'measure', completion });
  }

  /** Resolves with the arrival of the last completion event of message `seq` at the last client, or null on timeout. */
  completed(seq: number, timeoutMs: number): Promise<number | null> {
    const lastAt = this.finished.get(seq);
    if (lastAt !== undefined) {
      this.finished.delete(seq);
      return Promise.resolve(lastAt);
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.completionWaiters.delete(seq);
        resolve(null);
      }, timeoutMs);
      this.completionWaiters.set(seq, (lastAt) => {
        clearTimeout(timer);
        resolve(lastAt);
      });
    });
  }

  async report(): Promise<MergedReport> {
    const reports = await Promise.all(
      this.workers.map((w) => {
        const r = waitFor(w.child, 'report', 30_000) as Promise<WorkerReport>;
        this.post(w, { type: 'report' });
        return r;
      }),
    );
    const events = new Map<string, Histogram>();
    const closed: Record<string, number> = {};
    for (const r of reports) {
      for (const [name, figures] of Object.entries(r.events)) {
        const h = events.get(name) ?? new Histogram();
        events.set(name, h.merge(figures.latency));
      }
      for (const [code, n] of Object.entries(r.closed)) closed[code] = (closed[code] ?? 0) + n;
    }
    return {
      events,
      firstAt: Math.min(...reports.map((r) => r.firstAt)),
      lastAt: Math.max(...reports.map((r) => r.lastAt)),
      closed,
      open: reports.reduce((s, r) => s + r.open, 0),
    };
  }

  /** Deliveries of marked frames received so far, all events together. */
  async delivered(): Promise<number> {
    const r = await this.report();
    let n = 0;
    for (const h of r.events.values()) n += h.count;
    return n;
  }

  close(): void {
    for (const w of this.workers) {
      if (w.child.connected) this.post(w, { type: 'close' });
      setTimeout(() => w.child.kill('SIGKILL'), 3_000).unref();
    }
  }

  private post(w: Worker, message: DriverMessage): void {
    w.child.send(message);
  }

  private onComplete(seq: number, clients: number, lastAt: number): void {
    const c = this.completions.get(seq) ?? { clients: 0, lastAt: -Infinity, workers: 0 };
    c.clients += clients;
    c.workers++;
    c.lastAt = Math.max(c.lastAt, lastAt);
    this.completions.set(seq, c);
    if (c.workers === this.workers.length) {
      this.completions.delete(seq);
      const waiter = this.completionWaiters.get(seq);
      this.completionWaiters.delete(seq);
      if (waiter) waiter(c.lastAt);
      else this.finished.set(seq, c.lastAt);
    }
  }
}

/** The next message of `type` from a worker; rejects if it exits first or after timeoutMs. */
function waitFor(child: ChildProcess, type: WorkerMessage['type'], timeoutMs: number): Promise<WorkerMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`worker sent no "${type}" within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: WorkerMessage): void => {
      if (m.type === type) finish(undefined, m);
    };
    const onExit = (code: number | null): void => finish(new Error(`worker exited (${code}) before "${type}"`));
    function finish(err?: Error, m?: WorkerMessage): void {
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
