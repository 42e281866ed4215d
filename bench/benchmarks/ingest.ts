// ingest: sustained POST /conversations/{id}/messages across many 1:1 conversations, on PostgreSQL, with
// both members of every conversation connected (their own channel and the conversation's), so each message
// is also delivered: MessageSent to two sockets, InboxUpdated to two users. Closed loop: a fixed number of
// sends in flight, each from one of the pair, round robin over the conversations.
// Baseline in the same run, on the same database and table: a raw single-row INSERT loop with `pg`, as many
// in flight as the sends (and once on a single connection, one after the other).
import pg from 'pg';
import { ClientPool } from '../lib/clients.js';
import { sleep } from '../../testkit/wait.js';
import { nowMs } from '../lib/clock.js';
import { jsonClient } from '../lib/http.js';
import { closedLoop } from '../lib/publisher.js';
import { cpuAccount, log, progress } from '../lib/procs.js';
import { target as goal, type Result, type Row } from '../lib/report.js';
import { Histogram, summarize } from '../lib/stats.js';
import { parleyTarget, type Target } from '../lib/targets.js';
import { marker } from '../load/protocol.js';
import type { BenchOptions } from '../run.js';

interface Params {
  pairs: number;
  inFlight: number;
  seconds: number;
  warmupSeconds: number;
  insertSeconds: number;
  workers: number;
}

export async function ingest(options: BenchOptions): Promise<Omit<Result, 'machine' | 'finishedAt' | 'seconds'>> {
  const smoke = options.smoke;
  const p: Params = {
    pairs: smoke ? 4 : 200,
    inFlight: smoke ? 4 : 32,
    seconds: smoke ? 1 : 15,
    warmupSeconds: smoke ? 0.5 : 3,
    insertSeconds: smoke ? 0.5 : 8,
    workers: 2,
  };
  log('- Parley (PostgreSQL)');
  const t = await parleyTarget();
  const rows: Row[] = [];
  const notes: string[] = [];
  let httpLatency: Histogram | undefined;
  let deliveryLatency: Histogram | undefined;
  try {
    const conversations = await setUp(t, p);
    const measured = await sendLoad(t, p, conversations);
    rows.push(measured.row);
    httpLatency = measured.http;
    deliveryLatency = measured.delivery;
    if (measured.row.figures.delivered! < 1) {
      notes.push(`Parley: ${((1 - measured.row.figures.delivered!) * 100).toFixed(2)}% of the expected deliveries did not arrive.`);
    }
    await t.node!.stop(); // the INSERT loops have PostgreSQL and the CPU to themselves (the database is kept until they are done)
    rows.push(...(await insertLoops(t, p, conversations)));
  } finally {
    await t.stop();
  }
  const parley = rows[0]!;
  const pooled = rows.find((r) => r.setup.startsWith('raw INSERT, '))!;
  for (const r of rows) {
    if (r.figures.otherCpu! > 0.15) notes.push(`${r.setup}: other processes on the machine used ${r.figures.otherCpu!.toFixed(2)} cores during the measurement.`);
  }
  return {
    benchmark: 'ingest',
    title: `Ingest: messages per second across ${p.pairs} direct conversations, events delivered (PostgreSQL)`,
    smoke,
    parameters: {
      conversations: `${p.pairs} direct conversations, both members connected (${p.pairs * 2} sockets, 2 channels each)`,
      load: `${p.inFlight} sends in flight (closed loop) for ${p.seconds} s after ${p.warmupSeconds} s of warm-up`,
      'raw INSERT baseline': `${p.insertSeconds} s each: ${p.inFlight} in flight on a pool of ${p.inFlight}, then one connection; INSERT INTO messages (same table, same database), autocommit`,
      database: 'PostgreSQL (a fresh database)',
    },
    columns: [
      { key: 'perSecond', label: 'messages/s' },
      { key: 'httpP50', label: 'POST p50 ms' },
      { key: 'httpP99', label: 'POST p99 ms' },
      { key: 'deliveryP99', label: 'delivery p99 ms' },
      { key: 'delivered', label: 'delivered' },
      { key: 'serverCpu', label: 'server CPU' },
      { key: 'databaseCpu', label: 'PostgreSQL CPU' },
      { key: 'otherCpu', label: 'other CPU' },
    ],
    rows,
    comparisons: [{ label: `Parley sends / raw INSERTs (${p.inFlight} in flight)`, value: parley.figures.perSecond! / pooled.figures.perSecond! }],
    targets: [goal('sustained messages/s with events delivered', '≥ 3,000/s', parley.figures.perSecond!, 3000, 'at least', '/s')],
    notes,
    charts: {
      bars: [
        {
          file: 'ingest-throughput.svg',
          title: 'Ingest: messages (or rows) per second on PostgreSQL',
          unit: 'per second',
          bars: rows.map((r) => ({ label: r.setup, value: r.figures.perSecond!, highlight: r.parley })),
        },
      ],
      latency: [
        {
          file: 'ingest-latency.svg',
          title: `Ingest: latency at ${Math.round(parley.figures.perSecond!).toLocaleString('en-US')} messages/s`,
          series: [
            { label: 'POST answered', curve: summarize(httpLatency!).curve },
            { label: 'event delivered', curve: summarize(deliveryLatency!).curve },
          ],
        },
      ],
    },
  };
}

interface Conversation {
  readonly id: number;
  readonly members: readonly [{ id: number; token: string }, { id: number; token: string }];
}

async function setUp(t: Target, p: Params): Promise<Conversation[]> {
  const parley = t.node!;
  const line = progress('Parley: setup');
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

async function sendLoad(t: Target, p: Params, conversations: Conversation[]) {
  const parley = t.node!;
  const { pool, failed, errors } = await ClientPool.connect({
    label: 'Parley: members',
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
      const r = await client.post(`/conversations/${c.id}/messages`, member.token, { body: `Ingest ${marker(seq, sentAt)}` });
      if (r.status !== 201) throw new Error(`POST messages: ${r.status} ${r.text.slice(0, 200)}`);
      http.record(nowMs() - sentAt);
    };
    await closedLoop(send, p.inFlight, p.warmupSeconds * 1000);
    await sleep(500);
    http = new Histogram();
    pool.measure();
    const dbPids = await t.databasePids();
    const cpu = cpuAccount(t.pid, pool.pids, dbPids);
    const line = progress('Parley: sending');
    let lastSent = 0;
    const loop = await closedLoop(send, p.inFlight, p.seconds * 1000, (sent) => {
      line(`${sent} messages, ${sent - lastSent}/s`);
      lastSent = sent;
    });
    const used = cpu.done();
    if (loop.failed > 0) throw new Error(`${loop.failed} sends failed: ${loop.errors.join('; ')}`);
    // Deliveries: MessageSent to both sockets on the conversation, InboxUpdated to both users.
    const expected = loop.sent * 4;
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
    const row: Row = {
      setup: 'Parley: POST /messages',
      parley: true,
      figures: {
        perSecond,
        httpP50: http.percentile(50),
        httpP99: http.percentile(99),
        deliveryP50: delivery.percentile(50),
        deliveryP99: delivery.percentile(99),
        delivered: delivered / expected,
        serverCpu: used.server,
        databaseCpu: used.database,
        clientsCpu: used.clients,
        driverCpu: used.driver,
        otherCpu: used.other,
      },
      latency: summarize(http),
    };
    return { row, http, delivery };
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
