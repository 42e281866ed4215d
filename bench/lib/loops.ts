// Loops of the read benchmarks: a closed loop of requests measured (a warm-up, then its latencies, its wall time and
// the CPU Parley and PostgreSQL used while it ran), and work over many items a few at a time.
import { closedLoop } from './publisher.js';
import { cpuAccount, progress, type CpuShares } from './procs.js';
import { Histogram } from './stats.js';
import type { Row } from './report.js';
import { summarize } from './stats.js';
import type { Target } from './targets.js';

export interface Loop {
  readonly h: Histogram;
  readonly ms: number;
  readonly cpu: CpuShares;
}

export interface LoopParams {
  readonly inFlight: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
}

/** A closed loop of `once` after a warm-up: latency (once records into the histogram it is given), wall time and CPU of the measured part. */
export async function measureLoop(t: Target, p: LoopParams, label: string, once: (h: Histogram) => Promise<void>): Promise<Loop> {
  let h = new Histogram();
  const op = () => once(h);
  const warm = await closedLoop(op, p.inFlight, p.warmupSeconds * 1000);
  if (warm.failed > 0) throw new Error(`${label}: ${warm.failed} requests failed: ${warm.errors.join('; ')}`);
  h = new Histogram();
  const account = cpuAccount(t.pid, [], await t.databasePids());
  const running = progress(label);
  let last = 0;
  const loop = await closedLoop(op, p.inFlight, p.seconds * 1000, (sent) => {
    running(`${sent} requests, ${sent - last}/s, p95 so far ${h.percentile(95).toFixed(1)} ms`);
    last = sent;
  });
  const cpu = account.done(await t.databasePids());
  if (loop.failed > 0) throw new Error(`${label}: ${loop.failed} requests failed: ${loop.errors.join('; ')}`);
  running(`${loop.sent} requests, ${Math.round(loop.sent / (loop.ms / 1000))}/s, p50 ${h.percentile(50).toFixed(1)} ms, p95 ${h.percentile(95).toFixed(1)} ms`, true);
  return { h, ms: loop.ms, cpu };
}

/** fn over every item (with its index), at most `concurrency` at once. */
export async function eachLimited<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** A measured loop as a report row: requests, rate, latency percentiles, CPU per request (plus any extra figures). */
export function loopRow(setup: string, parley: boolean, l: Loop, extra: Record<string, number> = {}): Row {
  const perRequest = (cores: number) => (cores * l.ms) / l.h.count;
  return {
    setup,
    parley,
    figures: {
      requests: l.h.count,
      perSecond: l.h.count / (l.ms / 1000),
      p50: l.h.percentile(50),
      p95: l.h.percentile(95),
      p99: l.h.percentile(99),
      max: l.h.max,
      ...extra,
      parleyCpuMs: perRequest(l.cpu.server),
      databaseCpuMs: perRequest(l.cpu.database),
      otherCpu: l.cpu.other,
    },
    latency: summarize(l.h),
  };
}
