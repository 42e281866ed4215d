// ingest: sustained POST /conversations/{id}/messages across many 1:1 conversations, with both members of
// every conversation connected (their own channel and the conversation's), so each message is also
// delivered: MessageSent to two sockets, InboxUpdated to two users. Closed loop: a fixed number of sends in
// flight, each from one of the pair, round robin over the conversations. Once on PostgreSQL, once on the
// embedded default (no DATABASE_URL: PGlite in the node's own temporary CHAT_DATA_DIR). On PostgreSQL, webhooks off
// and on: two nodes, measured in rounds that take turns, each setup's best round reported; in the same rounds, the
// same load sent as replies in threads (one thread per conversation, its root sent first): ThreadReplySent and
// ThreadUpdated to both sockets on the conversation, no InboxUpdated.
// Baseline in the same run, on the same PostgreSQL database and table: a raw single-row INSERT loop with
// `pg`, as many in flight as the sends (and once on a single connection, one after the other).
// CPU per message: the cores a process used during the measurement × its seconds / the messages sent.
import pg from 'pg';
import { sleep } from '../../testkit/wait.js';
import { ClientPool } from '../lib/clients.js';
import { nowMs } from '../lib/clock.js';
import { jsonClient } from '../lib/http.js';
import { closedLoop } from '../lib/publisher.js';
import { cpuAccount, log, progress } from '../lib/procs.js';
import { target as goal, type Row } from '../lib/report.js';
import { Histogram, summarize } from '../lib/stats.js';
import { parleyTarget, type Target } from '../lib/targets.js';
import { startWebhookReceiver } from '../lib/webhooks.js';
import { marker } from '../load/protocol.js';
import type { BenchOptions, BenchmarkReport } from '../lib/benchmark.js';

export interface Params {
  pairs: number;
  inFlight: number;
  seconds: number;
  warmupSeconds: number;
  insertSeconds: number;
  workers: number;
  /** Rounds of webhooks off then on, taking turns; each setup's best is reported. */
  rounds: number;
}

/** One send load measured: its row and its latencies. */
export interface Measured {
  readonly row: Row;
  /** Messages sent during the measurement (warm-up included, for counting webhooks). */
  readonly sent: number;
  readonly http: Histogram;
  readonly delivery: Histogram;
}

export async function ingest(options: BenchOptions): Promise<BenchmarkReport> {
  const p = params(options.smoke);
  const onPostgres = await measureOnPostgres(p);
  const pglite = await measureOnPglite(p);
  return report(p, { ...onPostgres, pglite }, options.smoke);
}

function params(smoke: boolean): Params {
  return {
    pairs: smoke ? 4 : 200,
    inFlight: smoke ? 4 : 32,
    seconds: smoke ? 1 : 10,
    warmupSeconds: smoke ? 0.5 : 2,
    insertSeconds: smoke ? 0.5 : 8,
    workers: 2,
    rounds: smoke ? 1 : 3,
  };
}

// ── setup ──

export interface Conversation {
  readonly id: number;
  readonly members: readonly [{ id: number; token: string }, { id: number; token: string }];
}

export async function setUp(t: Target, p: Params): Promise<Conversation[]> {
  const parley = t.node!;
  const line = progress(`${t.name}: setup`);
  const conversations: Conversation[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < p.pairs) {
        const pair = next++;
        const a = pair * 2 + 1;
        const b = a + 1;
        for (const id of [a, b]) {
          const r = await parley.server('PUT', `/users/${id}`, { name: `User ${id}` });
          if (r.status !== 201 && r.status !== 200) throw new Error(`PUT /users/${id}: ${r.status}`);
        }
        const ta = await parley.token(a);
        const tb = await parley.token(b);
        const r = await parley.request(a, 'POST', '/conversations', { user_id: b });
        if (r.status !== 201 && r.status !== 200) throw new Error(`POST /conversations: ${r.status} ${JSON.stringify(r.body)}`);
        conversations.push({ id: (r.body as { data: { id: number } }).data.id, members: [{ id: a, token: ta }, { id: b, token: tb }] });
      }
    }),
  );
  conversations.sort((x, y) => x.id - y.id);
  line(`${p.pairs * 2} users, ${p.pairs} conversations`, true);
  return conversations;
}

/** The root of one thread in each conversation, sent by its first member: conversation id → root id. */
async function threadRoots(t: Target, conversations: Conversation[]): Promise<Map<number, number>> {
  const client = jsonClient(t.node!.api, 8);
  const roots = new Map<number, number>();
  try {
    for (const c of conversations) {
      const r = await client.post(`/conversations/${c.id}/messages`, c.members[0].token, { body: 'A thread' });
      if (r.status !== 201) throw new Error(`POST messages: ${r.status} ${r.text.slice(0, 200)}`);
      roots.set(c.id, (JSON.parse(r.text) as { data: { id: number } }).data.id);
    }
  } finally {
    client.close();
  }
  return roots;
}

// ── measure ──

/** The setups measured: each send load with its row and latencies, and the raw INSERT baselines' rows. */
interface Figures {
  readonly postgres: Measured;
  readonly replies: Measured;
  readonly withHooks: Measured;
  readonly pglite: Measured;
  readonly inserts: Row[];
}

/** On PostgreSQL: plain sends, replies in threads and webhooks on in rounds, then the raw INSERT loops. */
async function measureOnPostgres(p: Params): Promise<Omit<Figures, 'pglite'>> {
  // Webhooks off and on (docs/notifications.md: CHAT_WEBHOOK_URLS pointing at a local receiver answering 200, so
  // every send also writes its outbox row and is delivered as a webhook; the receiver is a process of its own, as a
  // host app's would be, so that its work does not hold up this process's send loop) on two nodes started together, each on a
  // fresh database, measured in rounds that take turns: a burst of load from outside the benchmark then hurts one
  // round, not one setup, and each setup's best round is reported (the on/off ratio compares best with best).
  log('- Parley (PostgreSQL), webhooks off and on in turns');
  const receiver = await startWebhookReceiver();
  const postgresTarget = await parleyTarget();
  let hooksTarget: Target | undefined;
  let postgres: Measured | undefined;
  let withHooks: Measured | undefined;
  let replies: Measured | undefined;
  let inserts: Row[];
  try {
    hooksTarget = await parleyTarget({ env: { CHAT_WEBHOOK_URLS: receiver.url, CHAT_WEBHOOK_SECRET: 'b'.repeat(64) } });
    const conversations = await setUp(postgresTarget, p);
    const hooksConversations = await setUp(hooksTarget, p);
    const roots = await threadRoots(postgresTarget, conversations);
    let sentWithHooks = 0;
    for (let round = 1; round <= p.rounds; round++) {
      const suffix = p.rounds > 1 ? `, round ${round} of ${p.rounds}` : '';
      log(`- Parley (PostgreSQL)${suffix}`);
      const off = await sendLoad(postgresTarget, p, conversations, 'Parley, PostgreSQL: POST /messages');
      if (!postgres || off.row.figures.perSecond! > postgres.row.figures.perSecond!) postgres = off;
      log(`- Parley (PostgreSQL), replies in threads${suffix}`);
      const inThreads = await sendLoad(postgresTarget, p, conversations, 'Parley, PostgreSQL: POST /messages with thread_id', undefined, roots);
      if (!replies || inThreads.row.figures.perSecond! > replies.row.figures.perSecond!) replies = inThreads;
      log(`- Parley (PostgreSQL) with webhooks on${suffix}`);
      const on = await sendLoad(hooksTarget, p, hooksConversations, 'Parley, PostgreSQL, webhooks on: POST /messages', receiver.pid);
      sentWithHooks += on.sent;
      if (!withHooks || on.row.figures.perSecond! > withHooks.row.figures.perSecond!) withHooks = on;
    }
    // Webhooks delivered (every round's) by the end of the last measurement plus a few seconds.
    for (let waited = 0; waited < 10_000 && (await receiver.received()) < sentWithHooks; waited += 200) await sleep(200);
    withHooks!.row.figures.webhooksDelivered = (await receiver.received()) / sentWithHooks;
    await hooksTarget.stop();
    hooksTarget = undefined;
    await postgresTarget.node!.stop(); // the INSERT loops have PostgreSQL and the CPU to themselves (the database is kept until they are done)
    inserts = await insertLoops(postgresTarget, p, conversations);
  } finally {
    await hooksTarget?.stop();
    await postgresTarget.stop();
    await receiver.close();
  }
  if (!postgres || !withHooks || !replies) throw new Error('no round was measured');
  return { postgres, replies, withHooks, inserts };
}

/** The same load on the embedded default. */
async function measureOnPglite(p: Params): Promise<Measured> {
  log('- Parley (embedded default: PGlite)');
  const pgliteTarget = await parleyTarget({ database: 'pglite' });
  try {
    return await sendLoad(pgliteTarget, p, await setUp(pgliteTarget, p), 'Parley, embedded PGlite: POST /messages');
  } finally {
    await pgliteTarget.stop();
  }
}

// One send load (the compliance benchmark measures with it too), and the raw INSERTs.

/**
 * receiverPid: the webhook receiver's process, whose CPU is counted with the clients'. roots: send every message as a
 * reply in its conversation's thread.
 */
export async function sendLoad(t: Target, p: Params, conversations: Conversation[], setup: string, receiverPid?: number, roots?: Map<number, number>): Promise<Measured> {
  const parley = t.node!;
  const { pool, failed, errors } = await ClientPool.connect({
    label: `${t.name}: members`,
    url: t.wsUrl,
    clients: conversations.flatMap((c) => c.members.map((m) => ({ channels: [`private-chat.user.${m.id}`, `private-chat.conversation.${c.id}`], token: m.token }))),
    auth: { kind: 'endpoint', url: `${parley.api}/broadcasting/auth` },
    workers: p.workers,
    concurrency: 20,
  });
  const client = jsonClient(parley.api, p.inFlight);
  try {
    if (failed > 0) throw new Error(`${failed} members could not connect: ${errors.join('; ')}`);
    let http = new Histogram();
    let ops = 0;
    const send = async (seq: number) => {
      const c = conversations[ops % conversations.length]!;
      const member = c.members[Math.floor(ops / conversations.length) % 2]!;
      ops++;
      const sentAt = nowMs();
      const body = { body: `Ingest ${marker(seq, sentAt)}`, ...(roots ? { thread_id: roots.get(c.id) } : {}) };
      const r = await client.post(`/conversations/${c.id}/messages`, member.token, body);
      if (r.status !== 201) throw new Error(`POST messages: ${r.status} ${r.text.slice(0, 200)}`);
      http.record(nowMs() - sentAt);
    };
    await closedLoop(send, p.inFlight, p.warmupSeconds * 1000);
    await sleep(500);
    http = new Histogram();
    pool.measure();
    const dbPids = await t.databasePids();
    const cpu = cpuAccount(t.pid, receiverPid === undefined ? pool.pids : [...pool.pids, receiverPid], dbPids);
    const line = progress(`${t.name}: sending`);
    let lastSent = 0;
    const loop = await closedLoop(send, p.inFlight, p.seconds * 1000, (sent) => {
      line(`${sent} messages, ${sent - lastSent}/s`);
      lastSent = sent;
    });
    const used = cpu.done();
    if (loop.failed > 0) throw new Error(`${loop.failed} sends failed: ${loop.errors.join('; ')}`);
    // Deliveries (the frames carrying the body): MessageSent to both sockets on the conversation, InboxUpdated to
    // both users; a reply in a thread: ThreadReplySent to both sockets (its ThreadUpdated carries no body).
    const expected = loop.sent * (roots ? 2 : 4);
    let delivered = 0;
    for (let waited = 0; waited < 10_000; waited += 200) {
      delivered = await pool.delivered();
      if (delivered >= expected) break;
      await sleep(200);
    }
    const report = await pool.report();
    const delivery = new Histogram();
    for (const h of report.events.values()) delivery.merge(h);
    const perSecond = loop.sent / (loop.ms / 1000);
    line(`${Math.round(perSecond).toLocaleString('en-US')} messages/s, POST p50 ${http.percentile(50).toFixed(1)} ms, ${delivered}/${expected} deliveries`, true);
    // CPU per message in ms: cores × seconds / messages.
    const perMessageMs = (cores: number) => (cores * loop.ms) / loop.sent;
    const row: Row = {
      setup,
      parley: true,
      figures: {
        perSecond,
        httpP50: http.percentile(50),
        httpP99: http.percentile(99),
        deliveryP50: delivery.percentile(50),
        deliveryP99: delivery.percentile(99),
        delivered: delivered / expected,
        serverCpu: used.server,
        databaseCpu: dbPids.length > 0 ? used.database : NaN,
        parleyCpuMs: perMessageMs(used.server),
        databaseCpuMs: dbPids.length > 0 ? perMessageMs(used.database) : NaN,
        clientsCpu: used.clients,
        driverCpu: used.driver,
        otherCpu: used.other,
      },
      latency: summarize(http),
    };
    return { row, http, delivery, sent: ops };
  } finally {
    client.close();
    pool.close();
  }
}

/** Raw INSERTs into the same messages table: `inFlight` at once on a pool, then one connection alone. */
async function insertLoops(t: Target, p: Params, conversations: Conversation[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const lanes of [p.inFlight, 1]) {
    const label = lanes === 1 ? 'raw INSERT, one connection' : `raw INSERT, ${lanes} in flight`;
    const pool = new pg.Pool({ connectionString: t.database!.url, max: lanes });
    pool.on('error', () => {}); // pool.end() resolves before its connections close; dropping the database may cut one
    try {
      // Open every connection first, so the loop measures INSERTs, not connecting.
      const warm = await Promise.all(Array.from({ length: lanes }, () => pool.connect()));
      warm.forEach((c) => c.release());
      const pids = (await t.databasePids()).filter((pid) => pid > 0);
      const line = progress(label);
      const cpu = cpuAccount(process.pid, [], pids);
      let n = 0;
      const insert = async () => {
        const c = conversations[n++ % conversations.length]!;
        await pool.query('insert into messages (conversation_id, sender_id, body, created_at) values ($1, $2, $3, now())', [
          c.id,
          c.members[0].id,
          `Raw insert ${n}`,
        ]);
      };
      const loop = await closedLoop(insert, lanes, p.insertSeconds * 1000);
      const used = cpu.done();
      if (loop.failed > 0) throw new Error(`${label}: ${loop.failed} failed: ${loop.errors.join('; ')}`);
      const perSecond = loop.sent / (loop.ms / 1000);
      line(`${Math.round(perSecond).toLocaleString('en-US')} rows/s`, true);
      rows.push({
        setup: label,
        parley: false,
        figures: { perSecond, serverCpu: NaN, databaseCpu: used.database, otherCpu: used.other },
      });
    } finally {
      await pool.end();
    }
  }
  return rows;
}

// ── report ──

function report(p: Params, { postgres, replies, withHooks, pglite, inserts }: Figures, smoke: boolean): BenchmarkReport {
  const notes: string[] = [];
  const rows = [postgres.row, replies.row, withHooks.row, pglite.row, ...inserts];
  const pooled = inserts.find((r) => r.setup.startsWith('raw INSERT, '))!;
  for (const r of [postgres.row, replies.row, pglite.row]) {
    if (r.figures.delivered! < 1) notes.push(`${r.setup}: ${((1 - r.figures.delivered!) * 100).toFixed(2)}% of the expected deliveries did not arrive.`);
  }
  for (const r of rows) {
    if (r.figures.otherCpu! > 0.15) notes.push(`${r.setup}: other processes on the machine used ${r.figures.otherCpu!.toFixed(2)} cores during the measurement.`);
  }
  const onPostgres = postgres.row.figures;
  return {
    benchmark: 'ingest',
    title: `Ingest: messages per second across ${p.pairs} direct conversations, events delivered (PostgreSQL, and the embedded PGlite)`,
    smoke,
    parameters: {
      conversations: `${p.pairs} direct conversations, both members connected (${p.pairs * 2} sockets, 2 channels each)`,
      load: `${p.inFlight} sends in flight (closed loop) for ${p.seconds} s after ${p.warmupSeconds} s of warm-up`,
      rounds: `PostgreSQL: ${p.rounds}, webhooks off, replies in threads (the same node and conversations, one thread each) and webhooks on taking turns (two nodes started together); each setup's best round is shown`,
      'raw INSERT baseline': `${p.insertSeconds} s each: ${p.inFlight} in flight on a pool of ${p.inFlight}, then one connection; INSERT INTO messages (same table, same database), autocommit`,
      database: 'PostgreSQL (a fresh database); then the embedded default (PGlite in a temporary CHAT_DATA_DIR, no DATABASE_URL)',
      'CPU per message': 'cores used during the measurement × its seconds / messages sent; Parley: the node process (on PGlite the database runs inside it); PostgreSQL: the backends serving Parley',
    },
    columns: [
      { key: 'perSecond', label: 'messages/s' },
      { key: 'httpP50', label: 'POST p50 ms' },
      { key: 'httpP99', label: 'POST p99 ms' },
      { key: 'deliveryP99', label: 'delivery p99 ms' },
      { key: 'delivered', label: 'delivered' },
      { key: 'webhooksDelivered', label: 'webhooks delivered' },
      { key: 'serverCpu', label: 'server CPU' },
      { key: 'databaseCpu', label: 'PostgreSQL CPU' },
      { key: 'parleyCpuMs', label: 'Parley CPU ms/message' },
      { key: 'databaseCpuMs', label: 'PostgreSQL CPU ms/message' },
      { key: 'otherCpu', label: 'other CPU' },
    ],
    rows,
    comparisons: [],
    targets: [
      goal('sustained messages/s with events delivered', '≥ 3,000/s', onPostgres.perSecond!, 3000, 'at least', '/s'),
      goal(`Parley sends / raw INSERTs (${p.inFlight} in flight), change feed written`, '≥ 0.45', onPostgres.perSecond! / pooled.figures.perSecond!, 0.45, 'at least', '×'),
      goal('webhooks on / off (PostgreSQL messages/s)', '≥ 0.85', withHooks.row.figures.perSecond! / onPostgres.perSecond!, 0.85, 'at least', '×'),
      goal('replies in threads / plain sends (PostgreSQL messages/s)', '≥ 0.9', replies.row.figures.perSecond! / onPostgres.perSecond!, 0.9, 'at least', '×'),
      goal('embedded default (PGlite) messages/s', '≥ 1,500/s', pglite.row.figures.perSecond!, 1500, 'at least', '/s'),
      goal('PostgreSQL CPU per message', '≤ 0.3 ms', onPostgres.databaseCpuMs!, 0.3, 'at most', ' ms'),
      goal('Parley CPU per message', '≤ 0.3 ms', onPostgres.parleyCpuMs!, 0.3, 'at most', ' ms'),
    ],
    notes,
    charts: {
      bars: [
        {
          file: 'ingest-throughput.svg',
          title: 'Ingest: messages (or rows) per second',
          unit: 'per second',
          bars: rows.map((r) => ({ label: r.setup, value: r.figures.perSecond!, highlight: r.parley })),
        },
      ],
      latency: [
        {
          file: 'ingest-latency.svg',
          title: `Ingest: latency at ${Math.round(onPostgres.perSecond!).toLocaleString('en-US')} (PostgreSQL) and ${Math.round(pglite.row.figures.perSecond!).toLocaleString('en-US')} (PGlite) messages/s`,
          series: [
            { label: 'PostgreSQL: POST answered', curve: summarize(postgres.http).curve },
            { label: 'PostgreSQL: event delivered', curve: summarize(postgres.delivery).curve },
            { label: 'PGlite: POST answered', curve: summarize(pglite.http).curve },
            { label: 'PGlite: event delivered', curve: summarize(pglite.delivery).curve },
          ],
        },
      ],
    },
  };
}
