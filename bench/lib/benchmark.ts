// What a benchmark is, for the runner (bench/run.ts) and the benchmarks alike: the options it is run with and
// the report it returns. Each bench/benchmarks/<name>.ts keeps three parts apart:
//   setup    starts the servers (bench/lib/targets.ts) and writes the data the measurement needs;
//   measure  runs the load and returns plain figures (rows of numbers by column key, histograms), nothing printed;
//   report   turns those figures into the run's report (table rows, ratios, targets, notes, charts): no I/O, so
//            the same figures always make the same report.
// The runner adds the machine and the times, prints the report and stores it (bench/lib/report.ts).
import type { Result } from './report.js';

export interface BenchOptions {
  readonly smoke: boolean;
  /** Only the setups whose names contain one of these (case-insensitive); all when empty. */
  readonly setups: readonly string[];
}

/** A benchmark's report, before the runner adds the machine, when it finished and how long it took. */
export type BenchmarkReport = Omit<Result, 'machine' | 'finishedAt' | 'seconds'>;

export type Benchmark = (options: BenchOptions) => Promise<BenchmarkReport>;

/** Whether `--setup` asked for the setup of this label (every setup when none was named). */
export function chosen(options: BenchOptions, label: string): boolean {
  return options.setups.length === 0 || options.setups.some((s) => label.toLowerCase().includes(s.toLowerCase()));
}
