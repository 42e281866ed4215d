// What /proc tells about the processes of a benchmark run (memory, CPU time, open files, where the machine's
// CPU went), and the progress output. Starting and stopping the processes themselves: testkit/processes.ts.
import { readFileSync, readdirSync } from 'node:fs';

/** Resident memory of a process in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/** Runs work while sampling the process's RSS every 5 ms: the peak above the RSS just before, and the seconds it took. */
export async function sampledPeak(pid: number, work: () => Promise<void>): Promise<{ growth: number; seconds: number }> {
  const before = rssBytes(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 5);
  const started = performance.now();
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, rssBytes(pid));
  return { growth: Math.max(0, peak - before), seconds: (performance.now() - started) / 1000 };
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
export function cpuAccount(serverPid: number, clientPids: readonly number[], databasePids: readonly number[] = []): { done(laterDatabasePids?: readonly number[]): CpuShares } {
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
    // laterDatabasePids: the backends serving the server at the end of the span. Those not there at the start
    // were opened during it (a pool growing under load): all their CPU falls in the span.
    done(laterDatabasePids = []) {
      const b = read();
      const born = laterDatabasePids.filter((pid) => !first.has(pid)).reduce((s, pid) => s + (safeCpuSeconds(pid) ?? 0), 0);
      const span = (b.at - a.at) / 1000;
      const server = (b.server - a.server) / span;
      const clients = (b.clients - a.clients) / span;
      const database = (b.database - a.database + born) / span;
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
