// Processes of a benchmark run: every child is killed when the driver exits, however it exits. Also what
// /proc tells about a process (memory, CPU time, open files), and the progress output.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { sleep } from './clock.js';

const children = new Set<ChildProcess>();

export function track<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

/** Keeps the last `limit` characters a child wrote, for error messages. */
export class Tail {
  private text = '';
  constructor(private readonly limit = 10_000) {}
  push(chunk: Buffer | string): void {
    this.text += chunk.toString();
    if (this.text.length > this.limit) this.text = this.text.slice(-this.limit);
  }
  toString(): string {
    return this.text || '(no output)';
  }
}

export interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number;
  logs(): string;
  stop(): Promise<void>;
}

/** Spawns a server process and waits until `ready()` is true (polled every 100 ms). */
export async function startServer(
  name: string,
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; port: number; ready: () => Promise<boolean>; timeoutMs?: number },
): Promise<Server> {
  const output = new Tail();
  const child = track(
    spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  child.stdout?.on('data', (c: Buffer) => output.push(c));
  child.stderr?.on('data', (c: Buffer) => output.push(c));
  const server: Server = {
    name,
    child,
    port: options.port,
    logs: () => output.toString(),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const timeout = sleep(5_000).then(() => child.kill('SIGKILL'));
      await Promise.race([exited, timeout]);
      await exited;
    },
  };
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`);
    }
    if (await options.ready().catch(() => false)) return server;
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${name} was not ready within ${options.timeoutMs ?? 30_000} ms:\n${output}`);
    }
    await sleep(100);
  }
}

/** True once `url` answers with a status below 500. */
export async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.status < 500;
  } catch {
    return false;
  }
}

/** A port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resident memory of a process in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The soft limit on open files of a process, and how many it has open now. */
export function openFiles(pid: number): { limit: number; open: number } {
  const match = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
  const limit = match === null || match[1] === 'unlimited' ? Infinity : Number(match[1]);
  return { limit, open: readdirSync(`/proc/${pid}/fd`).length };
}

/** CPU used by a process over a span: call start(), then done() → share of one core (0–1 per core). */
export function cpuMeter(pid: number): { done(): { seconds: number; cores: number } } {
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  return {
    done() {
      const seconds = cpuSeconds(pid) - cpu0;
      return { seconds, cores: seconds / ((performance.now() - t0) / 1000) };
    },
  };
}

/** Busy CPU seconds of the whole machine so far (every core, every process). */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / TICKS_PER_SECOND;
}

export interface CpuShares {
  /** Cores used on average over the span by the server, the client processes, this driver, and everything else on the machine. */
  readonly server: number;
  /** The PostgreSQL backends serving the server (when their pids were given). */
  readonly database: number;
  readonly clients: number;
  readonly driver: number;
  readonly other: number;
}

/**
 * Where the machine's CPU went over a span. "other" is what processes outside the benchmark used (another
 * build or test run on the same machine): when it is not near zero, the figures of that span are disturbed.
 */
export function cpuAccount(serverPid: number, clientPids: readonly number[], databasePids: readonly number[] = []): { done(): CpuShares } {
  // A database backend may end during the span: it then counts what it had used at the start (nothing more is known).
  const first = new Map(databasePids.map((pid) => [pid, safeCpuSeconds(pid) ?? 0]));
  const read = () => ({
    at: performance.now(),
    machine: machineBusySeconds(),
    server: cpuSeconds(serverPid),
    clients: clientPids.reduce((s, pid) => s + cpuSeconds(pid), 0),
    database: databasePids.reduce((s, pid) => s + (safeCpuSeconds(pid) ?? first.get(pid)!), 0),
    // The driver itself, unless it is what is measured as the server.
    driver: serverPid === process.pid ? 0 : (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  });
  const a = read();
  return {
    done() {
      const b = read();
      const span = (b.at - a.at) / 1000;
      const server = (b.server - a.server) / span;
      const clients = (b.clients - a.clients) / span;
      const database = (b.database - a.database) / span;
      const driver = (b.driver - a.driver) / span;
      const other = Math.max(0, (b.machine - a.machine) / span - server - clients - database - driver);
      return { server, database, clients, driver, other };
    },
  };
}

function safeCpuSeconds(pid: number): number | undefined {
  try {
    return cpuSeconds(pid);
  } catch {
    return undefined;
  }
}

const isTTY = process.stdout.isTTY === true;

/** A progress line: rewritten in place on a terminal, one line per update in a log file. */
export function progress(label: string): (text: string, final?: boolean) => void {
  let last = '';
  return (text, final = false) => {
    const line = `  ${label}: ${text}`;
    if (isTTY) {
      process.stdout.write(`\r\x1b[K${line}${final ? '\n' : ''}`);
    } else if (line !== last || final) {
      process.stdout.write(`${line}\n`);
    }
    last = line;
  };
}

export function log(text = ''): void {
  process.stdout.write(`${text}\n`);
}
