// search: GET /search/messages over a million messages in 10,000 conversations on PostgreSQL, as users who
// are each in about 950 conversations (some 86,000 messages each can see), through the real HTTP API; and
// GET /users over 50,000 names. The data is loaded with SQL (bench/lib/search-data.ts): words by Zipf's law,
// so a few words are in a large share of the messages and most are rare. Closed loop, a fixed number of
// searches in flight, each a kind drawn in turn (rare, medium and common words, word beginnings, two words,
// an accented word typed without accents, one conversation, the next page, a name): latency per kind and
// over all of them, and the CPU Parley and PostgreSQL use per search.
import pg from 'pg';
import { jsonClient } from '../lib/http.js';
import { closedLoop } from '../lib/publisher.js';
import { cpuAccount, log, progress, type CpuShares } from '../lib/procs.js';
import { target as goal, type Row } from '../lib/report.js';
import { ACCENTED_WORDS, loadSearchData, typed, VOCABULARY, vocabulary, type SearchData } from '../lib/search-data.js';
import { Histogram, summarize } from '../lib/stats.js';
import { parleyTarget, type Target } from '../lib/targets.js';
import type { BenchOptions, BenchmarkReport } from '../lib/benchmark.js';

interface Params {
  readonly data: SearchData;
  readonly inFlight: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  readonly limit: number;
}

/** A small seeded generator (mulberry32): the same searches in every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Searcher {
  readonly id: number;
  readonly token: string;
  readonly conversations: readonly number[];
}

/** One kind of search: its label and how to make one (a path, and whether to fetch the next page and time that instead). */
interface Kind {
  readonly key: string;
  readonly label: string;
  make(rnd: () => number, who: Searcher): { path: string; nextPage?: boolean };
}

export async function search(options: BenchOptions): Promise<BenchmarkReport> {
  const p = params(options.smoke);
  const kinds = searchKinds(p);
  log('- Parley (PostgreSQL)');
  const t = await parleyTarget();
  try {
    const data = await setUp(t, p);
    return report(p, kinds, data.loadSeconds, await measure(t, p, kinds, data.searchers), options.smoke);
  } finally {
    await t.stop();
  }
}

function params(smoke: boolean): Params {
  return {
    data: smoke
      ? { users: 300, conversations: 200, messages: 5_000, heavyUsers: 5, deletedShare: 0.01 }
      : { users: 50_000, conversations: 10_000, messages: 1_000_000, heavyUsers: 20, deletedShare: 0.01 },
    inFlight: 2,
    seconds: smoke ? 1 : 30,
    warmupSeconds: smoke ? 0.5 : 5,
    limit: 20,
  };
}

/** The kinds of search, taken in turn. */
function searchKinds(p: Params): Kind[] {
  const words = vocabulary();
  const pick = (rnd: () => number, from: number, to: number) => words[from - 1 + Math.floor(rnd() * (to - from + 1))]!;
  const q = (text: string) => encodeURIComponent(text);
  const names = ['ali', 'bo', 'car', 'dav', 'emi', 'jos', 'lea', 'zo', 'mül', 'smi', 'garc', 'ngu', 'kow', 'dub', 'ros', 'joh'];
  return [
    { key: 'rare', label: 'a rare word (rank 3,000–30,000)', make: (r) => ({ path: `/search/messages?q=${q(pick(r, 3000, words.length))}&limit=${p.limit}` }) },
    { key: 'medium', label: 'a medium word (rank 200–3,000)', make: (r) => ({ path: `/search/messages?q=${q(pick(r, 200, 3000))}&limit=${p.limit}` }) },
    { key: 'common', label: 'a common word (rank 1–200: "the", "meeting")', make: (r) => ({ path: `/search/messages?q=${q(pick(r, 1, 200))}&limit=${p.limit}` }) },
    {
      key: 'prefix',
      label: 'the first 3 or 4 letters of a word',
      make: (r) => ({ path: `/search/messages?q=${q(typed(pick(r, 200, words.length)).slice(0, 3 + Math.floor(r() * 2)))}&limit=${p.limit}` }),
    },
    { key: 'two', label: 'two words (a common and a medium one)', make: (r) => ({ path: `/search/messages?q=${q(`${pick(r, 1, 200)} ${pick(r, 200, 3000)}`)}&limit=${p.limit}` }) },
    {
      key: 'accents',
      label: 'an accented word typed without accents ("cafe")',
      make: (r) => ({ path: `/search/messages?q=${q(typed(ACCENTED_WORDS[Math.floor(r() * ACCENTED_WORDS.length)]!))}&limit=${p.limit}` }),
    },
    {
      key: 'one',
      label: 'a word of rank 1–3,000 in one conversation (conversation_id)',
      make: (r, who) => ({
        path: `/search/messages?q=${q(pick(r, 1, 3000))}&conversation_id=${who.conversations[Math.floor(r() * who.conversations.length)]}&limit=${p.limit}`,
      }),
    },
    { key: 'next', label: 'the next page of a common word (cursor)', make: (r) => ({ path: `/search/messages?q=${q(pick(r, 1, 200))}&limit=${p.limit}`, nextPage: true }) },
    { key: 'users', label: 'GET /users: a name beginning', make: (r) => ({ path: `/users?query=${q(names[Math.floor(r() * names.length)]!)}&limit=${p.limit}` }) },
  ];
}

// ── setup ──

/** The data loaded with SQL, and the searchers: the heavy users, with their conversations (for conversation_id searches). */
async function setUp(t: Target, p: Params): Promise<{ searchers: Searcher[]; loadSeconds: number }> {
  const database = t.database!;
  const line = progress('loading');
  const started = performance.now();
  await loadSearchData(database.url, p.data, (step) => line(`${step} (${Math.round((performance.now() - started) / 1000)} s)`));
  const loadSeconds = (performance.now() - started) / 1000;
  line(`${p.data.messages.toLocaleString('en-US')} messages in ${p.data.conversations.toLocaleString('en-US')} conversations, ${p.data.users.toLocaleString('en-US')} users, in ${Math.round(loadSeconds)} s`, true);

  const searchers: Searcher[] = [];
  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  try {
    const { rows } = await db.query<{ user_id: string; ids: string[] }>(
      'select user_id, array_agg(conversation_id order by conversation_id) ids from participants where user_id <= $1 group by user_id order by user_id',
      [p.data.heavyUsers],
    );
    for (const row of rows) {
      const { rows: named } = await db.query<{ name: string }>('select name from users where id = $1', [row.user_id]);
      // The token carries the user's own name, so the first request changes nothing.
      const token = await t.node!.token(Number(row.user_id), named[0]!.name);
      searchers.push({ id: Number(row.user_id), token, conversations: row.ids.map(Number) });
    }
  } finally {
    await db.end();
  }
  const perUser = searchers.map((s) => s.conversations.length);
  log(`  searchers: ${searchers.length} users in ${Math.min(...perUser)}–${Math.max(...perUser)} conversations each`);
  return { searchers, loadSeconds };
}

// ── measure ──

interface Measured {
  readonly all: Histogram;
  readonly byKind: Map<string, Histogram>;
  /** Results found, by kind. */
  readonly results: Map<string, number>;
  readonly loopMs: number;
  readonly sent: number;
  readonly cpu: CpuShares;
}

async function measure(t: Target, p: Params, kinds: Kind[], searchers: Searcher[]): Promise<Measured> {
  const client = jsonClient(t.node!.api, p.inFlight);
  try {
    const rnd = random(42);
    let byKind = new Map(kinds.map((k) => [k.key, new Histogram()]));
    let all = new Histogram();
    let results = new Map(kinds.map((k) => [k.key, 0]));
    const one = async (seq: number) => {
      const kind = kinds[seq % kinds.length]!;
      const who = searchers[Math.floor(rnd() * searchers.length)]!;
      const { path, nextPage } = kind.make(rnd, who);
      let url = path;
      if (nextPage) {
        const first = await client.get(url, who.token);
        if (first.status !== 200) throw new Error(`GET ${url}: ${first.status} ${first.text.slice(0, 200)}`);
        const cursor = (JSON.parse(first.text) as { meta: { next_cursor: string | null } }).meta.next_cursor;
        if (cursor !== null) url = `${path}&cursor=${encodeURIComponent(cursor)}`;
      }
      const sentAt = performance.now();
      const r = await client.get(url, who.token);
      const ms = performance.now() - sentAt;
      if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.text.slice(0, 200)}`);
      byKind.get(kind.key)!.record(ms);
      all.record(ms);
      results.set(kind.key, results.get(kind.key)! + (JSON.parse(r.text) as { data: unknown[] }).data.length);
    };
    const warm = await closedLoop(one, p.inFlight, p.warmupSeconds * 1000);
    if (warm.failed > 0) throw new Error(`${warm.failed} searches failed: ${warm.errors.join('; ')}`);
    byKind = new Map(kinds.map((k) => [k.key, new Histogram()]));
    all = new Histogram();
    results = new Map(kinds.map((k) => [k.key, 0]));
    const dbPids = await t.databasePids();
    const account = cpuAccount(t.pid, [], dbPids);
    const running = progress('searching');
    let last = 0;
    const loop = await closedLoop(one, p.inFlight, p.seconds * 1000, (sent) => {
      running(`${sent} searches, ${sent - last}/s, p95 so far ${all.percentile(95).toFixed(1)} ms`);
      last = sent;
    });
    const cpu = account.done();
    if (loop.failed > 0) throw new Error(`${loop.failed} searches failed: ${loop.errors.join('; ')}`);
    running(`${loop.sent} searches, ${Math.round(loop.sent / (loop.ms / 1000))}/s, p50 ${all.percentile(50).toFixed(1)} ms, p95 ${all.percentile(95).toFixed(1)} ms`, true);
    return { all, byKind, results, loopMs: loop.ms, sent: loop.sent, cpu };
  } finally {
    client.close();
  }
}

// ── report ──

function report(p: Params, kinds: Kind[], loadSeconds: number, measured: Measured, smoke: boolean): BenchmarkReport {
  const notes: string[] = [];
  const { all, byKind, results, cpu } = measured;
  const perSearchMs = (cores: number) => (cores * measured.loopMs) / measured.sent;
  const row = (setup: string, h: Histogram, found: number, extra: Record<string, number> = {}): Row => ({
    setup,
    parley: true,
    figures: { searches: h.count, p50: h.percentile(50), p95: h.percentile(95), p99: h.percentile(99), max: h.max, found: found / Math.max(1, h.count), ...extra },
    latency: summarize(h),
  });
  const totalFound = [...results.values()].reduce((a, b) => a + b, 0);
  const rows: Row[] = [
    row(`all searches, ${p.inFlight} in flight`, all, totalFound, {
      perSecond: measured.sent / (measured.loopMs / 1000),
      parleyCpuMs: perSearchMs(cpu.server),
      databaseCpuMs: perSearchMs(cpu.database),
      otherCpu: cpu.other,
    }),
    ...kinds.map((k) => row(k.label, byKind.get(k.key)!, results.get(k.key)!)),
  ];
  if (cpu.other > 0.15) notes.push(`Other processes on the machine used ${cpu.other.toFixed(2)} cores (of ${2}) during the measurement: the latencies include waiting for the CPU.`);
  for (const k of kinds) if (results.get(k.key) === 0) notes.push(`${k.label}: no search of this kind found anything.`);

  return {
    benchmark: 'search',
    title: `Search: GET /search/messages over ${p.data.messages.toLocaleString('en-US')} messages in ${p.data.conversations.toLocaleString('en-US')} conversations (PostgreSQL)`,
    smoke,
    parameters: {
      data: `${p.data.messages.toLocaleString('en-US')} messages (${p.data.deletedShare * 100}% deleted) in ${p.data.conversations.toLocaleString('en-US')} conversations (70% direct, groups of 3–30), ${p.data.users.toLocaleString('en-US')} users; words by Zipf's law over ${VOCABULARY.toLocaleString('en-US')} words, 1–27 per message; loaded with SQL in ${Math.round(loadSeconds)} s`,
      searchers: `users 1–${p.data.heavyUsers}, each in many conversations (every fifth group and a share of the direct ones)`,
      load: `${p.inFlight} searches in flight (closed loop) for ${p.seconds} s after ${p.warmupSeconds} s of warm-up; limit ${p.limit}; the kinds in turn, words drawn with a fixed seed`,
      'CPU per search': 'cores used during the measurement × its seconds / searches; Parley: the node process; PostgreSQL: the backends serving Parley',
    },
    columns: [
      { key: 'searches', label: 'searches' },
      { key: 'perSecond', label: 'searches/s' },
      { key: 'p50', label: 'p50 ms' },
      { key: 'p95', label: 'p95 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'max', label: 'max ms' },
      { key: 'found', label: 'results per search' },
      { key: 'parleyCpuMs', label: 'Parley CPU ms/search' },
      { key: 'databaseCpuMs', label: 'PostgreSQL CPU ms/search' },
      { key: 'otherCpu', label: 'other CPU' },
    ],
    rows,
    comparisons: [],
    targets: [goal(`search p95 over ${p.data.messages.toLocaleString('en-US')} messages (every kind)`, '≤ 50 ms', all.percentile(95), 50, 'at most', ' ms')],
    notes,
    charts: {
      bars: [
        {
          file: 'search-p95.svg',
          title: 'Search: p95 latency by kind (ms)',
          unit: 'ms',
          bars: rows.map((r) => ({ label: r.setup, value: r.figures.p95!, highlight: r === rows[0] })),
        },
      ],
      latency: [
        {
          file: 'search-latency.svg',
          title: `Search: latency over ${p.data.messages.toLocaleString('en-US')} messages, ${p.inFlight} in flight`,
          series: [{ label: 'all searches', curve: summarize(all).curve }, ...['rare', 'common', 'two', 'users'].map((key) => ({ label: kinds.find((k) => k.key === key)!.label, curve: summarize(byKind.get(key)!).curve }))],
          target: { value: 50, label: 'target p95 ≤ 50 ms' },
        },
      ],
    },
  };
}
