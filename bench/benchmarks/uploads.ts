// uploads: what a large upload costs the server's memory. 25 MB files (random bytes, so nothing compresses and
// no image decoder runs) are posted to `POST /attachments` one at a time, then 4 at once, to a Parley storing
// them on local disk (the default) and to one storing them in an S3-compatible bucket (s3rver, in this driver
// process). The server's resident memory (VmRSS, /proc/<pid>/status) is sampled every 5 ms; the figure is its
// peak above what it was before the upload, beside the upload's own size: a server that buffered the file
// would grow by about the size of the file (ratio 1), one that streams it by a small fraction.
import { randomBytes } from 'node:crypto';
import { sleep } from '../../testkit/wait.js';
import { S3TestServer } from '../../testkit/s3-server.js';
import { log, progress, sampledPeak } from '../lib/procs.js';
import { target as goal, type Row } from '../lib/report.js';
import { parleyTarget, type Target } from '../lib/targets.js';
import { chosen, type BenchOptions, type BenchmarkReport } from '../lib/benchmark.js';

const MiB = 2 ** 20;
const FILE_BYTES = 25 * 1000 * 1000;
const SEQUENTIAL = 5;
const CONCURRENT = 4;

export async function uploads(options: BenchOptions): Promise<BenchmarkReport> {
  const p = params(options.smoke);
  return report(p, await measure(setups(options), p), options.smoke);
}

interface Params {
  readonly fileBytes: number;
  readonly sequential: number;
  readonly concurrent: number;
  readonly smoke: boolean;
}

function params(smoke: boolean): Params {
  return { fileBytes: smoke ? 2 * 1000 * 1000 : FILE_BYTES, sequential: smoke ? 1 : SEQUENTIAL, concurrent: smoke ? 2 : CONCURRENT, smoke };
}

// ── setup ──

interface Setup {
  readonly label: string;
  /** Starts the storage the setup needs (if any) and returns a Parley using it, and how to stop that storage. */
  readonly start: () => Promise<{ target: () => Promise<Target>; close: () => Promise<void> }>;
}

function setups(options: BenchOptions): Setup[] {
  const all: Setup[] = [
    { label: 'Parley, local disk', start: async () => ({ target: () => parleyTarget({ database: 'pglite' }), close: async () => {} }) },
    {
      label: 'Parley, S3 (s3rver)',
      start: async () => {
        const s3 = await S3TestServer.start('parley-bench');
        return { target: () => parleyTarget({ database: 'pglite', env: s3.env() }), close: () => s3.close() };
      },
    },
  ];
  return all.filter((s) => chosen(options, s.label));
}

// ── measure ──

async function measure(setups: Setup[], p: Params): Promise<Row[]> {
  const rows: Row[] = [];
  for (const setup of setups) {
    log(`- ${setup.label}`);
    const storage = await setup.start();
    try {
      rows.push(await measureSetup(setup.label, storage.target, p.fileBytes, p.sequential, p.concurrent, p.smoke));
    } finally {
      await storage.close();
    }
  }
  return rows;
}

async function measureSetup(label: string, start: () => Promise<Target>, fileBytes: number, sequential: number, concurrent: number, smoke: boolean): Promise<Row> {
  const t = await start();
  try {
    const node = t.node!;
    const token = await node.token(1, 'Uploader');
    const file = new Blob([randomBytes(fileBytes)], { type: 'application/octet-stream' });
    const upload = async () => {
      const form = new FormData();
      form.append('file', file, 'large.bin');
      const response = await fetch(`${node.api}/attachments`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form });
      if (response.status !== 201) throw new Error(`${label}: upload answered ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    };
    // Warm up (JIT, lazily loaded modules, the storage's first connection), then let the process settle.
    await upload();
    await sleep(smoke ? 200 : 2_000);

    const line = progress(label);
    let peakOne = 0;
    let seconds = 0;
    for (let i = 0; i < sequential; i++) {
      const sampled = await sampledPeak(t.pid, upload);
      peakOne = Math.max(peakOne, sampled.growth);
      seconds += sampled.seconds;
      line(`upload ${i + 1}/${sequential}: peak growth ${(sampled.growth / MiB).toFixed(1)} MiB`);
      await sleep(smoke ? 100 : 1_000);
    }
    const together = await sampledPeak(t.pid, () => Promise.all(Array.from({ length: concurrent }, upload)).then(() => undefined));
    line(`one at a time ≤ ${(peakOne / MiB).toFixed(1)} MiB, ${concurrent} at once ${(together.growth / MiB).toFixed(1)} MiB`, true);
    return {
      setup: label,
      parley: true,
      figures: {
        peakOneMiB: peakOne / MiB,
        peakOneRatio: peakOne / fileBytes,
        peakConcurrentMiB: together.growth / MiB,
        megabytesPerSecond: (fileBytes * sequential) / 1e6 / seconds,
      },
    };
  } finally {
    await t.stop();
  }
}

// ── report ──

function report({ fileBytes, sequential, concurrent }: Params, rows: Row[], smoke: boolean): BenchmarkReport {
  const worst = Math.max(...rows.map((r) => r.figures.peakOneMiB!));
  const megabytes = (fileBytes / 1e6).toFixed(0);
  return {
    benchmark: 'uploads',
    title: `Uploads: server memory while receiving ${megabytes} MB files`,
    smoke,
    parameters: {
      file: `${megabytes} MB of random bytes (application/octet-stream), multipart/form-data`,
      'one at a time': `${sequential} uploads, each measured on its own`,
      'at once': `${concurrent} uploads in flight together`,
      memory: 'peak VmRSS of the Parley process (sampled every 5 ms) minus VmRSS just before the upload',
      database: 'the embedded default (PGlite); the storage is what differs',
    },
    columns: [
      { key: 'peakOneMiB', label: 'peak growth, one upload (MiB)' },
      { key: 'peakOneRatio', label: 'growth / file size' },
      { key: 'peakConcurrentMiB', label: `peak growth, ${concurrent} at once (MiB)` },
      { key: 'megabytesPerSecond', label: 'MB/s, one at a time' },
    ],
    rows,
    comparisons: rows.map((r) => ({ label: `${r.setup}: peak memory growth / size of the file`, value: r.figures.peakOneRatio! })),
    targets: rows.length > 0 ? [goal(`memory growth for one ${megabytes} MB upload (worst setup)`, '≤ 8 MiB ("at most a few MB")', worst, 8, 'at most', ' MiB')] : [],
    notes: [],
    charts: {
      bars: [
        {
          file: 'uploads-memory.svg',
          title: `Server memory growth while receiving one ${megabytes} MB upload`,
          unit: 'MiB above the RSS before the upload',
          bars: [{ label: 'the file itself', value: fileBytes / MiB }, ...rows.map((r) => ({ label: r.setup, value: r.figures.peakOneMiB!, highlight: true }))],
        },
      ],
      latency: [],
    },
  };
}

