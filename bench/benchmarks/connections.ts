// connections: N idle clients, each subscribed to its own private channel (signed with the app secret, as an
// app's auth endpoint would), opened from several 127.0.0.x source addresses by 4 client processes.
// Figures: connections (with their subscription) per second while opening them, and the server's resident
// memory per connection once they are all open and idle ((RSS after − RSS before) / N, read from
// /proc/<pid>/status), beside the bare `ws` server holding the same connections in the same run.
import { ClientPool } from '../lib/clients.js';
import { sleep } from '../../testkit/wait.js';
import { log, openFiles, progress, rssBytes } from '../lib/procs.js';
import { target as goal, type Row } from '../lib/report.js';
import { bareTarget, parleyTarget, type Target } from '../lib/targets.js';
import { chosen, type BenchOptions, type BenchmarkReport } from '../lib/benchmark.js';

const WANTED = 20_000;
/** File descriptors a server keeps for itself (stdio, epoll, database pool, listening socket, ...). */
const FD_MARGIN = 150;

export async function connections(options: BenchOptions): Promise<BenchmarkReport> {
  return report(await measure(setups(options), options.smoke ? 50 : WANTED, options.smoke), options.smoke);
}

// ── setup ──

interface Setup {
  readonly label: string;
  readonly start: () => Promise<Target>;
}

function setups(options: BenchOptions): Setup[] {
  const all: Setup[] = [
    { label: 'Parley', start: () => parleyTarget() },
    { label: 'bare ws', start: () => bareTarget('buffer', 'bare ws') },
  ];
  return all.filter((s) => chosen(options, s.label));
}

// ── measure ──

interface Measured {
  readonly rows: Row[];
  /** Connections opened per setup: as many as wanted, or as many as the server process may open files for. */
  readonly count: number;
  readonly notes: string[];
}

async function measure(setups: Setup[], wanted: number, smoke: boolean): Promise<Measured> {
  const rows: Row[] = [];
  const notes: string[] = [];
  let count = wanted;
  for (const setup of setups) {
    log(`- ${setup.label}`);
    const t = await setup.start();
    try {
      const files = openFiles(t.pid);
      const possible = files.limit - files.open - FD_MARGIN;
      if (possible < count) {
        notes.push(
          `${wanted.toLocaleString('en-US')} connections were asked for, but the server process may open only ${files.limit.toLocaleString('en-US')} files ` +
            `(ulimit -n; the hard limit of this machine, which a process cannot raise), so ${possible.toLocaleString('en-US')} were opened.`,
        );
        count = possible;
      }
      rows.push(await measureSetup(t, count, smoke));
    } finally {
      await t.stop();
    }
  }
  return { rows, count, notes };
}

/** One setup: `count` subscribed connections opened, left idle, and the server's memory read before and after. */
async function measureSetup(t: Target, count: number, smoke: boolean): Promise<Row> {
  await sleep(smoke ? 200 : 2_000); // let the fresh process settle (JIT, lazy loading)
  const before = rssBytes(t.pid);
  const { pool, ms, failed, errors } = await ClientPool.connect({
    label: `${t.name}: connecting`,
    url: t.wsUrl,
    clients: Array.from({ length: count }, (_, i) => ({ channels: [`private-chat.user.${i + 1}`] })),
    auth: { kind: 'sign', appKey: t.key, appSecret: t.secret },
    workers: 4,
    sourceAddresses: 4,
    concurrency: 100,
    timeoutMs: 60_000,
  });
  try {
    const line = progress(`${t.name}: idle`);
    await sleep(smoke ? 200 : 5_000);
    const after = rssBytes(t.pid);
    const report = await pool.report();
    const bytesPerConnection = (after - before) / pool.connected;
    line(`${Math.round(bytesPerConnection).toLocaleString('en-US')} bytes of RSS per connection (${(before / 2 ** 20).toFixed(0)} → ${(after / 2 ** 20).toFixed(0)} MiB)`, true);
    if (errors.length > 0) log(`  first errors: ${errors.join('; ')}`);
    return {
      setup: t.name,
      parley: t.parley,
      figures: {
        perSecond: pool.connected / (ms / 1000),
        bytesPerConnection,
        rssBeforeMiB: before / 2 ** 20,
        rssAfterMiB: after / 2 ** 20,
        open: report.open,
        failed,
      },
    };
  } finally {
    pool.close();
  }
}

// ── report ──

function report({ rows, count, notes: measureNotes }: Measured, smoke: boolean): BenchmarkReport {
  const notes = [...measureNotes];
  const parley = rows.find((r) => r.parley);
  const bare = rows.find((r) => !r.parley);
  for (const r of rows) if (r.figures.failed > 0) notes.push(`${r.setup}: ${r.figures.failed} connections failed.`);
  return {
    benchmark: 'connections',
    title: `Connections: ${count.toLocaleString('en-US')} idle subscribed sockets`,
    smoke,
    parameters: {
      connections: count,
      subscriptions: '1 per socket: its own private-chat.user.{n} (signed with the app secret)',
      'client processes': 4,
      'source addresses': '127.0.0.2 – 127.0.0.5',
      'connects in flight': '100 per client process',
      memory: 'server RSS (VmRSS) before the first and 5 s after the last connection, difference / connections',
    },
    columns: [
      { key: 'perSecond', label: 'connections/s' },
      { key: 'bytesPerConnection', label: 'RSS bytes/connection' },
      { key: 'rssBeforeMiB', label: 'RSS before MiB' },
      { key: 'rssAfterMiB', label: 'RSS after MiB' },
      { key: 'open', label: 'open at the end' },
    ],
    rows,
    comparisons: [
      ...(parley && bare
        ? [
            { label: 'memory per connection, Parley / bare ws', value: parley.figures.bytesPerConnection! / bare.figures.bytesPerConnection! },
            { label: 'connections per second, Parley / bare ws', value: parley.figures.perSecond! / bare.figures.perSecond! },
          ]
        : []),
    ],
    targets: parley ? [goal('memory per idle connection', '≤ 8 KB (8,192 bytes)', parley.figures.bytesPerConnection!, 8192, 'at most', ' bytes')] : [],
    notes,
    charts: {
      bars: [
        {
          file: 'connections-memory.svg',
          title: 'Server memory per idle subscribed connection',
          unit: 'bytes (RSS) per connection',
          bars: rows.map((r) => ({ label: r.setup, value: r.figures.bytesPerConnection!, highlight: r.parley })),
        },
        {
          file: 'connections-rate.svg',
          title: 'Connections opened and subscribed per second',
          unit: 'connections/s',
          bars: rows.map((r) => ({ label: r.setup, value: r.figures.perSecond!, highlight: r.parley })),
        },
      ],
      latency: [],
    },
  };
}

