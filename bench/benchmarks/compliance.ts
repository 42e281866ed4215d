// compliance: a user's export and erasure at scale, on PostgreSQL (docs/api.md "Compliance").
//
// One user has 100,000 messages across 50 direct conversations (loaded with SQL on top of conversations made
// through the API, their partners' unread counts set as sends would have left them). Then:
//   export   GET /users/{id}/export streamed to the end and parsed (every message must be there); the Parley
//            process's resident memory is sampled every 5 ms: the figure is its peak above the RSS just before.
//   erasure  DELETE /users/{id}?messages=erase while the ingest benchmark's load runs (200 direct conversations,
//            both members connected, 32 sends in flight: bench/benchmarks/ingest.ts) on the same node and
//            database: the ingest rate during the erasure against its rate without one, measured just before and
//            just after in the same run (the better of the two is the baseline); the erasure's time, from the
//            request to its job's completion. Afterwards no message body of the user's is left.
import pg from 'pg';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep } from '../../testkit/wait.js';
import { log, progress, sampledPeak } from '../lib/procs.js';
import { target as goal, type Result, type Row } from '../lib/report.js';
import { parleyTarget, type Target } from '../lib/targets.js';
import type { BenchOptions } from '../lib/benchmark.js';
import { sendLoad, setUp, type Conversation, type Measured, type Params } from './ingest.js';

const MiB = 1024 * 1024;
/** The erased user: far above the ingest load's users (1 … 400). */
const ERASED_USER = 1_000_000;
/** A word only the erased user's messages carry, to look for afterwards. */
const MARK = 'erasable';

export async function compliance(options: BenchOptions): Promise<Omit<Result, 'machine' | 'finishedAt' | 'seconds'>> {
  const smoke = options.smoke;
  const messages = smoke ? 2_000 : 100_000;
  const partners = smoke ? 5 : 50;
  const p: Params = { pairs: smoke ? 4 : 200, inFlight: smoke ? 4 : 32, seconds: smoke ? 1 : 10, warmupSeconds: smoke ? 0.5 : 2, insertSeconds: 0, workers: 2, rounds: 1 };
  const notes: string[] = [];

  const t = await parleyTarget();
  try {
    const conversations = await setUp(t, p);
    await loadErasedUser(t, conversations.slice(0, partners), messages);

    log('- export');
    const exported = await exportOnce(t, messages);

    log('- ingest without an erasure');
    const before = await sendLoad(t, p, conversations, 'ingest, no erasure (before)');
    log(`- ingest while ${messages.toLocaleString('en-US')} messages are erased`);
    const requested = await t.node!.server('DELETE', `/users/${ERASED_USER}?messages=erase`);
    if (requested.status !== 202) throw new Error(`DELETE /users/${ERASED_USER}: ${requested.status} ${JSON.stringify(requested.body)}`);
    const during = await sendLoad(t, p, conversations, 'ingest during the erasure');
    const overlapped = await erasureRunning(t);
    if (!overlapped) notes.push('The erasure finished before the measurement of ingest during it ended: the ratio flatters it.');
    const erasure = await erasureDone(t, messages);
    log('- ingest without an erasure, again');
    const after = await sendLoad(t, p, conversations, 'ingest, no erasure (after)');

    const baseline = [before, after].reduce((a, b) => (b.row.figures.perSecond! > a.row.figures.perSecond! ? b : a));
    const ratio = during.row.figures.perSecond! / baseline.row.figures.perSecond!;
    const rows: Row[] = [
      ...[before, during, after].map((m: Measured) => m.row),
      { setup: `erasure of ${messages.toLocaleString('en-US')} messages`, parley: true, figures: { erasureSeconds: erasure.seconds, erasedPerSecond: messages / erasure.seconds } },
      { setup: `export of ${messages.toLocaleString('en-US')} messages`, parley: true, figures: { exportSeconds: exported.seconds, exportMiB: exported.bytes / MiB, growthMiB: exported.growth / MiB } },
    ];
    for (const m of [before, during, after]) {
      if (m.row.figures.delivered! < 1) notes.push(`${m.row.setup}: ${((1 - m.row.figures.delivered!) * 100).toFixed(2)}% of the expected deliveries did not arrive.`);
      if (m.row.figures.otherCpu! > 0.15) notes.push(`${m.row.setup}: other processes on the machine used ${m.row.figures.otherCpu!.toFixed(2)} cores during the measurement.`);
    }
    return {
      benchmark: 'compliance',
      title: `Compliance: export and erasure of a user with ${messages.toLocaleString('en-US')} messages, ingest running (PostgreSQL)`,
      smoke,
      parameters: {
        'erased user': `${messages.toLocaleString('en-US')} messages across ${partners} direct conversations (loaded with SQL)`,
        export: 'GET /users/{id}/export (server key) read to the end and parsed; VmRSS of the Parley process sampled every 5 ms',
        ingest: `the ingest benchmark's load: ${p.pairs} direct conversations, both members connected, ${p.inFlight} sends in flight for ${p.seconds} s after ${p.warmupSeconds} s of warm-up; before, during and after the erasure`,
        erasure: 'DELETE /users/{id}?messages=erase, sent as the ingest load starts; its time is from the request to the job’s completed_at',
      },
      columns: [
        { key: 'perSecond', label: 'messages/s' },
        { key: 'httpP50', label: 'POST p50 ms' },
        { key: 'httpP99', label: 'POST p99 ms' },
        { key: 'deliveryP99', label: 'delivery p99 ms' },
        { key: 'erasureSeconds', label: 'erasure s' },
        { key: 'erasedPerSecond', label: 'erased/s' },
        { key: 'exportSeconds', label: 'export s' },
        { key: 'exportMiB', label: 'export MiB' },
        { key: 'growthMiB', label: 'memory growth MiB' },
        { key: 'otherCpu', label: 'other CPU' },
      ],
      rows,
      comparisons: [{ label: 'ingest during the erasure / without one (the better of before and after)', value: ratio }],
      targets: [
        goal('ingest during an erasure / without one', '≥ 0.8', ratio, 0.8, 'at least', '×'),
        goal(`memory growth while exporting ${messages.toLocaleString('en-US')} messages`, '≤ 16 MiB', exported.growth / MiB, 16, 'at most', ' MiB'),
      ],
      notes,
      charts: {
        bars: [
          {
            file: 'compliance-ingest.svg',
            title: 'Ingest (messages/s) without and during an erasure',
            unit: 'per second',
            bars: [before, during, after].map((m) => ({ label: m.row.setup, value: m.row.figures.perSecond!, highlight: m === during })),
          },
        ],
        latency: [],
      },
    };
  } finally {
    await t.stop();
  }
}

/**
 * The erased user, a direct conversation with each partner (through the API), then `messages` messages of theirs
 * spread over those conversations with SQL, each partner's unread count as the sends would have left it.
 */
async function loadErasedUser(t: Target, with_: readonly Conversation[], messages: number): Promise<void> {
  const node = t.node!;
  const line = progress(`${t.name}: the erased user`);
  const created = await node.server('PUT', `/users/${ERASED_USER}`, { name: 'Erased Soon' });
  if (created.status !== 201 && created.status !== 200) throw new Error(`PUT /users/${ERASED_USER}: ${created.status}`);
  const ids: number[] = [];
  for (const c of with_) {
    const r = await node.request(ERASED_USER, 'POST', '/conversations', { user_id: c.members[0].id });
    if (r.status !== 201 && r.status !== 200) throw new Error(`POST /conversations: ${r.status} ${JSON.stringify(r.body)}`);
    ids.push((r.body as { data: { id: number } }).data.id);
  }
  const client = new pg.Client({ connectionString: t.database!.url });
  await client.connect();
  try {
    await client.query(
      `insert into messages (conversation_id, sender_id, body, created_at)
       select ($2::bigint[])[1 + i % cardinality($2::bigint[])], $3, 'An ${MARK} note number ' || i || ' about the plan for week ' || (i % 52),
              now() - make_interval(secs => $1 - i)
       from generate_series(1, $1) i order by i`,
      [messages, ids, ERASED_USER],
    );
    await client.query(
      `update conversations c set last_message_id = l.id, last_activity_at = l.created_at
       from (select distinct on (conversation_id) conversation_id, id, created_at from messages where conversation_id = any($1::bigint[]) order by conversation_id, id desc) l
       where l.conversation_id = c.id`,
      [ids],
    );
    await client.query(
      `update participants p set unread_count = n.count
       from (select conversation_id, count(*) from messages where conversation_id = any($1::bigint[]) group by conversation_id) n
       where p.conversation_id = n.conversation_id and p.user_id <> $2`,
      [ids, ERASED_USER],
    );
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
  line(`${messages.toLocaleString('en-US')} messages in ${ids.length} conversations`, true);
}

/** Streams the export to the end while sampling the server's memory; checks every message is in it. */
async function exportOnce(t: Target, messages: number): Promise<{ seconds: number; bytes: number; growth: number }> {
  const node = t.node!;
  const line = progress(`${t.name}: export`);
  await sleep(1_000); // let the process settle after the setup
  let text = '';
  const sampled = await sampledPeak(t.pid, async () => {
    const response = await fetch(`${node.api}/users/${ERASED_USER}/export`, { headers: { 'x-chat-server-key': SECRETS.CHAT_SERVER_KEY } });
    if (response.status !== 200) throw new Error(`GET /users/${ERASED_USER}/export: ${response.status} ${await response.text()}`);
    text = await response.text();
  });
  const document = JSON.parse(text) as { messages: unknown[] };
  if (document.messages.length !== messages) throw new Error(`the export holds ${document.messages.length} messages, not ${messages}`);
  const bytes = Buffer.byteLength(text);
  line(`${(bytes / MiB).toFixed(1)} MiB in ${sampled.seconds.toFixed(1)} s, memory growth ${(sampled.growth / MiB).toFixed(1)} MiB`, true);
  return { ...sampled, bytes };
}

async function erasureRunning(t: Target): Promise<boolean> {
  const { rows } = await query<{ completed_at: Date | null }>(t, 'select completed_at from erasure_jobs where user_id = $1', [ERASED_USER]);
  return rows[0]?.completed_at === null;
}

/** Waits for the erasure's job to complete; its time from the request, and a check that no text of the user is left. */
async function erasureDone(t: Target, messages: number): Promise<{ seconds: number }> {
  const line = progress(`${t.name}: erasure`);
  for (;;) {
    const { rows } = await query<{ phase: string; erased: string; seconds: number | null }>(
      t,
      `select phase, messages_erased as erased, extract(epoch from completed_at - requested_at)::float8 as seconds from erasure_jobs where user_id = $1`,
      [ERASED_USER],
    );
    const job = rows[0];
    if (!job) throw new Error('no erasure job');
    if (job.seconds !== null) {
      const left = await query<{ n: string }>(t, `select count(*) as n from messages where sender_id = $1 and body is not null`, [ERASED_USER]);
      const text = await query<{ n: string }>(t, `select count(*) as n from messages where body like '%${MARK}%'`, []);
      if (Number(left.rows[0]!.n) !== 0 || Number(text.rows[0]!.n) !== 0) throw new Error(`after the erasure ${left.rows[0]!.n} messages of the user still have a body`);
      if (Number(job.erased) < messages) throw new Error(`the job erased ${job.erased} of ${messages} messages`);
      line(`${messages.toLocaleString('en-US')} messages in ${job.seconds.toFixed(1)} s`, true);
      return { seconds: job.seconds };
    }
    line(`${job.phase}: ${Number(job.erased).toLocaleString('en-US')} messages erased`);
    await sleep(500);
  }
}

async function query<R extends pg.QueryResultRow>(t: Target, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
  const client = new pg.Client({ connectionString: t.database!.url });
  await client.connect();
  try {
    return await client.query<R>(text, values);
  } finally {
    await client.end();
  }
}
