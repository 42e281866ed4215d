// What a benchmark returns, how it is printed, and where a full run's result is kept
// (docs/bench/results/<name>.json, from which docs/benchmarks.md and the charts are generated).
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Machine } from './machine.js';
import { ROOT } from '../../testkit/root.js';
import { fmt, type LatencySummary } from './stats.js';

export const BENCHMARKS = ['fanout', 'chat-e2e', 'ingest', 'connections', 'search', 'sync', 'threads', 'uploads', 'compliance', 'cluster'] as const;
export type BenchmarkName = (typeof BENCHMARKS)[number];

export interface Column {
  readonly key: string;
  readonly label: string;
}

/** One setup measured (Parley, a baseline, ...): its figures by column key. */
export interface Row {
  readonly setup: string;
  /** Parley's own rows are compared against the baselines. */
  readonly parley: boolean;
  readonly figures: Record<string, number>;
  readonly latency?: LatencySummary;
  readonly note?: string;
}

export interface Comparison {
  readonly label: string;
  readonly value: number;
}

export interface Target {
  readonly label: string;
  /** The target as written in the issue. */
  readonly target: string;
  readonly actual: string;
  /** How far along: ≥ 1 means met (actual/target for "at least", target/actual for "at most"). */
  readonly score: number;
  readonly met: boolean;
}

export interface BarChart {
  readonly file: string;
  readonly title: string;
  readonly unit: string;
  readonly bars: { label: string; value: number; highlight?: boolean }[];
}

export interface LatencyChart {
  readonly file: string;
  readonly title: string;
  readonly series: { label: string; curve: [number, number][] }[];
  /** A dashed line, e.g. the target. */
  readonly target?: { value: number; label: string };
}

export interface Result {
  readonly benchmark: BenchmarkName;
  readonly title: string;
  readonly smoke: boolean;
  readonly finishedAt: string;
  readonly seconds: number;
  readonly machine: Machine;
  readonly parameters: Record<string, string | number>;
  readonly columns: readonly Column[];
  readonly rows: readonly Row[];
  /** Ratios printed under the table, e.g. "Parley / bare ws (Buffer)". */
  readonly comparisons: readonly Comparison[];
  readonly targets: readonly Target[];
  readonly notes: readonly string[];
  readonly charts: { readonly bars: readonly BarChart[]; readonly latency: readonly LatencyChart[] };
}

export const RESULTS_DIR = join(ROOT, 'docs', 'bench', 'results');

export function saveResult(result: Result): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${result.benchmark}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  return file;
}

export function loadResult(name: BenchmarkName): Result | null {
  const file = join(RESULTS_DIR, `${name}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Result) : null;
}

/** "at least": actual / target; "at most": target / actual. */
export function target(label: string, targetText: string, actual: number, goal: number, kind: 'at least' | 'at most', unit = ''): Target {
  const score = kind === 'at least' ? actual / goal : goal / actual;
  return {
    label,
    target: targetText,
    actual: unit === '×' ? `${actual.toFixed(2)}×` : `${fmt(actual)}${unit}`,
    score: Number.isFinite(score) ? score : 0,
    met: Number.isFinite(score) && score >= 1,
  };
}

/** A score rounded down, so one just short of 1 never reads as 1.00 (met). */
export function scoreText(score: number): string {
  return (Math.floor(score * 100) / 100).toFixed(2) + '×';
}

/** A plain-text table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function printResult(result: Result): void {
  const out: string[] = [];
  out.push('', `== ${result.title}${result.smoke ? ' (smoke)' : ''} ==`);
  out.push(
    table(
      ['setup', ...result.columns.map((c) => c.label)],
      result.rows.map((r) => [r.setup, ...result.columns.map((c) => fmt(r.figures[c.key] ?? NaN))]),
    ),
  );
  if (result.comparisons.length > 0) {
    out.push('', 'Ratios (same run):');
    for (const c of result.comparisons) out.push(`  ${c.label}: ${c.value.toFixed(2)}×`);
  }
  if (result.smoke) {
    out.push('', 'Smoke run: a few clients for a second or two, so no target is judged.');
    for (const t of result.targets) out.push(`  ${t.label}: ${t.actual} (target ${t.target})`);
  } else if (result.targets.length > 0) {
    out.push('', 'Targets:');
    for (const t of result.targets) out.push(`  [${t.met ? 'met' : 'NOT MET'}] ${t.label}: ${t.actual} (target ${t.target}; ${scoreText(t.score)} of it)`);
  }
  for (const note of result.notes) out.push(`  note: ${note}`);
  out.push('');
  process.stdout.write(out.join('\n') + '\n');
}
