// threads: the reads of threads, pins and a user's own inbox (API v1.2) on PostgreSQL, through the real HTTP API,
// on data written through the API too (so every thread, member row and counter is what the rules made).
//
// 1. GET /threads for a user who takes part in 500 threads (50 groups of 10, ten threads each: the user sent the root
//    of one and replied in the others; another five threads per group the user is not in). Baseline in the same
//    run: the same user's inbox first page (GET /conversations?limit=30).
// 2. GET /messages/{id}/thread of a thread of 10,000 replies: its newest page and a page from its middle, in turn.
//    Baseline: the same two pages of a conversation's history with 10,000 messages (GET /conversations/{id}/messages).
// 3. The inbox's first page of a user in 1,100 direct conversations, once with no own state (the baseline), then
//    with the 1,000 most recently active archived and 10 older ones pinned: the page must pass over the archived
//    ones to find its 30.
// Closed loops, two requests in flight; latency and the CPU Parley and PostgreSQL use per request.
import { jsonClient, type JsonClient } from '../lib/http.js';
import { eachLimited, loopRow, measureLoop, type Loop } from '../lib/loops.js';
import { log, progress } from '../lib/procs.js';
import { target as goal, type Row } from '../lib/report.js';
import { summarize, type Histogram } from '../lib/stats.js';
import { nowMs } from '../lib/clock.js';
import { parleyTarget, type Target } from '../lib/targets.js';
import type { BenchOptions, BenchmarkReport } from '../lib/benchmark.js';

interface Params {
  readonly groups: number;
  readonly groupSize: number;
  /** Threads per group the measured user takes part in, and threads per group they do not. */
  readonly threadsIn: number;
  readonly threadsOut: number;
  readonly repliesPerThread: number;
  /** Replies of the long thread, and messages of the baseline conversation. */
  readonly longThread: number;
  readonly inboxConversations: number;
  readonly archived: number;
  readonly pinned: number;
  readonly inFlight: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** Requests in flight while the data is written. */
  readonly writers: number;
}

interface Person {
  readonly id: number;
  readonly token: string;
}

async function ok(what: string, r: Promise<{ status: number; text: string }>, ...statuses: number[]): Promise<any> {
  const { status, text } = await r;
  if (!statuses.includes(status)) throw new Error(`${what}: ${status} ${text.slice(0, 300)}`);
  return text === '' ? null : JSON.parse(text);
}

export async function threads(options: BenchOptions): Promise<BenchmarkReport> {
  const p = params(options.smoke);
  log('- Parley (PostgreSQL)');
  const t = await parleyTarget();
  const http = jsonClient(t.node!.api, p.writers);
  try {
    const data = await setUp(t, p, http);
    return report(p, data, await measure(t, p, http, data), options.smoke);
  } finally {
    http.close();
    await t.stop();
  }
}

function params(smoke: boolean): Params {
  return {
    groups: smoke ? 3 : 50,
    groupSize: 10,
    threadsIn: 10,
    threadsOut: 5,
    repliesPerThread: 4,
    longThread: smoke ? 200 : 10_000,
    inboxConversations: smoke ? 40 : 1_100,
    archived: smoke ? 20 : 1_000,
    pinned: 10,
    inFlight: 2,
    seconds: smoke ? 1 : 10,
    warmupSeconds: smoke ? 0.5 : 2,
    writers: 16,
  };
}

// ── setup ──

/** What setUp wrote: the users measured and where their threads, pages and conversations are. */
interface Written {
  /** The user in many threads. */
  readonly me: Person;
  /** A member of the long thread's group and of the baseline conversation's. */
  readonly reader: Person;
  readonly threadPath: string;
  readonly threadMiddle: number;
  readonly historyPath: string;
  readonly historyMiddle: number;
  /** The user of the many direct conversations, and those conversations, the oldest first. */
  readonly owner: Person;
  readonly directs: readonly number[];
  readonly threadCount: number;
  readonly setupSeconds: number;
}

/** Writes the data through the API (so every thread, member row and counter is what the rules made). */
async function setUp(t: Target, p: Params, http: JsonClient): Promise<Written> {
  const node = t.node!;
  const started = performance.now();
  const line = progress('setup');
  let nextUser = 1;
  const person = async (): Promise<Person> => {
    const id = nextUser++;
    await ok(`PUT /users/${id}`, node.server('PUT', `/users/${id}`, { name: `User ${id}` }).then((r) => ({ status: r.status, text: JSON.stringify(r.body) })), 200, 201);
    return { id, token: await node.token(id) };
  };
  const people = async (n: number): Promise<Person[]> => {
    const list: Person[] = [];
    for (let i = 0; i < n; i++) list.push(await person());
    return list;
  };
  const send = (who: Person, conversationId: number, body: Record<string, unknown>) =>
    ok('POST messages', http.post(`/conversations/${conversationId}/messages`, who.token, body), 201).then((r) => r.data as { id: number });
  const newGroup = async (owner: Person, members: readonly Person[]) =>
    (await ok('POST /groups', http.post('/groups', owner.token, { name: `Group of ${owner.id}`, user_ids: members.map((m) => m.id) }), 201)).data.id as number;
  // 1. The measured user's threads.
  const me = await person();
  let threadCount = 0;
  for (let g = 0; g < p.groups; g++) {
    const others = await people(p.groupSize - 1);
    const groupId = await newGroup(me, others);
    const roots: { root: number; mine: boolean }[] = [];
    for (let k = 0; k < p.threadsIn + p.threadsOut; k++) {
      const mine = k < p.threadsIn;
      const sender = mine && k === 0 ? me : others[k % others.length]!;
      roots.push({ root: (await send(sender, groupId, { body: `Root ${k}` })).id, mine });
    }
    await eachLimited(roots, p.writers, async ({ root, mine }, k) => {
      if (mine && k > 0) await send(me, groupId, { body: 'My reply', thread_id: root });
      for (let r = 0; r < p.repliesPerThread; r++) await send(others[(k + r) % others.length]!, groupId, { body: `Reply ${r}`, thread_id: root });
    });
    threadCount += p.threadsIn;
    line(`${threadCount} threads of the measured user`);
  }

  // 2. A long thread, and a conversation with as many messages in its history.
  const crew = await people(p.groupSize);
  const threadGroup = await newGroup(crew[0]!, crew.slice(1));
  const historyGroup = await newGroup(crew[0]!, crew.slice(1));
  const root = (await send(crew[0]!, threadGroup, { body: 'The long thread' })).id;
  const seq = Array.from({ length: p.longThread }, (_, i) => i);
  await eachLimited(seq, p.writers, async (i) => {
    await send(crew[i % crew.length]!, threadGroup, { body: `Reply ${i}`, thread_id: root });
    await send(crew[i % crew.length]!, historyGroup, { body: `Message ${i}` });
    if (i % 1000 === 999) line(`${i + 1} replies and messages`);
  });
  const middleOf = async (path: string): Promise<number> => {
    // The id in the middle of the list: walk the newest page's ids and take the one halfway by count.
    const newest = (await ok(path, http.get(`${path}?limit=1`, crew[0]!.token), 200)).data[0].id as number;
    const oldest = (await ok(path, http.get(`${path}?after=1&limit=1`, crew[0]!.token), 200)).data[0].id as number;
    return Math.round((newest + oldest) / 2);
  };
  const threadPath = `/messages/${root}/thread`;
  const historyPath = `/conversations/${historyGroup}/messages`;
  const threadMiddle = await middleOf(threadPath);
  const historyMiddle = await middleOf(historyPath);

  // 3. An inbox of many direct conversations.
  const owner = await person();
  const partners = await people(p.inboxConversations);
  const directs: number[] = new Array(p.inboxConversations);
  await eachLimited(partners, p.writers, async (partner, i) => {
    directs[i] = (await ok('POST /conversations', http.post('/conversations', owner.token, { user_id: partner.id }), 200, 201)).data.id;
  });
  // One message each, oldest conversation first: the last ones are the most recently active.
  for (let i = 0; i < directs.length; i += p.writers) {
    await Promise.all(directs.slice(i, i + p.writers).map((id, k) => send(partners[i + k]!, id, { body: 'Hello' })));
  }
  const setupSeconds = (performance.now() - started) / 1000;
  line(`${threadCount} threads, a thread of ${p.longThread}, ${p.inboxConversations} conversations in ${Math.round(setupSeconds)} s`, true);
  return { me, reader: crew[1]!, threadPath, threadMiddle, historyPath, historyMiddle, owner, directs, threadCount, setupSeconds };
}

/** The owner's own state, for the inbox's second measurement: the most recently active archived, older ones pinned. */
async function archiveAndPin(http: JsonClient, p: Params, owner: Person, directs: readonly number[]): Promise<void> {
  const archived = directs.slice(-p.archived);
  const pinned = directs.slice(0, p.pinned);
  await eachLimited(archived, p.writers, async (id) => void (await ok('PUT archive', http.request('PUT', `/conversations/${id}/archive`, owner.token), 200)));
  for (const id of pinned) await ok('PUT pin', http.request('PUT', `/conversations/${id}/pin`, owner.token), 200);
  const page = (await ok('GET /conversations', http.get('/conversations?limit=30', owner.token), 200)).data as { id: number; pinned_at: string | null; archived_at: string | null }[];
  if (page.slice(0, p.pinned).some((c) => c.pinned_at === null) || page.some((c) => c.archived_at !== null)) {
    throw new Error('the inbox does not show the pinned conversations first, or shows archived ones');
  }
}

// ── measure ──

type Loops = Record<'threads' | 'threadsBaseline' | 'thread' | 'history' | 'inboxBaseline' | 'inbox', Loop>;

/** Each loop in turn; the inbox's own state (archived, pinned) is written between its baseline and its measurement. */
async function measure(t: Target, p: Params, http: JsonClient, { me, reader: crewMember, threadPath, threadMiddle, historyPath, historyMiddle, owner, directs }: Written): Promise<Loops> {
  const reader = jsonClient(t.node!.api, p.inFlight);
  const get = (who: Person, path: () => string) => async (h: Histogram) => {
    const at = nowMs();
    const r = await reader.get(path(), who.token);
    if (r.status !== 200) throw new Error(`GET ${path()}: ${r.status} ${r.text.slice(0, 200)}`);
    h.record(nowMs() - at);
  };
  const turns = (paths: readonly string[]) => {
    let n = 0;
    return () => paths[n++ % paths.length]!;
  };
  try {
    const loops = {
      threads: await measureLoop(t, p, 'GET /threads', get(me, () => '/threads')),
      threadsBaseline: await measureLoop(t, p, 'GET /conversations (baseline)', get(me, () => '/conversations?limit=30')),
      thread: await measureLoop(t, p, 'GET /messages/{id}/thread', get(crewMember, turns([threadPath, `${threadPath}?before=${threadMiddle}`]))),
      history: await measureLoop(t, p, 'GET /conversations/{id}/messages (baseline)', get(crewMember, turns([historyPath, `${historyPath}?before=${historyMiddle}`]))),
      inboxBaseline: await measureLoop(t, p, 'GET /conversations, no own state (baseline)', get(owner, () => '/conversations?limit=30')),
      inbox: undefined as unknown as Loop,
    };
    await archiveAndPin(http, p, owner, directs);
    loops.inbox = await measureLoop(t, p, 'GET /conversations, pinned and archived', get(owner, () => '/conversations?limit=30'));
    return loops;
  } finally {
    reader.close();
  }
}

// ── report ──

function report(p: Params, { threadCount, setupSeconds }: Written, loops: Loops, smoke: boolean): BenchmarkReport {

  const long = p.longThread.toLocaleString('en-US');
  const rows: Row[] = [
    loopRow(`GET /threads, a user in ${threadCount} threads`, true, loops.threads),
    loopRow('GET /conversations?limit=30, the same user (baseline)', false, loops.threadsBaseline),
    loopRow(`GET /messages/{id}/thread, ${long} replies: newest page and a middle page`, true, loops.thread),
    loopRow(`GET /conversations/{id}/messages, ${long} messages: the same pages (baseline)`, false, loops.history),
    loopRow(`GET /conversations?limit=30, ${p.inboxConversations.toLocaleString('en-US')} conversations: ${p.pinned} pinned, ${p.archived.toLocaleString('en-US')} archived`, true, loops.inbox),
    loopRow(`GET /conversations?limit=30, the same ${p.inboxConversations.toLocaleString('en-US')} conversations before (baseline)`, false, loops.inboxBaseline),
  ];
  const notes: string[] = [`The data was written through the API in ${Math.round(setupSeconds)} s.`];
  for (const r of rows) {
    if (r.figures.otherCpu! > 0.15) notes.push(`${r.setup}: other processes on the machine used ${r.figures.otherCpu!.toFixed(2)} cores during the measurement; its latencies include waiting for the CPU.`);
  }
  const p95 = (l: Loop) => l.h.percentile(95);
  return {
    benchmark: 'threads',
    title: `Threads, pins and own state: GET /threads (${threadCount} threads), a thread of ${long} replies, an inbox with ${p.pinned} pinned and ${p.archived.toLocaleString('en-US')} archived conversations (PostgreSQL)`,
    smoke,
    parameters: {
      threads: `${p.groups} groups of ${p.groupSize}; in each, ${p.threadsIn} threads the measured user takes part in (the root of one, a reply in the others) and ${p.threadsOut} they do not, ${p.repliesPerThread} replies by others each; written through the API`,
      'long thread': `${long} replies by the members of one group, through the API; baseline: another group with ${long} messages in its history`,
      inbox: `a user in ${p.inboxConversations.toLocaleString('en-US')} direct conversations, one message each; measured first with no own state, then with the ${p.archived.toLocaleString('en-US')} most recently active archived and ${p.pinned} older ones pinned`,
      load: `${p.inFlight} requests in flight (closed loop) for ${p.seconds} s after ${p.warmupSeconds} s of warm-up, each setup in turn; default limits (30 threads, 50 replies, 30 conversations)`,
      'CPU per request': 'cores used during the measurement × its seconds / requests; Parley: the node process; PostgreSQL: the backends serving Parley',
    },
    columns: [
      { key: 'requests', label: 'requests' },
      { key: 'perSecond', label: 'requests/s' },
      { key: 'p50', label: 'p50 ms' },
      { key: 'p95', label: 'p95 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'max', label: 'max ms' },
      { key: 'parleyCpuMs', label: 'Parley CPU ms/request' },
      { key: 'databaseCpuMs', label: 'PostgreSQL CPU ms/request' },
      { key: 'otherCpu', label: 'other CPU' },
    ],
    rows,
    comparisons: [
      { label: 'GET /threads p95 / the same user’s inbox page p95', value: p95(loops.threads) / p95(loops.threadsBaseline) },
      { label: 'thread page p95 / history page p95 (same size)', value: p95(loops.thread) / p95(loops.history) },
      { label: 'inbox p95 with pins and archive / without', value: p95(loops.inbox) / p95(loops.inboxBaseline) },
    ],
    targets: [
      goal(`GET /threads p95, a user in ${threadCount} threads`, '≤ 20 ms', p95(loops.threads), 20, 'at most', ' ms'),
      goal(`GET /messages/{id}/thread p95, ${long} replies`, '≤ 10 ms', p95(loops.thread), 10, 'at most', ' ms'),
      goal(`inbox p95 with ${p.pinned} pinned and ${p.archived.toLocaleString('en-US')} archived`, '≤ 20 ms', p95(loops.inbox), 20, 'at most', ' ms'),
    ],
    notes,
    charts: {
      bars: [],
      latency: [
        {
          file: 'threads-latency.svg',
          title: 'Threads, a long thread and an inbox with pins and archive: latency, 2 in flight',
          series: rows.filter((r) => r.parley).map((r) => ({ label: r.setup, curve: r.latency!.curve })),
          target: { value: 20, label: 'target p95 ≤ 20 ms (≤ 10 ms for the thread)' },
        },
      ],
    },
  };
}

