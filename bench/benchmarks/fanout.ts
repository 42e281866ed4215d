// fanout: N clients subscribed to one channel, events triggered through the Pusher HTTP API (the `pusher`
// SDK, signed). Each setup runs the same two phases with the same clients:
//   1. throughput: triggers in a closed loop (a few in flight) for a while; deliveries per second counted at
//      the clients, from the first trigger until the last delivery arrived;
//   2. latency: triggers at a fixed rate well below every setup's limit; p50/p99 of send → arrival.
// Setups, in one run: Parley; the bare `ws` server sending a string per socket; the bare server sending one
// Buffer built per event; Soketi 1.6.1 when installed. Then the burst setup: each trigger a batch_events of
// BURST events to the channel (throughput only), for Parley and Soketi.
import { ClientPool } from '../lib/clients.js';
import { sleep } from '../../testkit/wait.js';
import { nowMs } from '../lib/clock.js';
import { chosen, type BenchOptions, type BenchmarkReport } from '../lib/benchmark.js';
import { closedLoop, openLoop, pusherPublisher } from '../lib/publisher.js';
import { cpuAccount, log, progress } from '../lib/procs.js';
import { target as goal, type Row } from '../lib/report.js';
import { summarize } from '../lib/stats.js';
import { bareTarget, parleyTarget, soketiInstalled, soketiTarget, type Target } from '../lib/targets.js';
import { marker } from '../load/protocol.js';

const CHANNEL = 'bench-fanout';
/** Events per trigger in the burst setup (one POST /batch_events). */
const BURST = 10;
const EVENT = 'bench-event';
/** Filler that brings an event's data to about 200 bytes, the size of a short chat message event. */
const FILLER = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud';

export async function fanout(options: BenchOptions): Promise<BenchmarkReport> {
  const p = params(options.smoke);
  return report(p, await measure(setups(options), p), options.smoke);
}

function params(smoke: boolean): Params {
  return {
    clients: smoke ? 20 : 1000,
    workers: 2,
    throughputSeconds: smoke ? 1 : 8,
    inFlight: 4,
    latencyRate: smoke ? 10 : 20,
    latencySeconds: smoke ? 1 : 6,
    warmupSeconds: smoke ? 0.3 : 2,
    rounds: smoke ? 1 : 3,
  };
}

// ── setup ──

interface Setup {
  readonly label: string;
  readonly start: () => Promise<Target>;
  readonly burst?: true;
}

const burstLabel = (name: string) => `${name}, bursts of ${BURST}`;

/** The setups of this run, in the order they take turns; Soketi only in a full run, when installed. */
function setups(options: BenchOptions): { setups: Setup[]; soketi: boolean } {
  const all: Setup[] = [
    { label: 'Parley', start: () => parleyTarget() },
    { label: 'bare ws (string)', start: () => bareTarget('string') },
    { label: 'bare ws (Buffer)', start: () => bareTarget('buffer') },
  ];
  const soketi = !options.smoke && soketiInstalled();
  if (soketi) all.push({ label: 'Soketi', start: () => soketiTarget() });
  all.push({ label: burstLabel('Parley'), start: () => parleyTarget(), burst: true });
  if (soketi) all.push({ label: burstLabel('Soketi'), start: () => soketiTarget(), burst: true });
  return { setups: all.filter((s) => chosen(options, s.label)), soketi };
}

// ── measure ──

interface Measured {
  /** Each setup's best round, in the setups' order. */
  readonly rows: Row[];
  readonly soketi: boolean;
  /** Why a setup was left out. */
  readonly notes: string[];
}

/**
 * Rounds, the setups taking turns: a burst of load from outside the benchmark then hurts one round of a setup, not
 * all of it; each setup's best round (highest deliveries/s) is kept.
 */
async function measure({ setups, soketi }: { setups: Setup[]; soketi: boolean }, p: Params): Promise<Measured> {
  const notes: string[] = [];
  const best = new Map<string, Row>();
  const failed = new Set<string>();
  for (let round = 1; round <= p.rounds; round++) {
    for (const setup of setups) {
      if (failed.has(setup.label)) continue;
      log(`- ${setup.label}${p.rounds > 1 ? `, round ${round} of ${p.rounds}` : ''}`);
      let t: Target;
      try {
        t = await setup.start();
      } catch (err) {
        // Soketi is optional (its native uWebSockets.js build may not load on this Node): the run goes on without it.
        if (!setup.label.startsWith('Soketi')) throw err;
        failed.add(setup.label);
        const why = (err as Error).message.split('\n').slice(0, 3).join(' ').slice(0, 300);
        notes.push(`Soketi 1.6.1 is installed but did not start on Node ${process.version}, so it was left out: ${why}`);
        log(`  Soketi did not start: ${why}`);
        continue;
      }
      try {
        const row = await measureRound(t, p, setup.burst ? BURST : 1);
        const previous = best.get(setup.label);
        if (previous === undefined || row.figures.deliveriesPerSecond! > previous.figures.deliveriesPerSecond!) best.set(setup.label, row);
      } finally {
        await t.stop();
      }
    }
  }
  return { rows: setups.filter((s) => best.has(s.label)).map((s) => best.get(s.label)!), soketi, notes };
}

// ── report ──

function report(params: Params, { rows, soketi, notes: measureNotes }: Measured, smoke: boolean): BenchmarkReport {
  const notes: string[] = [];
  if (!soketi && !smoke) notes.push('Soketi 1.6.1 is not installed (npm run bench:install-soketi), so it was left out of this run.');
  notes.push(...measureNotes);

  const by = (prefix: string) => rows.find((r) => r.setup.startsWith(prefix) && !r.setup.includes('bursts'));
  const parley = by('Parley');
  const parleyBurst = rows.find((r) => r.setup.startsWith('Parley') && r.setup.includes('bursts'));
  const soketiBurst = rows.find((r) => r.setup.startsWith('Soketi') && r.setup.includes('bursts'));
  const bareString = by('bare ws, string');
  const bareBuffer = by('bare ws, Buffer');
  const soketiRow = by('Soketi');
  const rate = (r: Row | undefined) => r?.figures.deliveriesPerSecond ?? NaN;
  const comparisons = [
    { label: 'Parley / bare ws (Buffer built once)', value: rate(parley) / rate(bareBuffer) },
    { label: 'Parley / bare ws (string per socket)', value: rate(parley) / rate(bareString) },
    ...(soketiRow ? [{ label: 'Parley / Soketi 1.6.1', value: rate(parley) / rate(soketiRow) }] : []),
    ...(soketiRow && parley
      ? [{ label: 'server CPU per delivery, Soketi / Parley (above 1: Parley spends less)', value: soketiRow.figures.serverUsPerDelivery! / parley.figures.serverUsPerDelivery! }]
      : []),
    ...(bareBuffer && parley
      ? [{ label: 'server CPU per delivery, bare ws (Buffer) / Parley', value: bareBuffer.figures.serverUsPerDelivery! / parley.figures.serverUsPerDelivery! }]
      : []),
    { label: 'p99 latency, Parley / bare ws (Buffer)', value: (parley?.figures.p99 ?? NaN) / (bareBuffer?.figures.p99 ?? NaN) },
    ...(soketiRow ? [{ label: 'p99 latency, Parley / Soketi', value: (parley?.figures.p99 ?? NaN) / soketiRow.figures.p99! }] : []),
    ...(parleyBurst && soketiBurst ? [{ label: `bursts of ${BURST}: Parley / Soketi 1.6.1`, value: rate(parleyBurst) / rate(soketiBurst) }] : []),
    ...(parleyBurst && parley ? [{ label: `Parley: bursts of ${BURST} / one event per trigger`, value: rate(parleyBurst) / rate(parley) }] : []),
  ].filter((c) => Number.isFinite(c.value));
  const targets = [
    goal('deliveries/s ≥ 90% of the bare ws baseline (Buffer built once)', '≥ 0.90× bare', rate(parley) / rate(bareBuffer), 0.9, 'at least', '×'),
    ...(soketiRow ? [goal("deliveries/s ≥ 1.2× Soketi's", '≥ 1.2× Soketi', rate(parley) / rate(soketiRow), 1.2, 'at least', '×')] : []),
    ...(soketiRow && parley
      ? [goal("server CPU per delivery ≤ 0.75× Soketi's", '≤ 0.75× Soketi', parley.figures.serverUsPerDelivery! / soketiRow.figures.serverUsPerDelivery!, 0.75, 'at most', '×')]
      : []),
    ...(parleyBurst && soketiBurst ? [goal(`bursts of ${BURST}: deliveries/s ≥ 2× Soketi's`, '≥ 2× Soketi', rate(parleyBurst) / rate(soketiBurst), 2, 'at least', '×')] : []),
  ];
  for (const r of rows) {
    if (r.figures.closed > 0) notes.push(`${r.setup}: ${r.figures.closed} sockets closed during the run.`);
    if (r.figures.otherCpu! > 0.15) notes.push(`${r.setup}: other processes on the machine used ${r.figures.otherCpu!.toFixed(2)} cores during its best throughput round, so its figures are lower than on a quiet machine.`);
    if (r.figures.lost > 0) notes.push(`${r.setup}: ${r.figures.lost} deliveries missing after the drain.`);
  }
  return {
    benchmark: 'fanout',
    title: `Fan-out: ${params.clients.toLocaleString('en-US')} clients on one channel, events through the HTTP API`,
    smoke,
    parameters: {
      clients: params.clients,
      'client processes': params.workers,
      'event data': `${JSON.stringify(eventData(0)).length} bytes`,
      'throughput phase': `${params.throughputSeconds} s, ${params.inFlight} triggers in flight`,
      rounds: `${params.rounds}, setups taking turns; each setup's best round is shown`,
      'latency phase': `${params.latencyRate} events/s (${(params.latencyRate * params.clients).toLocaleString('en-US')} deliveries/s) for ${params.latencySeconds} s`,
      'burst setup': `each trigger one POST /batch_events of ${BURST} events to the channel, ${params.inFlight} in flight; throughput only`,
    },
    columns: [
      { key: 'deliveriesPerSecond', label: 'deliveries/s' },
      { key: 'eventsPerSecond', label: 'events/s' },
      { key: 'serverCpu', label: 'server CPU' },
      { key: 'serverUsPerDelivery', label: 'server µs/delivery' },
      { key: 'clientsCpu', label: 'clients CPU' },
      { key: 'otherCpu', label: 'other CPU' },
      { key: 'p50', label: 'p50 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'max', label: 'max ms' },
      { key: 'saturatedP50', label: 'p50 ms at max rate' },
    ],
    rows,
    comparisons,
    targets,
    notes,
    charts: {
      bars: [
        {
          file: 'fanout-throughput.svg',
          title: `Fan-out deliveries per second (${params.clients.toLocaleString('en-US')} clients, one channel)`,
          unit: 'deliveries/s',
          bars: rows.map((r) => ({ label: r.setup, value: r.figures.deliveriesPerSecond!, highlight: r.parley })),
        },
      ],
      latency: [
        {
          file: 'fanout-latency.svg',
          title: `Fan-out latency at ${(params.latencyRate * params.clients).toLocaleString('en-US')} deliveries/s (trigger → client)`,
          series: rows.filter((r) => r.latency !== undefined).map((r) => ({ label: r.setup, curve: r.latency!.curve })),
        },
      ],
    },
  };
}

function eventData(seq: number): string {
  return JSON.stringify({ marker: marker(seq, nowMs()), text: FILLER });
}

interface Params {
  clients: number;
  workers: number;
  throughputSeconds: number;
  inFlight: number;
  latencyRate: number;
  latencySeconds: number;
  warmupSeconds: number;
  rounds: number;
}

/** One setup's round: throughput, then (one event per trigger only) latency. `burst`: events per trigger. */
async function measureRound(t: Target, p: Params, burst: number): Promise<Row> {
  const { pool, failed, errors } = await ClientPool.connect({
    label: `${t.name}: clients`,
    url: t.wsUrl,
    clients: Array.from({ length: p.clients }, () => ({ channels: [CHANNEL] })),
    auth: { kind: 'none' },
    workers: p.workers,
  });
  const publisher = pusherPublisher({ port: t.port, appId: t.appId, key: t.key, secret: t.secret, connections: p.inFlight });
  try {
    if (failed > 0) throw new Error(`${t.name}: ${failed} clients could not connect: ${errors.join('; ')}`);
    const trigger =
      burst === 1
        ? (seq: number) => publisher.trigger(CHANNEL, EVENT, eventData(seq))
        : (seq: number) => publisher.triggerBatch(CHANNEL, EVENT, Array.from({ length: burst }, (_, i) => eventData(seq * burst + i)));

    // Warm-up (JIT, connection pool), not counted.
    await openLoop(trigger, 20, p.warmupSeconds * 1000);
    await sleep(300);

    // 1. Throughput
    const line = progress(`${t.name}: throughput`);
    pool.measure();
    const cpu = cpuAccount(t.pid, pool.pids);
    const started = nowMs();
    const loop = await closedLoop(trigger, p.inFlight, p.throughputSeconds * 1000, (sent) => line(`${sent} events triggered`));
    if (loop.failed > 0) throw new Error(`${t.name}: ${loop.failed} triggers failed: ${loop.errors.join('; ')}`);
    const expected = loop.sent * burst * pool.connected;
    const drained = await drain(pool, expected);
    const used = cpu.done();
    const through = await pool.report();
    const deliveries = [...through.events.values()].reduce((s, h) => s + h.count, 0);
    const seconds = (through.lastAt - started) / 1000;
    const deliveriesPerSecond = deliveries / seconds;
    line(`${Math.round(deliveriesPerSecond).toLocaleString('en-US')} deliveries/s (${loop.sent * burst} events, ${drained ? 'all delivered' : `${expected - deliveries} missing`})`, true);
    const saturated = summarize(through.events.get(EVENT)!);
    const throughput = {
      deliveriesPerSecond,
      eventsPerSecond: (loop.sent * burst) / seconds,
      serverCpu: used.server,
      serverUsPerDelivery: (used.server / deliveriesPerSecond) * 1e6,
      clientsCpu: used.clients,
      otherCpu: used.other,
      saturatedP50: saturated.p50,
      saturatedP99: saturated.p99,
    };
    const closedIn = (report: typeof through) => Object.values(report.closed).reduce((s, n) => s + n, 0);
    if (burst > 1) {
      return { setup: `${t.name}, bursts of ${burst}`, parley: t.parley, figures: { ...throughput, p50: NaN, p99: NaN, max: NaN, closed: closedIn(through), lost: expected - deliveries } };
    }

    // 2. Latency at a fixed rate
    await sleep(500);
    const line2 = progress(`${t.name}: latency`);
    pool.measure();
    const paced = await openLoop(trigger, p.latencyRate, p.latencySeconds * 1000, (sent) => line2(`${sent} events triggered`));
    await drain(pool, paced.sent * pool.connected);
    const lat = await pool.report();
    const latency = summarize(lat.events.get(EVENT)!);
    line2(`p50 ${latency.p50.toFixed(2)} ms, p99 ${latency.p99.toFixed(2)} ms, max ${latency.max.toFixed(1)} ms`, true);
    return {
      setup: t.name,
      parley: t.parley,
      figures: { ...throughput, p50: latency.p50, p99: latency.p99, max: latency.max, closed: closedIn(through) + closedIn(lat), lost: expected - deliveries },
      latency,
    };
  } finally {
    publisher.close();
    pool.close();
  }
}

/** Waits until `expected` marked frames arrived, or no more arrive for 3 s. */
async function drain(pool: ClientPool, expected: number): Promise<boolean> {
  let last = -1;
  let still = 0;
  for (;;) {
    const n = await pool.delivered();
    if (n >= expected) return true;
    if (n === last) {
      if (++still >= 15) return false;
    } else {
      still = 0;
      last = n;
    }
    await sleep(200);
  }
}
