// sync: GET /sync (the change feed) on PostgreSQL, through the real HTTP API, in two parts.
//
// 1. Catching up: users each in about 1,000 conversations, 1,000,000 messages in the database (the search data,
//    bench/lib/search-data.ts, loaded with SQL; the feed holds the last 7 days of them, as a server that has run
//    a while keeps). Each user loads the inbox and keeps its sync_cursor; other users then make changes the user
//    can see (sends, edits, reactions, reads spread over the user's conversations) until 200 changes lie after
//    the cursor. Closed loop: GET /sync?since=<that cursor>&limit=500 (the web client's limit), a few in flight,
//    the same cursor every time; latency and the CPU Parley and PostgreSQL use per sync. Baseline in the same run,
//    same users, same loop: the inbox's first page (GET /conversations?limit=30), which a client loads when it
//    cannot sync.
// 2. Reconnect storm: clients in groups of 10, each with a cursor, are away while members send into the groups
//    through the API at a fixed rate; then every client syncs at once (a bounded number of requests in flight),
//    paging until has_more is false. The time until every client has caught up, the changes per client, and
//    the CPU per client's sync. Each client must receive each MessageSent of its group exactly once, or the
//    benchmark fails.
import pg from 'pg';
import { nowMs } from '../lib/clock.js';
import { jsonClient, type JsonClient } from '../lib/http.js';
import { closedLoop, openLoop } from '../lib/publisher.js';
import { cpuAccount, log, progress, type CpuShares } from '../lib/procs.js';
import { eachLimited, loopRow, measureLoop, type Loop } from '../lib/loops.js';
import { target as goal, type Row } from '../lib/report.js';
import { loadSearchData, type SearchData } from '../lib/search-data.js';
import { addGroups, backfillFeed, type StormGroup } from '../lib/sync-data.js';
import { Histogram, summarize } from '../lib/stats.js';
import { parleyTarget, type Target } from '../lib/targets.js';
import type { BenchOptions, BenchmarkReport } from '../lib/benchmark.js';

interface Params {
  readonly data: SearchData;
  /** The users measured in part 1 (with this data, users 1 and 2 are each in ~1,000 conversations, none shared). */
  readonly users: readonly number[];
  /** Changes made after each user's cursor. */
  readonly changes: number;
  /** The limit of every GET /sync (the web client's). */
  readonly limit: number;
  readonly inboxLimit: number;
  readonly inFlight: number;
  readonly seconds: number;
  readonly warmupSeconds: number;
  /** Days of messages the change feed holds before the cursors (CHAT_SYNC_RETENTION_S's default: 7 days). */
  readonly feedDays: number;
  readonly storm: { readonly groups: number; readonly size: number; readonly seconds: number; readonly sendsPerSecond: number; readonly inFlight: number };
}

interface SyncBody {
  data: { changes: { type: string; conversation_id: number | null; data: unknown }[]; cursor: string; has_more: boolean };
}

interface Person {
  readonly id: number;
  readonly token: string;
}

/** A measured user: their token, the inbox's cursor, and how many changes lie after it. */
interface Syncer extends Person {
  readonly cursor: string;
  readonly changes: number;
  readonly conversations: number;
}

/** A user's token, issued once, carrying the user's own name: no request then changes a profile. */
type Tokens = (id: number, name: string) => Promise<string>;

/** fn with a JSON client of `connections` keep-alive connections, closed afterwards. */
async function withClient<T>(t: Target, connections: number, fn: (http: JsonClient) => Promise<T>): Promise<T> {
  const http = jsonClient(t.node!.api, connections);
  try {
    return await fn(http);
  } finally {
    http.close();
  }
}

function tokensOf(t: Target): Tokens {
  const cache = new Map<number, Promise<string>>();
  return (id, name) => {
    let token = cache.get(id);
    if (token === undefined) cache.set(id, (token = t.node!.token(id, name)));
    return token;
  };
}

async function expectOk(what: string, r: Promise<{ status: number; text: string }>, ...statuses: number[]): Promise<string> {
  const { status, text } = await r;
  if (!statuses.includes(status)) throw new Error(`${what}: ${status} ${text.slice(0, 300)}`);
  return text;
}

export async function sync(options: BenchOptions): Promise<BenchmarkReport> {
  const p = params(options.smoke);
  log('- Parley (PostgreSQL)');
  const t = await parleyTarget();
  try {
    const loaded = await load(t, p);
    const tokens = tokensOf(t);
    // One client (keep-alive connections) for each part's setup and measurement, as one user's app would be.
    const catchUp = await withClient(t, Math.max(p.inFlight, 4), async (http) => measureCatchUp(t, p, http, await makeChanges(t, p, http, tokens)));
    const storm = await withClient(t, p.storm.inFlight, async (http) => measureStorm(t, p, http, await stormAway(t, p, http, loaded.groups, tokens)));
    return report(p, loaded, catchUp, storm, options.smoke);
  } finally {
    await t.stop();
  }
}

function params(smoke: boolean): Params {
  return {
    // 10,500 conversations put users 1 and 2 in 997 each (367 direct, 630 groups; see loadSearchData).
    data: smoke
      ? { users: 300, conversations: 200, messages: 5_000, heavyUsers: 5, deletedShare: 0.01 }
      : { users: 50_000, conversations: 10_500, messages: 1_000_000, heavyUsers: 20, deletedShare: 0.01 },
    users: [1, 2],
    changes: smoke ? 20 : 200,
    limit: 500,
    inboxLimit: 30,
    inFlight: 2,
    seconds: smoke ? 1 : 20,
    warmupSeconds: smoke ? 0.5 : 3,
    feedDays: 7,
    storm: smoke
      ? { groups: 5, size: 10, seconds: 2, sendsPerSecond: 25, inFlight: 50 }
      : { groups: 100, size: 10, seconds: 30, sendsPerSecond: 300, inFlight: 50 },
  };
}

// ── setup ──

interface Loaded {
  readonly loadSeconds: number;
  /** Rows of the change feed written for the last days. */
  readonly feedRows: number;
  readonly groups: readonly StormGroup[];
}

/** The search benchmark's data, the change feed's last days and the storm's groups, loaded with SQL. */
async function load(t: Target, p: Params): Promise<Loaded> {
  const database = t.database!;
  const line = progress('loading');
  const started = performance.now();
  await loadSearchData(database.url, p.data, (step) => line(`${step} (${Math.round((performance.now() - started) / 1000)} s)`));
  line('the change feed’s last days');
  const feedRows = await backfillFeed(database.url, p.feedDays);
  line('the storm’s groups');
  const groups = await addGroups(database.url, p.storm.groups, p.storm.size);
  const loadSeconds = (performance.now() - started) / 1000;
  line(`${p.data.messages.toLocaleString('en-US')} messages in ${p.data.conversations.toLocaleString('en-US')} conversations, ${feedRows.toLocaleString('en-US')} feed rows, ${groups.length} storm groups, in ${Math.round(loadSeconds)} s`, true);

  return { loadSeconds, feedRows, groups };
}

interface ConversationOf {
  readonly id: number;
  /** The other members, with their names (for their tokens). */
  readonly others: { id: number; name: string }[];
  /** The latest message another member sent (to edit and react to), if any. */
  readonly message: { id: number; sender_id: number } | null;
}

/** The users of part 1, each with the cursor of their inbox and the changes other members then made after it. */
interface Changed {
  readonly users: Syncer[];
  /** Conversations each user's changes were spread over. */
  readonly spread: number;
  /** Conversations of more than one measured user. */
  readonly shared: number;
}

/** Part 1's setup: each user loads the inbox and keeps its cursor; other members make changes the user can see. */
async function makeChanges(t: Target, p: Params, http: JsonClient, tokens: Tokens): Promise<Changed> {
  const db = new pg.Client({ connectionString: t.database!.url });
  await db.connect();
  const users: Syncer[] = [];
  let spread = 0;
  // Conversations of more than one measured user (none with this data): their changes count for each.
  const memberOf = new Set<number>();
  let shared = 0;
  try {
    const line = progress('changes');
    for (const id of p.users) {
      const { rows: named } = await db.query<{ name: string }>('select name from users where id = $1', [id]);
      const me: Person = { id, token: await tokens(id, named[0]!.name) };
      const { rows } = await db.query<ConversationOf>(
        `select p.conversation_id::int as id,
           (select json_agg(json_build_object('id', o.user_id, 'name', u.name) order by o.user_id)
              from participants o join users u on u.id = o.user_id where o.conversation_id = p.conversation_id and o.user_id <> $1) as others,
           (select json_build_object('id', m.id, 'sender_id', m.sender_id) from messages m
              where m.conversation_id = p.conversation_id and m.sender_id <> $1 and m.deleted_at is null order by m.id desc limit 1) as message
         from participants p where p.user_id = $1 order by p.conversation_id`,
        [id],
      );
      for (const c of rows) {
        if (memberOf.has(c.id)) shared++;
        memberOf.add(c.id);
      }
      // The inbox first, as a client does; its sync_cursor is where the user syncs from.
      const inbox = JSON.parse(await expectOk('GET /conversations', http.get(`/conversations?limit=${p.inboxLimit}`, me.token), 200)) as { meta: { sync_cursor: string } };
      const cursor = inbox.meta.sync_cursor;
      const count = async () => (JSON.parse(await expectOk('GET /sync', http.get(`/sync?since=${encodeURIComponent(cursor)}&limit=${p.limit}`, me.token), 200)) as SyncBody).data.changes.length;
      // One action per conversation, spread evenly over the user's conversations (direct and groups alike).
      const chosen = Array.from({ length: Math.min(rows.length, p.changes) }, (_, i) => rows[Math.floor((i * rows.length) / Math.min(rows.length, p.changes))]!);
      spread = Math.max(spread, chosen.length);
      let seen = 0;
      for (let i = 0; seen < p.changes; i++) {
        if (i >= 4 * p.changes + 8) throw new Error(`user ${id}: ${i} actions made only ${seen} changes`);
        await act(http, tokens, chosen[i % chosen.length]!, i);
        seen = await count();
        if ((i + 1) % 25 === 0) line(`user ${id}: ${i + 1} actions, ${seen} changes since the cursor`);
      }
      users.push({ ...me, cursor, changes: seen, conversations: rows.length });
    }
    // Another user's actions may have touched a conversation of an earlier one: count again at the end.
    for (let k = 0; k < users.length; k++) {
      const u = users[k]!;
      const body = JSON.parse(await expectOk('GET /sync', http.get(`/sync?since=${encodeURIComponent(u.cursor)}&limit=${p.limit}`, u.token), 200)) as SyncBody;
      users[k] = { ...u, changes: body.data.changes.length };
    }
    line(`${users.map((u) => `user ${u.id}: ${u.changes} changes in ${u.conversations} conversations`).join('; ')}`, true);
  } finally {
    await db.end();
  }
  return { users, spread, shared };
}

const EMOJI = ['👍', '❤️', '😂', '🎉', '👀', '🙏', '🔥', '✅'];

/** Action i in conversation c, by another member: a send, an edit, a reaction or a read, in turn. */
async function act(http: JsonClient, tokens: Tokens, c: ConversationOf, i: number): Promise<void> {
  const other = c.others[i % c.others.length]!;
  const as = (who: { id: number; name: string }) => tokens(who.id, who.name);
  const author = c.message && c.others.find((o) => o.id === c.message!.sender_id);
  const kind = ['send', 'edit', 'react', 'read'][i % 4]!;
  if (kind === 'edit' && c.message && author) {
    await expectOk('PATCH /messages', http.request('PATCH', `/messages/${c.message.id}`, await as(author), { body: `edited for the sync benchmark (${i})` }), 200);
  } else if (kind === 'react' && c.message) {
    await expectOk('PUT /reactions', http.request('PUT', `/messages/${c.message.id}/reactions/${encodeURIComponent(EMOJI[i % EMOJI.length]!)}`, await as(other)), 200);
  } else if (kind === 'read') {
    await expectOk('POST /read', http.post(`/conversations/${c.id}/read`, await as(other), {}), 200);
  } else {
    await expectOk('POST /messages', http.post(`/conversations/${c.id}/messages`, await as(other), { body: `while you were away (${i})` }), 201);
  }
}

/** The storm's clients, each with its cursor, and the messages sent to each group while they were away. */
interface Away {
  readonly clients: { id: number; group: number; token: string; cursor: string }[];
  readonly sent: Map<number, number[]>;
  readonly traffic: { sent: number; ms: number };
}

/** Part 2's setup: a cursor for every client, then traffic into the groups while they are away. */
async function stormAway(t: Target, p: Params, http: JsonClient, groups: readonly StormGroup[], tokens: Tokens): Promise<Away> {
  const s = p.storm;
  const clients = await Promise.all(
    groups.flatMap((g) => g.members.map(async (m) => ({ id: m.id, group: g.id, token: await tokens(m.id, m.name), cursor: '' }))),
  );
  const senders = jsonClient(t.node!.api, 16);
  try {
    const line = progress('storm');
    await eachLimited(clients, s.inFlight, async (c) => {
      c.cursor = (JSON.parse(await expectOk('GET /sync', http.get('/sync', c.token), 200)) as SyncBody).data.cursor;
    });

    // The traffic while the clients are away: the groups in turn, each message from the next member.
    const sent = new Map(groups.map((g) => [g.id, [] as number[]]));
    const tokenOf = new Map(clients.map((c) => [c.id, c.token]));
    const traffic = await openLoop(
      async (seq) => {
        const g = groups[seq % groups.length]!;
        const from = g.members[Math.floor(seq / groups.length) % g.members.length]!;
        const text = await expectOk('POST /messages', senders.post(`/conversations/${g.id}/messages`, tokenOf.get(from.id)!, { body: `message ${seq}` }), 201);
        sent.get(g.id)!.push((JSON.parse(text) as { data: { id: number } }).data.id);
      },
      s.sendsPerSecond,
      s.seconds * 1000,
      (n) => line(`away: ${n} messages sent`),
    );
    if (traffic.failed > 0) throw new Error(`storm: ${traffic.failed} sends failed: ${traffic.errors.join('; ')}`);
    line(`away: ${traffic.sent} messages sent in ${(traffic.ms / 1000).toFixed(1)} s`, true);
    return { clients, sent, traffic };
  } finally {
    senders.close();
  }
}

// ── measure ──

/** Part 1: the /sync loop and the inbox loop, the same cursor every time. */
async function measureCatchUp(t: Target, p: Params, http: JsonClient, { users, spread, shared }: Changed) {
  // The same cursor every time: each request reads the same changes. A count that moves means something else wrote to the feed.
  let seq = 0;
  // The size of the last answer of each loop (the same few answers again and again).
  const bytes = { sync: 0, inbox: 0 };
  const syncOnce = async (h: Histogram) => {
    const u = users[seq++ % users.length]!;
    const started = performance.now();
    const text = await expectOk('GET /sync', http.get(`/sync?since=${encodeURIComponent(u.cursor)}&limit=${p.limit}`, u.token), 200);
    h.record(performance.now() - started);
    bytes.sync = Buffer.byteLength(text);
    const body = JSON.parse(text) as SyncBody;
    if (body.data.changes.length !== u.changes || body.data.has_more) throw new Error(`user ${u.id}: ${body.data.changes.length} changes (has_more ${body.data.has_more}), not ${u.changes}`);
  };
  const sync = await measureLoop(t, p, 'GET /sync', syncOnce);

  const inboxOnce = async (h: Histogram) => {
    const u = users[seq++ % users.length]!;
    const started = performance.now();
    const text = await expectOk('GET /conversations', http.get(`/conversations?limit=${p.inboxLimit}`, u.token), 200);
    h.record(performance.now() - started);
    bytes.inbox = Buffer.byteLength(text);
    const rows = (JSON.parse(text) as { data: unknown[] }).data.length;
    if (rows !== Math.min(p.inboxLimit, u.conversations)) throw new Error(`user ${u.id}: an inbox page of ${rows} conversations`);
  };
  const inbox = await measureLoop(t, p, 'GET /conversations (inbox)', inboxOnce);
  return { users, spread, shared, sync, inbox, bytes };
}

/** Part 2: every client back at once, paging until it has caught up; each must get its group's messages exactly once. */
async function measureStorm(t: Target, p: Params, http: JsonClient, { clients, sent, traffic }: Away) {
  const s = p.storm;
  const line = progress('storm');
  // Everyone back at once.
  const perClient = new Histogram();
  const received = new Map<number, number[]>();
  const stats = { requests: 0, changes: 0, minChanges: Infinity, maxChanges: 0, minPages: Infinity, maxPages: 0 };
  const account = cpuAccount(t.pid, [], await t.databasePids());
  const started = nowMs();
  await eachLimited(clients, s.inFlight, async (c) => {
    const first = nowMs();
    const ids: number[] = [];
    let cursor = c.cursor;
    let pages = 0;
    let changes = 0;
    for (;;) {
      const body = JSON.parse(await expectOk('GET /sync', http.get(`/sync?since=${encodeURIComponent(cursor)}&limit=${p.limit}`, c.token), 200)) as SyncBody;
      pages++;
      changes += body.data.changes.length;
      for (const change of body.data.changes) if (change.type === 'MessageSent') ids.push((change.data as { id: number }).id);
      cursor = body.data.cursor;
      if (!body.data.has_more) break;
    }
    perClient.record(nowMs() - first);
    received.set(c.id, ids);
    stats.requests += pages;
    stats.changes += changes;
    stats.minChanges = Math.min(stats.minChanges, changes);
    stats.maxChanges = Math.max(stats.maxChanges, changes);
    stats.minPages = Math.min(stats.minPages, pages);
    stats.maxPages = Math.max(stats.maxPages, pages);
  });
  const allMs = nowMs() - started;
  // Parley's pool opens connections as the storm comes in: those count too.
  const cpu = account.done(await t.databasePids());
  line(`${clients.length} clients synced in ${Math.round(allMs)} ms, ${stats.requests} requests, ${Math.round(stats.changes / clients.length)} changes per client`, true);

  // Every MessageSent of the group exactly once, none missing, none twice, none of another group.
  const wrong: string[] = [];
  for (const c of clients) {
    const want = [...sent.get(c.group)!].sort((a, b) => a - b);
    const got = [...received.get(c.id)!].sort((a, b) => a - b);
    if (want.length !== got.length || want.some((id, i) => id !== got[i])) {
      const missing = want.filter((id) => !got.includes(id)).length;
      wrong.push(`user ${c.id}: ${got.length} MessageSent for ${want.length} sent to group ${c.group} (${missing} missing, ${got.length - new Set(got).size} repeated)`);
    }
  }
  if (wrong.length > 0) throw new Error(`storm: ${wrong.length} clients did not get their group's messages exactly once: ${wrong.slice(0, 5).join('; ')}`);
  return { ...stats, perClient, allMs, cpu, sent: traffic.sent, trafficMs: traffic.ms };
}

// ── report ──

function report(p: Params, { loadSeconds, feedRows }: Loaded, catchUp: Awaited<ReturnType<typeof measureCatchUp>>, storm: Awaited<ReturnType<typeof measureStorm>>, smoke: boolean): BenchmarkReport {
  const notes: string[] = [];
  const { sync: syncLoop, inbox: inboxLoop } = catchUp;
  // CPU per request: cores used × the loop's milliseconds / its requests.
  const changesPerSync = catchUp.users.reduce((s, u) => s + u.changes, 0) / catchUp.users.length;
  const range = (values: number[]) => (Math.min(...values) === Math.max(...values) ? `${values[0]}` : `${Math.min(...values)}–${Math.max(...values)}`);
  const changeCounts = range(catchUp.users.map((u) => u.changes));
  const conversationCounts = range(catchUp.users.map((u) => u.conversations));
  const clients = p.storm.groups * p.storm.size;
  const rows: Row[] = [
    loopRow(`GET /sync, ${changeCounts} changes since the cursor (limit ${p.limit}), ${p.inFlight} in flight`, true, syncLoop, { changes: changesPerSync }),
    loopRow(`GET /conversations?limit=${p.inboxLimit} (the inbox’s first page), baseline`, false, inboxLoop, { changes: NaN }),
    {
      setup: `reconnect storm: ${clients.toLocaleString('en-US')} clients catch up, ${p.storm.inFlight} in flight`,
      parley: true,
      figures: {
        requests: storm.requests,
        perSecond: storm.requests / (storm.allMs / 1000),
        p50: storm.perClient.percentile(50),
        p95: storm.perClient.percentile(95),
        p99: storm.perClient.percentile(99),
        max: storm.perClient.max,
        changes: storm.changes / clients,
        parleyCpuMs: (storm.cpu.server * storm.allMs) / clients,
        databaseCpuMs: (storm.cpu.database * storm.allMs) / clients,
        allSyncedMs: storm.allMs,
        otherCpu: storm.cpu.other,
      },
      latency: summarize(storm.perClient),
    },
  ];
  for (const [label, cpu] of [['/sync loop', syncLoop.cpu], ['inbox loop', inboxLoop.cpu], ['storm', storm.cpu]] as const) {
    if (cpu.other > 0.15) notes.push(`${label}: other processes on the machine used ${cpu.other.toFixed(2)} cores during the measurement; its latencies include waiting for the CPU.`);
  }
  notes.push(`A /sync answer is ${Math.round(catchUp.bytes.sync / 1024)} KB of JSON (each change with its payload, InboxUpdated as the conversation’s entry), an inbox page ${Math.round(catchUp.bytes.inbox / 1024)} KB.`);
  notes.push(
    `Storm: ${storm.sent.toLocaleString('en-US')} messages sent in ${(storm.trafficMs / 1000).toFixed(1)} s (${Math.round(storm.sent / (storm.trafficMs / 1000))}/s) while the clients were away; ` +
      `each client got ${range([storm.minChanges, storm.maxChanges])} changes in ${range([storm.minPages, storm.maxPages])} page(s), and every MessageSent of its group exactly once (checked).`,
  );
  const syncP95 = syncLoop.h.percentile(95);
  const inboxP95 = inboxLoop.h.percentile(95);

  return {
    benchmark: 'sync',
    title: `Sync: GET /sync for a user in ${conversationCounts} conversations over ${p.data.messages.toLocaleString('en-US')} messages, and a reconnect storm of ${clients.toLocaleString('en-US')} clients (PostgreSQL)`,
    smoke,
    parameters: {
      data: `${p.data.messages.toLocaleString('en-US')} messages in ${p.data.conversations.toLocaleString('en-US')} conversations, ${p.data.users.toLocaleString('en-US')} users (the search benchmark’s data); the feed holds a MessageSent and an InboxUpdated for each message of the last ${p.feedDays} days (${feedRows.toLocaleString('en-US')} rows); loaded with SQL in ${Math.round(loadSeconds)} s`,
      'syncing users': `users ${p.users.join(' and ')}, in ${conversationCounts} conversations each, ${catchUp.shared === 0 ? 'none shared' : `${catchUp.shared} shared`}`,
      'changes after the cursor': `${p.changes} per user (${catchUp.users.map((u) => u.changes).join(', ')} returned), through the API by other members: sends, edits, reactions and reads in turn, one per conversation over ${catchUp.spread} of the user’s conversations; the cursor is the inbox’s sync_cursor, taken before`,
      load: `${p.inFlight} requests in flight (closed loop), the users in turn, for ${p.seconds} s after ${p.warmupSeconds} s of warm-up; the same cursor every time; then the same for the inbox`,
      storm: `${p.storm.groups} groups of ${p.storm.size} new users, each user a client with a cursor (GET /sync); ${p.storm.sendsPerSecond} sends/s (open loop) for ${p.storm.seconds} s by random members; then all ${clients.toLocaleString('en-US')} clients sync at once, at most ${p.storm.inFlight} requests in flight, each paging (limit ${p.limit}) until has_more is false`,
      'storm latency': 'per client, from its first request to its last page; "all synced": from the first client’s first request to the last client’s last page',
      'CPU per sync': 'cores used during the measurement × its seconds / syncs (a sync: one request in the loops, one client’s whole catch-up in the storm); Parley: the node process; PostgreSQL: the backends serving Parley',
    },
    columns: [
      { key: 'requests', label: 'requests' },
      { key: 'perSecond', label: 'requests/s' },
      { key: 'p50', label: 'p50 ms' },
      { key: 'p95', label: 'p95 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'max', label: 'max ms' },
      { key: 'changes', label: 'changes per sync' },
      { key: 'allSyncedMs', label: 'all synced ms' },
      { key: 'parleyCpuMs', label: 'Parley CPU ms/sync' },
      { key: 'databaseCpuMs', label: 'PostgreSQL CPU ms/sync' },
      { key: 'otherCpu', label: 'other CPU' },
    ],
    rows,
    comparisons: [
      { label: '/sync p95 / inbox first page p95 (same users, same run)', value: syncP95 / inboxP95 },
      { label: '/sync p50 / inbox first page p50', value: syncLoop.h.percentile(50) / inboxLoop.h.percentile(50) },
    ],
    targets: [goal(`/sync p95, a user in ${conversationCounts} conversations, ${p.data.messages.toLocaleString('en-US')} messages, ${p.changes} changes since the cursor`, '≤ 20 ms', syncP95, 20, 'at most', ' ms')],
    notes,
    charts: {
      bars: [],
      latency: [
        {
          file: 'sync-latency.svg',
          title: `Sync: GET /sync (${changeCounts} changes) and the inbox’s first page, ${p.inFlight} in flight`,
          series: [
            { label: 'GET /sync', curve: summarize(syncLoop.h).curve },
            { label: `GET /conversations?limit=${p.inboxLimit}`, curve: summarize(inboxLoop.h).curve },
          ],
          target: { value: 20, label: 'target p95 ≤ 20 ms' },
        },
      ],
    },
  };
}

