// docs/benchmarks.md and docs/bench/*.svg, generated from the latest full run of each benchmark
// (docs/bench/results/<name>.json). The hand-written analysis of each benchmark comes from bench/ANALYSIS.md
// (a "## <name>" section each), so the page says why a figure is what it is, not only what it is.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from '../../testkit/root.js';
import { BENCHMARKS, loadResult, scoreText, type Result } from './report.js';
import { fmt } from './stats.js';
import { barChartSvg, latencyChartSvg } from './svg.js';

const DOCS = join(ROOT, 'docs');
const CHARTS = join(DOCS, 'bench');
const ANALYSIS = join(ROOT, 'bench', 'ANALYSIS.md');

const WHAT: Record<string, string> = {
  fanout:
    '1,000 clients subscribed to one public channel; events triggered through the Pusher HTTP API (`POST /apps/{app_id}/events`, signed by the official `pusher` SDK over a keep-alive connection). ' +
    'Each event carries its send time; each client computes the latency of each delivery. A throughput phase keeps 4 triggers in flight and counts deliveries per second at the clients ' +
    '(from the first trigger until the last delivery arrived); a latency phase triggers at a fixed rate, well below every setup’s limit. ' +
    'The same clients and publisher run against Parley, a bare `ws` broadcast server (`bench/servers/bare-ws.ts`: once sending a string per socket, once a Buffer built once per event) and Soketi 1.6.1 when it is installed. ' +
    'A burst setup then triggers `POST /apps/{app_id}/batch_events` with 10 events to the channel per request (same clients, throughput only), for Parley and Soketi.',
  'chat-e2e':
    'A group of 1,000 members, each a connected client subscribed to `private-chat.user.{id}` and the group’s `private-chat.conversation.{id}`, both authorized through `/api/chat/v1/broadcasting/auth` as pusher-js does. ' +
    'One member posts messages one at a time (`POST /conversations/{id}/messages`); the figure is the time from just before the POST until every member has both its `MessageSent` and its `InboxUpdated`. On PostgreSQL. ' +
    'Baseline: the bare `ws` server delivering the same frames (one `MessageSent` to the conversation channel, an `InboxUpdated` JSON-encoded per member) with no database and no HTTP API: the floor of this delivery on this stack, which Parley’s p99 is held to within 1.15× of in the same run.',
  ingest:
    'Sustained `POST /conversations/{id}/messages` across 200 direct conversations with both members of each connected (so every message is delivered: `MessageSent` to two sockets, `InboxUpdated` to two users), 32 sends in flight, on PostgreSQL; ' +
    'then the same load on the embedded default (no `DATABASE_URL`: PGlite in a temporary `CHAT_DATA_DIR`). ' +
    'CPU per message is the cores a process used during the measurement × its seconds / the messages sent: Parley’s node process (on PGlite the database runs inside it) and the PostgreSQL backends serving it. ' +
    'In the same rounds, the same load sent as replies in threads (`thread_id`, one thread per conversation): `ThreadReplySent` and `ThreadUpdated` to both sockets, no `InboxUpdated`. ' +
    'Baseline on the same PostgreSQL database and table: a raw single-row `INSERT INTO messages` loop with `pg`, as many in flight, and once on one connection.',
  connections:
    '20,000 idle clients (or as many as the server process may open files for), each subscribed to its own private channel, opened by 4 client processes from 4 source addresses (127.0.0.2–5) so no single address runs out of ephemeral ports. ' +
    'Connections per second while opening; the server’s resident memory per connection once all are open and idle. Baseline: the bare `ws` server holding the same connections.',
  search:
    '`GET /search/messages` through the HTTP API over 1,000,000 messages in 10,000 conversations (70% direct, groups of 3 to 30) on PostgreSQL, loaded with SQL (`bench/lib/search-data.ts`): 1 to 27 words per message drawn by Zipf’s law from 30,000 words (common English words first, a few accented ones, then made-up rarer ones), 1% deleted. ' +
    'The searchers are 20 users each in about 950 conversations (some 86,000 messages each can see). Two searches in flight, the kinds in turn: a rare, a medium and a common word, the first letters of a word, two words, an accented word typed without accents, a word in one conversation, the next page of a common word, and `GET /users` with a name beginning over 50,000 users. ' +
    'Latency per kind and over all; CPU per search of the Parley process and of the PostgreSQL backends serving it.',
  sync:
    '`GET /sync` (the change feed) through the HTTP API on PostgreSQL, in two parts. ' +
    'Catching up: the search benchmark’s 1,000,000 messages (the feed holding the last 7 days of them), users 1 and 2 each in about 1,000 conversations; each loads the inbox and keeps its `sync_cursor`, then other members make 200 changes the user can see (sends, edits, reactions and reads in turn, one per conversation, through the API); ' +
    'two requests in flight ask `GET /sync?since=<that cursor>&limit=500` (the web client’s limit) again and again: latency, and the CPU of Parley and of PostgreSQL per sync. ' +
    'Baseline in the same run: the same users’ inbox first page (`GET /conversations?limit=30`), which a client loads when it cannot sync. ' +
    'Reconnect storm: 1,000 clients in 100 groups of 10, each with a cursor, are away for 30 s while members send 300 messages/s into the groups through the API; then all of them sync at once (at most 50 requests in flight), paging until `has_more` is false: the time until every client has caught up, the changes per client and the CPU per client’s sync. ' +
    'Each client must get every `MessageSent` of its group exactly once, or the benchmark fails.',
  threads:
    'The reads of API v1.2 through the HTTP API on PostgreSQL, on data written through the API: `GET /threads` for a user who takes part in 500 threads (50 groups of 10, ten threads each, and five more per group the user is not in); ' +
    '`GET /messages/{id}/thread` of a thread of 10,000 replies (its newest page and a page from its middle, in turn); the inbox’s first page (`GET /conversations?limit=30`) of a user in 1,100 direct conversations with the 1,000 most recently active archived and 10 older ones pinned. ' +
    'Two requests in flight, closed loops. Baselines in the same run: the same user’s inbox page; the same two pages of a conversation’s history with 10,000 messages; the same inbox before anything was archived or pinned.',
  compliance:
    'A user with 100,000 messages across 50 direct conversations (loaded with SQL on conversations made through the API) on PostgreSQL. ' +
    'Export: `GET /users/{id}/export` read to the end and parsed (every message must be in it) while the Parley process’s resident memory (VmRSS) is sampled every 5 ms; the figure is its peak above the RSS just before. ' +
    'Erasure: `DELETE /users/{id}?messages=erase` sent as the ingest benchmark’s load starts on the same node (200 direct conversations, both members connected, 32 sends in flight); the ingest rate during the erasure against the better of the same load just before and just after it; the erasure’s time from the request to its job’s completion, after which no body of the user’s messages is left.',
  cluster:
    'Parley scaled out: node processes of their own (`node src/main.ts`) on one PostgreSQL database, on the machine’s one Redis and on a Redis Cluster the run starts (six `redis-server` processes: 3 masters, 3 replicas; `REDIS_CLUSTER_NODES`). ' +
      'Groups: 3,000 clients in 300 groups of 10, client u on node u mod 3, each subscribed to its group’s channel and its own; each group message is what it costs the realtime layer, a `MessageSent` to the group’s channel and an `InboxUpdated` to each member’s channel, triggered through the Pusher HTTP API of the nodes in turn, 6 in flight. ' +
      'The same clients and load against one node, then three on one Redis, then three on the Redis Cluster (rounds taking turns): deliveries per second at the clients, each node’s CPU per delivery (from /proc), Redis’s CPU, and each node’s cross-node efficiency from its `/metrics` (of the channel messages it received from Redis, the share it wrote to at least one of its sockets; 1 when no node receives what none of its sockets wants). ' +
      'Then paced rounds at the same load per node, 80 messages/s through each node (one node 80, three 240), on each kind of Redis: one node, three nodes with each group’s members all on the node its messages go through (the machine as busy, nothing crossing between the nodes), and three nodes with the members spread. A node’s CPU per delivery falls as its load rises, so the node count is compared at the same load per node; the two controls split what grows into a busier machine and what crosses between the nodes. ' +
      'On the three nodes on the Redis Cluster: a group of 10,000 members spread over them (both channels authorized through `/broadcasting/auth`): messages posted one at a time, each timed until every member has its `MessageSent` and its `InboxUpdated`; the floor is the bare `ws` server delivering the same frames to as many clients in the same run, as in chat-e2e. ' +
      'A reconnect storm: 5,000 chat clients in groups of 10 on node 3, each with a sync cursor; a message is posted to every group, then node 3 is killed (SIGKILL); the clients reconnect at once to the other nodes, subscribe again and catch up with `GET /sync`: the time until the last is subscribed and synced, the 5xx answers, and the surviving nodes’ peak resident memory.',
  uploads:
    '25 MB files of random bytes posted to `POST /attachments` (multipart/form-data) five times one at a time, then four at once, to a Parley storing attachments on local disk (the default) and to one storing them in an S3-compatible bucket (s3rver, run by the benchmark; multipart uploads to the bucket as with S3 or MinIO), both on the embedded database. ' +
    'The Parley process’s resident memory (VmRSS) is sampled every 5 ms; the figure is its peak above the RSS just before the upload. Baseline: the size of the file itself, which a server that buffered uploads would grow by.',
};

function analysis(): Map<string, string> {
  const sections = new Map<string, string>();
  if (!existsSync(ANALYSIS)) return sections;
  let current: string | null = null;
  for (const line of readFileSync(ANALYSIS, 'utf8').split('\n')) {
    const heading = /^## (\S+)\s*$/.exec(line);
    if (heading) {
      current = heading[1]!;
      sections.set(current, '');
    } else if (current !== null) {
      sections.set(current, sections.get(current)! + line + '\n');
    }
  }
  return sections;
}

const cell = (text: string) => text.replaceAll('|', '\\|');

function resultSection(r: Result, notes: string | undefined): string[] {
  const out: string[] = [];
  const m = r.machine;
  out.push(`## ${r.benchmark}`, '', `**${r.title}.**`, '', WHAT[r.benchmark] ?? '', '');
  out.push(
    `Latest full run: ${r.finishedAt.slice(0, 16).replace('T', ' ')} UTC, ${r.seconds} s; ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, Node ${m.node}` +
      `${m.postgres ? `, ${m.postgres}` : ''}; \`npm run bench -- ${r.benchmark}\`.`,
    '',
  );
  out.push('| parameter | value |', '|---|---|', ...Object.entries(r.parameters).map(([k, v]) => `| ${cell(k)} | ${cell(String(v))} |`), '');
  out.push(`| setup | ${r.columns.map((c) => cell(c.label)).join(' | ')} |`, `|---|${r.columns.map(() => '---:').join('|')}|`);
  for (const row of r.rows) {
    const name = row.parley ? `**${cell(row.setup)}**` : cell(row.setup);
    out.push(`| ${name} | ${r.columns.map((c) => fmt(row.figures[c.key] ?? NaN)).join(' | ')} |`);
  }
  out.push('');
  if (r.comparisons.length > 0) {
    out.push('Ratios, same run:', '', ...r.comparisons.map((c) => `- ${c.label}: **${c.value.toFixed(2)}×**`), '');
  }
  if (r.targets.length > 0) {
    out.push('Against its targets:', '');
    out.push('| target | wanted | reached | of the target | |', '|---|---|---|---:|---|');
    for (const t of r.targets) out.push(`| ${cell(t.label)} | ${cell(t.target)} | ${cell(t.actual)} | ${scoreText(t.score)} | ${t.met ? 'met' : '**not met**'} |`);
    out.push('');
  }
  if (r.notes.length > 0) out.push(...r.notes.map((n) => `- ${n}`), '');
  for (const chart of [...r.charts.bars, ...r.charts.latency]) out.push(`![${chart.title}](bench/${chart.file})`, '');
  if (notes?.trim()) out.push(notes.trim(), '');
  return out;
}

/** Writes the charts and docs/benchmarks.md from the stored results; returns the files written. */
export function writeDocs(): string[] {
  mkdirSync(CHARTS, { recursive: true });
  const written: string[] = [];
  const results = BENCHMARKS.map((name) => loadResult(name)).filter((r): r is Result => r !== null);
  for (const r of results) {
    for (const chart of r.charts.bars) {
      writeFileSync(join(CHARTS, chart.file), barChartSvg(chart));
      written.push(join(CHARTS, chart.file));
    }
    for (const chart of r.charts.latency) {
      writeFileSync(join(CHARTS, chart.file), latencyChartSvg(chart));
      written.push(join(CHARTS, chart.file));
    }
  }
  const texts = analysis();
  const out: string[] = [
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench` (bench/lib/docs.ts) from docs/bench/results/*.json and bench/ANALYSIS.md. Do not edit by hand: run a benchmark, or edit bench/ANALYSIS.md and run `npm run bench -- --docs`. -->',
    '',
    'These benchmarks measure what Parley promises about speed, each beside a baseline measured **in the same run** on the same machine, ' +
      'so a figure can be read against the limit of its stack rather than against a number from elsewhere. ' +
      'Load generators are separate processes (`bench/load/worker.ts`, forked by the driver) speaking the Pusher protocol over real sockets with the `ws` client; ' +
      'servers (Parley, the baselines) run as processes of their own, Parley as `node --import tsx src/main.ts` with its configuration in the environment and a fresh PostgreSQL database.',
    '',
    '## Running them',
    '',
    '```bash',
    'npm install',
    'npm run bench -- fanout          # or chat-e2e, ingest, connections, search, sync, threads, uploads, compliance, cluster, all',
    'npm run bench -- all --smoke     # a few clients for a second or two: checks they work (CI runs this)',
    'npm run bench:install-soketi     # optional: Soketi 1.6.1 in bench/soketi/, outside Parley\'s dependencies',
    '```',
    '',
    'They need the machine\'s PostgreSQL at `127.0.0.1:5432` (as the tests do; `BENCH_DATABASE_URL` names another admin URL, where each run creates and drops a `parley_bench_*` database). ' +
      'Each prints progress while it runs and a report with the figures, the ratios against its baseline and its targets. ' +
      'A full run (without `--smoke`) also stores its result in `docs/bench/results/<name>.json` and regenerates this page and the charts in `docs/bench/`. ' +
      '`--setup <name>` runs only some setups (for quick comparisons; nothing is written). A full run of one benchmark takes one to four minutes (cluster: about eleven). ' +
      'To look inside a `cluster` run, `BENCH_NODE_ARGS` gives every node process Node options (for example `--cpu-prof --cpu-prof-dir=/tmp/prof`; the nodes then stop with SIGTERM so they can write their profiles) and `BENCH_NODE_LOGS=<dir>` keeps what the surviving nodes wrote during the reconnect storm. `BENCH_CLUSTER_RATE=<messages/s>` with `--setup groups` sets the rate per node of the groups\' paced rounds (80 by default: one node gets 80 messages/s, three nodes 240), for a comparison; nothing is written.',
    '',
    'The machine is shared by every process on it, the benchmark\'s own included: clients, server and database compete for the same cores. ' +
      'Each report therefore shows where the CPU went during the measurement (server, PostgreSQL, clients, and **other**: processes outside the benchmark). ' +
      'A figure measured while *other* was well above zero is lower than the same code reaches on a quiet machine; the notes under each table say so.',
    '',
    '## Summary',
    '',
    '| benchmark | target | reached | of the target | |',
    '|---|---|---|---:|---|',
  ];
  for (const r of results) {
    for (const t of r.targets) out.push(`| [${r.benchmark}](#${r.benchmark}) | ${cell(t.label)}: ${cell(t.target)} | ${cell(t.actual)} | ${scoreText(t.score)} | ${t.met ? 'met' : '**not met**'} |`);
  }
  const missing = BENCHMARKS.filter((b) => !results.some((r) => r.benchmark === b));
  if (missing.length > 0) out.push('', `No full run stored yet for: ${missing.join(', ')}.`);
  if (texts.get('summary')?.trim()) out.push('', texts.get('summary')!.trim());
  out.push('');
  for (const r of results) out.push(...resultSection(r, texts.get(r.benchmark)));
  const file = join(DOCS, 'benchmarks.md');
  writeFileSync(file, out.join('\n'));
  written.push(file);
  return written.map((f) => relative(ROOT, f));
}
