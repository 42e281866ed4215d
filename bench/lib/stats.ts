// Latency figures: a log-bucketed histogram (about 1% precision, mergeable across processes, a few KB however
// many samples) and exact percentiles for short lists. Every latency is in milliseconds.

/** Relative width of a bucket: values are kept to within about 1%. */
const GROWTH = 1.01;
/** The smallest latency told apart from zero (1 µs); below it everything falls into bucket 0. */
const MIN_MS = 0.001;
const LOG_GROWTH = Math.log(GROWTH);

export interface HistogramData {
  /** [bucket, count] pairs, sparse. */
  readonly buckets: [number, number][];
  readonly count: number;
  readonly sum: number;
  readonly min: number;
  readonly max: number;
}

export class Histogram {
  private readonly counts = new Map<number, number>();
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  record(ms: number): void {
    const v = ms > MIN_MS ? ms : MIN_MS;
    const bucket = Math.ceil(Math.log(v / MIN_MS) / LOG_GROWTH);
    this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + 1);
    this.count++;
    this.sum += ms;
    if (ms < this.min) this.min = ms;
    if (ms > this.max) this.max = ms;
  }

  merge(other: Histogram | HistogramData): this {
    const pairs = other instanceof Histogram ? [...other.counts] : other.buckets;
    for (const [bucket, n] of pairs) this.counts.set(bucket, (this.counts.get(bucket) ?? 0) + n);
    this.count += other.count;
    this.sum += other.sum;
    if (other.count > 0) {
      this.min = Math.min(this.min, other.min);
      this.max = Math.max(this.max, other.max);
    }
    return this;
  }

  /** The latency at percentile p (0–100), nearest rank; the exact min and max at the ends. */
  percentile(p: number): number {
    if (this.count === 0) return NaN;
    if (p <= 0) return this.min;
    if (p >= 100) return this.max;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (const bucket of [...this.counts.keys()].sort((a, b) => a - b)) {
      seen += this.counts.get(bucket)!;
      if (seen >= rank) return Math.min(this.max, Math.max(this.min, MIN_MS * GROWTH ** bucket));
    }
    return this.max;
  }

  get mean(): number {
    return this.count === 0 ? NaN : this.sum / this.count;
  }

  toJSON(): HistogramData {
    return { buckets: [...this.counts], count: this.count, sum: this.sum, min: this.min, max: this.max };
  }

  static from(data: HistogramData): Histogram {
    return new Histogram().merge(data);
  }

  static of(values: Iterable<number>): Histogram {
    const h = new Histogram();
    for (const v of values) h.record(v);
    return h;
  }
}

/** Exact nearest-rank percentile of a list (not sorted in place). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  if (p <= 0) return sorted[0]!;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** The percentiles every latency table and chart shows. */
export const PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 99, 99.9, 100] as const;

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
  /** [percentile, ms] for the distribution charts. */
  readonly curve: [number, number][];
}

export function summarize(h: Histogram): LatencySummary {
  return {
    count: h.count,
    p50: h.percentile(50),
    p90: h.percentile(90),
    p99: h.percentile(99),
    p999: h.percentile(99.9),
    max: h.max,
    mean: h.mean,
    curve: PERCENTILES.map((p) => [p, h.percentile(p)]),
  };
}

/** A number for a table: 3 significant digits, thousands separated. */
export function fmt(n: number, digits = 3): string {
  if (!Number.isFinite(n)) return '–';
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return Number(n.toPrecision(digits)).toString();
}

export function ratio(a: number, b: number): string {
  return Number.isFinite(a / b) && b > 0 ? `${(a / b).toFixed(2)}×` : '–';
}
