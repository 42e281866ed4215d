// chat-e2e: a group of N members, each a connected client subscribed to its own channel
// (private-chat.user.{id}) and the group's (private-chat.conversation.{id}), both authorized through
// /api/chat/v1/broadcasting/auth as pusher-js does. One member posts messages, one at a time; for each we
// time from just before the POST until every member has both its MessageSent and its InboxUpdated.
// On PostgreSQL. Baseline in the same run: the bare `ws` server delivering the same frames to the same
// clients (one MessageSent to the conversation channel, an InboxUpdated encoded per member) with no
// database and no HTTP API: the floor of this delivery on this stack.
import { ClientPool } from '../lib/clients.js';
import { sleep } from '../../testkit/wait.js';
import { nowMs } from '../lib/clock.js';
import { cpuAccount, log, progress } from '../lib/procs.js';
import { target as goal, type Row } from '../lib/report.js';
import { Histogram, percentile, summarize } from '../lib/stats.js';
import { bareTarget, parleyTarget, type Target } from '../lib/targets.js';
import { marker } from '../load/protocol.js';
import { chosen, type BenchOptions, type BenchmarkReport } from '../lib/benchmark.js';

const COMPLETION = ['MessageSent', 'InboxUpdated'] as const;

interface Params {
  members: number;
  messages: number;
  warmup: number;
  workers: number;
}

export async function chatE2e(options: BenchOptions): Promise<BenchmarkReport> {
  const p: Params = { members: options.smoke ? 5 : 1000, messages: options.smoke ? 5 : 300, warmup: options.smoke ? 2 : 20, workers: 2 };
  return report(p, await measure(options, p), options.smoke);
}

interface Templates {
  /** A MessageSent payload and an InboxUpdated payload as Parley sent them, for the bare baseline. */
  message: Record<string, unknown>;
  inbox: Record<string, unknown>;
}

// ── setup ──

interface Group {
  readonly id: number;
  /** The member who sends. */
  readonly sender: number;
}

/** The members (users 1 … N, through the server-key API, as a host app creates them) and their group. */
async function setUpGroup(t: Target, p: Params): Promise<Group> {
  const parley = t.node!;
  const line = progress('Parley: setup');
  let next = 1;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next <= p.members) {
        const id = next++;
        const r = await parley.server('PUT', `/users/${id}`, { name: `Member ${id}` });
        if (r.status !== 201 && r.status !== 200) throw new Error(`PUT /users/${id}: ${r.status} ${JSON.stringify(r.body)}`);
      }
    }),
  );
  const sender = 1;
  const group = await parley.request(sender, 'POST', '/groups', { name: 'Benchmark group', user_ids: Array.from({ length: p.members - 1 }, (_, i) => i + 2) }, {}, 60_000);
  if (group.status !== 201) throw new Error(`POST /groups: ${group.status} ${JSON.stringify(group.body)}`);
  const groupId = (group.body as { data: { id: number } }).data.id;
  line(`${p.members} users and group ${groupId} created`, true);
  return { id: groupId, sender };
}

// ── measure ──

/** Parley, then the bare baseline delivering the frames Parley sent (or made-up ones when Parley was not run). */
async function measure(options: BenchOptions, params: Params): Promise<Row[]> {
  const rows: Row[] = [];
  let templates: Templates | undefined;
  if (chosen(options, 'Parley')) {
    log('- Parley (PostgreSQL)');
    const t = await parleyTarget();
    try {
      const { row, captured } = await runParley(t, params, await setUpGroup(t, params));
      rows.push(row);
      templates = captured;
    } finally {
      await t.stop();
    }
  }
  if (chosen(options, 'bare')) {
    log('- bare ws, no database');
    const t = await bareTarget('buffer', 'bare ws, no database');
    try {
      rows.push(await runBare(t, params, templates ?? fallbackTemplates()));
    } finally {
      await t.stop();
    }
  }
  return rows;
}

/** The group's members connected; `messages` sends by one of them, each timed until every member has both events. */
async function runParley(t: Target, p: Params, { id: groupId, sender }: Group): Promise<{ row: Row; captured: Templates }> {
  const parley = t.node!;
  const tokens = await Promise.all(Array.from({ length: p.members }, (_, i) => parley.token(i + 1)));
  const { pool, failed, errors } = await ClientPool.connect({
    label: 'Parley: members',
    url: t.wsUrl,
    clients: tokens.map((token, i) => ({ channels: [`private-chat.user.${i + 1}`, `private-chat.conversation.${groupId}`], token })),
    auth: { kind: 'endpoint', url: `${parley.api}/broadcasting/auth` },
    workers: p.workers,
    concurrency: 20,
  });
  try {
    if (failed > 0) throw new Error(`${failed} members could not connect: ${errors.join('; ')}`);
    const send = async (seq: number) => {
      const sentAt = nowMs();
      const r = await parley.request(sender, 'POST', `/conversations/${groupId}/messages`, { body: `Message ${marker(seq, sentAt)} to the group` });
      if (r.status !== 201) throw new Error(`POST messages: ${r.status} ${JSON.stringify(r.body)}`);
      return { sentAt, answeredAt: nowMs() };
    };
    const row = await measureMessages(t, pool, p, send);
    // Real payloads for the baseline: what Parley sent for the last message.
    const message = await parley.request(sender, 'GET', `/conversations/${groupId}/messages?limit=1`);
    const inbox = await parley.request(sender, 'GET', `/conversations/${groupId}`);
    const captured = {
      message: (message.body as { data: Record<string, unknown>[] }).data[0]!,
      inbox: (inbox.body as { data: Record<string, unknown> }).data,
    };
    return { row: { ...row, setup: 'Parley (PostgreSQL)', parley: true }, captured };
  } finally {
    pool.close();
  }
}

async function runBare(t: Target, p: Params, templates: Templates): Promise<Row> {
  const conversationChannel = 'private-chat.conversation.1';
  const { pool, failed, errors } = await ClientPool.connect({
    label: 'bare ws: members',
    url: t.wsUrl,
    clients: Array.from({ length: p.members }, (_, i) => ({ channels: [`private-chat.user.${i + 1}`, conversationChannel] })),
    auth: { kind: 'none' },
    workers: p.workers,
  });
  try {
    if (failed > 0) throw new Error(`${failed} members could not connect: ${errors.join('; ')}`);
    const { edited_at: _edited, ...sent } = templates.message;
    const send = async (seq: number) => {
      const sentAt = nowMs();
      const body = `Message ${marker(seq, sentAt)} to the group`;
      const message = { ...sent, body };
      const response = await fetch(`http://127.0.0.1:${t.port}/bench/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          conversationChannel,
          userChannelPrefix: 'private-chat.user.',
          users: p.members,
          message: JSON.stringify(message),
          inbox: { ...templates.inbox, last_message: { ...templates.message, body } },
        }),
      });
      await response.text();
      return { sentAt, answeredAt: nowMs() };
    };
    return { ...(await measureMessages(t, pool, p, send)), setup: 'bare ws, no database', parley: false };
  } finally {
    pool.close();
  }
}

async function measureMessages(t: Target, pool: ClientPool, p: Params, send: (seq: number) => Promise<{ sentAt: number; answeredAt: number }>): Promise<Row> {
  const line = progress(`${t.name}: messages`);
  const all: number[] = [];
  const answered: number[] = [];
  let timeouts = 0;
  pool.measure(COMPLETION);
  let cpu = cpuAccount(t.pid, pool.pids);
  const dbPids = await t.databasePids();
  for (let seq = 0; seq < p.warmup + p.messages; seq++) {
    if (seq === p.warmup) {
      pool.measure(COMPLETION);
      cpu = cpuAccount(t.pid, pool.pids, dbPids);
    }
    const done = pool.completed(seq, 10_000);
    const { sentAt, answeredAt } = await send(seq);
    const lastAt = await done;
    if (seq < p.warmup) continue;
    if (lastAt === null) timeouts++;
    else all.push(lastAt - sentAt);
    answered.push(answeredAt - sentAt);
    if (all.length % 50 === 0 && all.length > 0) line(`${all.length}/${p.messages}, p50 so far ${percentile(all, 50).toFixed(1)} ms`);
    await sleep(5);
  }
  const used = cpu.done();
  const report = await pool.report();
  const latency = summarize(Histogram.of(all));
  const deliveries = new Histogram();
  for (const name of COMPLETION) {
    const h = report.events.get(name);
    if (h) deliveries.merge(h);
  }
  line(`all members: p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(1)} ms (POST answered p50 ${percentile(answered, 50).toFixed(1)} ms)`, true);
  return {
    setup: t.name,
    parley: t.parley,
    figures: {
      p50: percentile(all, 50),
      p90: percentile(all, 90),
      p99: percentile(all, 99),
      max: percentile(all, 100),
      postP50: percentile(answered, 50),
      postP99: percentile(answered, 99),
      deliveryP50: deliveries.percentile(50),
      deliveryP99: deliveries.percentile(99),
      serverCpu: used.server,
      databaseCpu: used.database,
      clientsCpu: used.clients,
      otherCpu: used.other,
      timeouts,
    },
    latency,
  };
}

function fallbackTemplates(): Templates {
  const user = { id: 1, name: 'Member 1', avatar_url: null };
  const message = {
    id: 1, conversation_id: 1, body: '', attachment: null, sender: user, reply_to: null, forwarded_from: null,
    created_at: new Date().toISOString(), edited_at: null,
  };
  return {
    message,
    inbox: {
      id: 1, type: 'group', name: 'Benchmark group', avatar_url: null, participant_count: 1000,
      participants_preview: Array.from({ length: 10 }, (_, i) => ({ id: i + 1, name: `Member ${i + 1}`, avatar_url: null, role: i === 0 ? 'owner' : 'member' })),
      last_message: message, unread_count: 0, last_read_at: null, created_at: message.created_at, updated_at: message.created_at,
    },
  };
}

// ── report ──

function report(params: Params, rows: Row[], smoke: boolean): BenchmarkReport {
  const notes: string[] = [];
  const parley = rows.find((r) => r.parley);
  const bare = rows.find((r) => !r.parley);
  const members = params.members.toLocaleString('en-US');
  for (const r of rows) {
    if (r.figures.timeouts > 0) notes.push(`${r.setup}: ${r.figures.timeouts} messages did not reach every member within 10 s.`);
    if (r.figures.otherCpu! > 0.15) notes.push(`${r.setup}: other processes on the machine used ${r.figures.otherCpu!.toFixed(2)} cores during the measurement.`);
  }
  return {
    benchmark: 'chat-e2e',
    title: `Chat end-to-end: one message to a group of ${params.members.toLocaleString('en-US')} connected members`,
    smoke,
    parameters: {
      members: params.members,
      'channels per member': '2 (private-chat.user.{id}, private-chat.conversation.{id}), authorized through /broadcasting/auth',
      messages: `${params.messages} (after ${params.warmup} not counted), one at a time`,
      database: 'PostgreSQL (a fresh database)',
      'client processes': params.workers,
    },
    columns: [
      { key: 'p50', label: 'all members p50 ms' },
      { key: 'p99', label: 'all members p99 ms' },
      { key: 'max', label: 'max ms' },
      { key: 'postP50', label: 'POST answered p50 ms' },
      { key: 'deliveryP50', label: 'one delivery p50 ms' },
      { key: 'serverCpu', label: 'server CPU' },
      { key: 'databaseCpu', label: 'PostgreSQL CPU' },
      { key: 'otherCpu', label: 'other CPU' },
    ],
    rows,
    comparisons: [],
    targets: [
      ...(parley ? [goal(`p99 until every member of ${params.members} has both events`, '≤ 25 ms', parley.figures.p99!, 25, 'at most', ' ms')] : []),
      // The floor: the bare ws server delivering the same frames to the same clients in the same run.
      ...(parley && bare
        ? [goal(`p99 for ${members} members, Parley / the bare ws floor of the same run`, '≤ 1.15×', parley.figures.p99! / bare.figures.p99!, 1.15, 'at most', '×')]
        : []),
    ],
    notes,
    charts: {
      bars: [],
      latency: [
        {
          file: 'chat-e2e-latency.svg',
          title: `Chat: POST → all ${params.members.toLocaleString('en-US')} members have MessageSent and InboxUpdated`,
          series: rows.map((r) => ({ label: r.setup, curve: r.latency!.curve })),
          target: { value: 25, label: 'target: p99 ≤ 25 ms' },
        },
      ],
    },
  };
}

