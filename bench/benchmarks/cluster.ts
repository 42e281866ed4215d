// cluster: Parley scaled out, nodes as separate processes on one PostgreSQL database and a Redis Cluster of the
// benchmark's own (six redis-server processes, when redis-server is 7 or newer), or else the machine's one Redis.
// Three parts:
//   1. groups: 3,000 clients in 300 groups of 10, each client subscribed to its group's channel and its own user
//      channel, spread over the nodes (client u on node u mod 3). Each message is what a group message costs the
//      realtime layer: a MessageSent to the group's channel and an InboxUpdated to each member's channel, triggered
//      through the Pusher HTTP API of the nodes in turn, a few in flight (a closed loop). The same clients and load
//      against one node, then three on one Redis, then three on the Redis Cluster, rounds taking turns:
//      deliveries/s, each node's CPU per delivery (from /proc),
//      Redis's CPU, and each node's cross-node efficiency (from its /metrics: of the channel messages it received
//      from Redis, the share it wrote to at least one of its sockets). Then the same at a fixed rate per node (80
//      messages/s through one node, 240 through three): the CPU per delivery at the same load per node. A node's CPU
//      per delivery falls as its load rises (more of the work of a wake-up shares it), so only at the same load per
//      node does a ratio show what the other nodes add. The paced rounds add two controls on each kind of Redis: one
//      node on the Redis Cluster too (so that the node count is the only change), and three nodes with each group's
//      members all on the node its messages go through (the machine as busy as with three, nothing crossing between
//      the nodes), which splits the growth into what a busier machine costs and what crossing between nodes costs.
//   2. a group of 10,000 members end to end on the three nodes (on the Redis Cluster when there is one) (members spread over them, both channels authorized
//      through /broadcasting/auth): messages posted one at a time, each timed until every member has its
//      MessageSent and its InboxUpdated (docs/events.md). Floor in the same run: the bare `ws` server delivering
//      the same frames to the same clients (as chat-e2e defines it).
//   3. a reconnect storm: 5,000 chat clients (500 groups of 10) on node 3, each with a sync cursor; a message is
//      posted to every group; node 3 is killed (SIGKILL). The clients reconnect at once to the other nodes,
//      subscribe again and catch up with GET /sync: the time until the last of them is subscribed and synced, the
//      5xx answers, and the surviving nodes' peak resident memory.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClientPool } from '../lib/clients.js';
import { nowMs } from '../lib/clock.js';
import { chosen, type BenchOptions, type BenchmarkReport } from '../lib/benchmark.js';
import { autovacuumOn, crossNodeCounters, machineRedis, redisCluster, redisClusterAvailable, startCluster, type BenchCluster, type BenchRedis, type CrossNodeCounters } from '../lib/cluster-nodes.js';
import { closedLoop, openLoop, pusherPublisher, type Publisher } from '../lib/publisher.js';
import { cpuSeconds, log, machineBusySeconds, progress, rssBytes } from '../lib/procs.js';
import { target as goal, type Row, type Target as Goal } from '../lib/report.js';
import { Histogram, percentile, summarize } from '../lib/stats.js';
import { StormClients } from '../lib/storm-clients.js';
import { bareTarget, type Target } from '../lib/targets.js';
import { marker } from '../load/protocol.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep } from '../../testkit/wait.js';

const NODES = 3;
const COMPLETION = ['MessageSent', 'InboxUpdated'] as const;
/** How long a message of the large group may take to reach every member before it counts as timed out. */
const COMPLETION_TIMEOUT_MS = 60_000;
/** Filler that brings an event's data to about 200 bytes, the size of a short chat message event. */
const FILLER = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud';
/** First user id of the big group's members and of the storm's clients (their own ranges). */
const BIG_GROUP_FIRST_USER = 1;
const STORM_FIRST_USER = 100_001;

interface Params {
  clients: number;
  groupSize: number;
  throughputSeconds: number;
  inFlight: number;
  warmupSeconds: number;
  rounds: number;
  members: number;
  messages: number;
  warmupMessages: number;
  stormSockets: number;
  workers: number;
  /**
   * The groups' paced rounds: messages/s through each node (a deployment of n nodes gets n times as many), so that
   * every node carries the load the single node does. BENCH_CLUSTER_RATE sets another (a comparison: the table's run
   * leaves it unset).
   */
  perNodeRate: number;
  /** Whether BENCH_CLUSTER_RATE set perNodeRate: a comparison, which writes nothing. */
  rateSetByEnv: boolean;
}

function params(smoke: boolean): Params {
  const rate = perNodeRate(process.env.BENCH_CLUSTER_RATE);
  return {
    clients: smoke ? 30 : 3000,
    groupSize: 10,
    throughputSeconds: smoke ? 1 : 8,
    inFlight: 6,
    warmupSeconds: smoke ? 0.3 : 2,
    rounds: smoke ? 1 : 2,
    members: smoke ? 20 : 10_000,
    // Each message to 10,000 members is one send's write of 10,000 unread counts: seconds each on 2 shared cores.
    messages: smoke ? 3 : 50,
    warmupMessages: smoke ? 1 : 5,
    stormSockets: smoke ? 30 : 5000,
    workers: 2,
    perNodeRate: rate ?? (smoke ? 20 : 80),
    rateSetByEnv: rate !== undefined,
  };
}

function perNodeRate(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const rate = Number(value);
  if (!(rate > 0)) throw new Error(`BENCH_CLUSTER_RATE must be a number of messages per second above 0, not ${JSON.stringify(value)}`);
  return rate;
}

export async function cluster(options: BenchOptions): Promise<BenchmarkReport> {
  const p = params(options.smoke);
  // The table's paced rounds are at the default rate: another is a comparison and writes nothing (--setup implies --no-docs).
  if (p.rateSetByEnv && options.setups.length === 0) throw new Error('BENCH_CLUSTER_RATE is for comparisons: run it with --setup groups');
  const single = machineRedis();
  const sharded = redisClusterAvailable() ? await redisCluster() : null;
  try {
    return report(p, { single, sharded }, await measure(options, p, { single, sharded }), options.smoke);
  } finally {
    await sharded?.close();
  }
}

/** The machine's Redis, and the Redis Cluster of this run (null when redis-server is older than 7). */
interface Redises {
  readonly single: BenchRedis;
  readonly sharded: BenchRedis | null;
}

/** Row labels, which the report finds its rows by (with `,` after them the closed loop's, with ` at ` the paced rounds'). */
const LABELS = {
  one: '1 node',
  single: `${NODES} nodes on one Redis`,
  sharded: `${NODES} nodes on a Redis Cluster`,
  byGroup: `${NODES} nodes, each group on one node (one Redis)`,
  shardedByGroup: `${NODES} nodes, each group on one node (a Redis Cluster)`,
  oneOnCluster: '1 node on a Redis Cluster',
} as const;

/**
 * Where a groups round puts the clients: spread (client u on node u mod 3, so every group has members on every node), or
 * by group (a group's members all on the node its messages go through: three nodes side by side, nothing crossing
 * between them, the machine as busy as when they are spread).
 */
type Placement = 'spread' | 'by group';

/** How a groups round sends its messages: as fast as they are delivered (a few in flight), or at a fixed rate per node. */
type Load = { readonly kind: 'closed' } | { readonly kind: 'paced'; readonly perNode: number };

/** A paced round's label: the deployment and its rate. */
const pacedLabel = (label: string, nodes: number, perNode: number) =>
  `${label} at ${(perNode * nodes).toLocaleString('en-US')} messages/s${nodes > 1 ? ` (${perNode} a node)` : ''}`;

// ── measure ──

type PerNode = { efficiency: number; usPerDelivery: number; deliveries: number }[];

interface Measured {
  readonly rows: Row[];
  /** Per node of each three-node deployment's best round (by row label): its cross-node efficiency and CPU per delivery. */
  readonly perNode: Map<string, PerNode>;
  readonly notes: string[];
}

async function measure(options: BenchOptions, p: Params, { single, sharded }: Redises): Promise<Measured> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const perNode = new Map<string, PerNode>();
  log(`- starting one node and ${NODES} nodes on ${single.label}${sharded ? `, and ${chosen(options, 'groups') ? 'one node and ' : ''}${NODES} nodes on ${sharded.label}` : ''}`);
  // Each message to the large group updates 10,000 participants' rows: without autovacuum their dead versions pile up and
  // every later send reads through them, so the benchmark vacuums where autovacuum would have.
  const vacuums = !(await autovacuumOn());
  if (vacuums) notes.push('Autovacuum is off in this PostgreSQL (a CI setting), so the run vacuums (and analyzes) the participants every 10 messages of the large group and the database once the groups and messages of the storm are written, as autovacuum would.');
  const [one, oneOnCluster, threeOnOne, threeOnCluster] = await Promise.all([
    startCluster(1, single),
    sharded && chosen(options, 'groups') ? startCluster(1, sharded) : null,
    startCluster(NODES, single),
    sharded ? startCluster(NODES, sharded) : null,
  ]);
  // The large group and the storm run on the Redis Cluster when there is one.
  const three = threeOnCluster ?? threeOnOne;
  const redis = sharded ?? single;
  try {
    if (chosen(options, 'groups')) {
      // The closed loop: one node against three. The paced rounds add the controls: one node on the Redis Cluster
      // (the node count the only change), three nodes with each group on one node (the machine as busy, nothing crossing).
      const deployments: { label: string; c: BenchCluster; redis: BenchRedis; placement: Placement; pacedOnly?: boolean }[] = [
        { label: LABELS.one, c: one, redis: single, placement: 'spread' },
        { label: LABELS.byGroup, c: threeOnOne, redis: single, placement: 'by group', pacedOnly: true },
        { label: LABELS.single, c: threeOnOne, redis: single, placement: 'spread' },
        ...(threeOnCluster && oneOnCluster && sharded
          ? [
              { label: LABELS.oneOnCluster, c: oneOnCluster, redis: sharded, placement: 'spread' as const, pacedOnly: true },
              { label: LABELS.shardedByGroup, c: threeOnCluster, redis: sharded, placement: 'by group' as const, pacedOnly: true },
              { label: LABELS.sharded, c: threeOnCluster, redis: sharded, placement: 'spread' as const },
            ]
          : []),
      ];
      const loads: Load[] = [{ kind: 'closed' }, { kind: 'paced', perNode: p.perNodeRate }];
      const best = new Map<string, GroupsRound>();
      for (let round = 1; round <= p.rounds; round++) {
        for (const load of loads) {
          for (const d of deployments) {
            if (d.pacedOnly && load.kind === 'closed') continue;
            const label = load.kind === 'closed' ? d.label : pacedLabel(d.label, d.c.nodes.length, load.perNode);
            log(`- groups, ${label}${p.rounds > 1 ? `, round ${round} of ${p.rounds}` : ''}`);
            const r = await groupsRound(label, d.c, d.redis, p, load, d.placement);
            const previous = best.get(label);
            if (previous === undefined || betterRound(r, previous, load)) best.set(label, r);
          }
        }
      }
      for (const [label, r] of best) {
        rows.push(r.row);
        if (r.perNode.length > 1) perNode.set(label, r.perNode);
      }
    }
    await Promise.all([one.close(), oneOnCluster?.close()]);
    if (three !== threeOnOne) await threeOnOne.close();
    if (chosen(options, 'large group')) {
      await part('the large group', notes, async () => {
        log(`- a group of ${p.members.toLocaleString('en-US')} members on ${NODES} nodes on ${redis.label}`);
        const { row, templates, cpuMs } = await bigGroup(three, p, vacuums);
        rows.push(row);
        log('- the floor: bare ws, no database');
        const bare = await bareTarget('buffer', 'bare ws, no database');
        try {
          const floor = await bigGroupFloor(bare, p, templates);
          rows.push(floor.row);
          notes.push(
            `A group of ${p.members.toLocaleString('en-US')}: the ${NODES} nodes used ${cpuMs.toFixed(0)} ms of CPU per message together (the first to the last of every message's ` +
              `deliveries, with the sender's request), the floor's server ${floor.cpuMs.toFixed(0)} ms.`,
          );
        } finally {
          await bare.stop();
        }
      });
    }
    if (chosen(options, 'storm')) {
      await part('the reconnect storm', notes, async () => {
        log(`- reconnect storm on ${redis.label}: node ${NODES} with ${p.stormSockets.toLocaleString('en-US')} sockets killed`);
        const { row, note } = await storm(three, p, vacuums);
        rows.push(row);
        notes.push(...note);
      });
    }
    if (rows.length === 0) throw new Error(`every part failed: ${notes.join(' ')}`);
  } finally {
    await Promise.all([one.close(), oneOnCluster?.close(), threeOnOne.close(), threeOnCluster?.close()]);
  }
  return { rows, perNode, notes };
}

/** Runs one part; if it fails, says so in the notes and the run goes on with the next part (its figures missing). */
async function part(name: string, notes: string[], run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (err) {
    const why = (err as Error).message.split('\n')[0]!.slice(0, 300);
    log(`  ${name} failed: ${why}`);
    notes.push(`${name[0]!.toUpperCase()}${name.slice(1)} failed in this run, so its figures are missing: ${why}`);
  }
}

// ── 1. groups ──

interface GroupsRound {
  readonly row: Row;
  readonly perNode: PerNode;
}

async function groupsRound(label: string, c: BenchCluster, redis: BenchRedis, p: Params, load: Load, placement: Placement): Promise<GroupsRound> {
  const n = c.nodes.length;
  const groups = p.clients / p.groupSize;
  const userChannel = (u: number) => `bench-user-${u}`;
  const groupChannel = (g: number) => `bench-group-${g}`;
  // Client u is on pool u mod 3 (spread) or on the pool of its group, g mod 3 (by group); pool i on node i (or all on
  // the one node): the same client processes either way. Group g's messages go through node g mod 3 (groupMessage).
  const poolOf = (u: number) => (placement === 'spread' ? u : Math.floor(u / p.groupSize)) % NODES;
  const pools = await Promise.all(
    Array.from({ length: NODES }, (_, i) =>
      ClientPool.connect({
        label: `${label}: clients on node ${(i % n) + 1}`,
        url: c.nodes[i % n]!.wsUrl,
        clients: Array.from({ length: p.clients }, (_, u) => u)
          .filter((u) => poolOf(u) === i)
          .map((u) => ({ channels: [groupChannel(Math.floor(u / p.groupSize)), userChannel(u)] })),
        auth: { kind: 'none' },
        workers: 1,
      }),
    ),
  );
  const publishers = c.nodes.map((node) => pusherPublisher({ port: node.port, appId: SECRETS.BROADCAST_APP_ID, key: SECRETS.BROADCAST_APP_KEY, secret: SECRETS.BROADCAST_APP_SECRET, connections: p.inFlight }));
  try {
    const failed = pools.reduce((s, x) => s + x.failed, 0);
    if (failed > 0) throw new Error(`${failed} clients could not connect: ${pools.flatMap((x) => x.errors).join('; ')}`);
    const message = groupMessage(publishers, groups, p.groupSize, groupChannel, userChannel);
    await openLoop(message, 50, p.warmupSeconds * 1000);
    await sleep(500);

    const line = progress(`${label}: throughput`);
    for (const x of pools) x.pool.measure();
    const before = await Promise.all(c.nodes.map(crossNodeCounters));
    const cpu = cpuSnapshot(c.nodes, redis, pools.flatMap((x) => x.pool.pids));
    const started = nowMs();
    const tick = (sent: number) => line(`${sent} messages`);
    const loop =
      load.kind === 'closed' ? await closedLoop(message, p.inFlight, p.throughputSeconds * 1000, tick) : await openLoop(message, load.perNode * n, p.throughputSeconds * 1000, tick);
    if (loop.failed > 0) throw new Error(`${loop.failed} triggers failed: ${loop.errors.join('; ')}`);
    const expected = loop.sent * 2 * p.groupSize;
    const drained = await drain(pools.map((x) => x.pool), expected);
    const used = cpu.done();
    const after = await Promise.all(c.nodes.map(crossNodeCounters));
    const reports = await Promise.all(pools.map((x) => x.pool.report()));
    const deliveriesOf = (r: (typeof reports)[number]) => [...r.events.values()].reduce((s, h) => s + h.count, 0);
    const byPool = reports.map(deliveriesOf);
    const deliveries = byPool.reduce((s, d) => s + d, 0);
    const seconds = (Math.max(...reports.map((r) => r.lastAt)) - started) / 1000;
    const deliveriesPerSecond = deliveries / seconds;
    line(`${Math.round(deliveriesPerSecond).toLocaleString('en-US')} deliveries/s (${loop.sent} messages, ${drained ? 'all delivered' : `${expected - deliveries} missing`})`, true);
    // Deliveries per node: pool i's clients are on node i mod n.
    const byNode = c.nodes.map((_, k) => byPool.reduce((s, d, i) => s + (i % n === k ? d : 0), 0));
    const perNode = c.nodes.map((_, k) => ({
      deliveries: byNode[k]!,
      usPerDelivery: (used.nodes[k]! * seconds * 1e6) / byNode[k]!,
      efficiency: efficiency(before[k]!, after[k]!),
    }));
    const latency = new Histogram();
    for (const r of reports) for (const h of r.events.values()) latency.merge(h);
    const nodesCpu = used.nodes.reduce((s, x) => s + x, 0);
    return {
      row: {
        setup:
          load.kind === 'paced' ? label
          : n === 1 ? `${label}, ${p.clients.toLocaleString('en-US')} clients in ${groups} groups`
          : `${label}, the same clients${placement === 'spread' ? ' spread over them' : ''}`,
        parley: true,
        figures: {
          deliveriesPerSecond,
          nodesCpu,
          usPerDelivery: (nodesCpu * 1e6) / deliveriesPerSecond,
          maxNodeUsPerDelivery: Math.max(...perNode.map((x) => x.usPerDelivery)),
          redisCpu: used.redis,
          efficiency: n === 1 ? NaN : Math.min(...perNode.map((x) => x.efficiency)),
          p50: latency.percentile(50),
          p99: latency.percentile(99),
          clientsCpu: used.clients,
          otherCpu: used.other,
          lost: expected - deliveries,
        },
      },
      perNode,
    };
  } finally {
    for (const pub of publishers) pub.close();
    for (const x of pools) x.pool.close();
  }
}

/** The fastest round of the closed loop; at a fixed rate, where every round has the same deliveries/s, the one with the least CPU per delivery. */
function betterRound(a: GroupsRound, b: GroupsRound, load: Load): boolean {
  return load.kind === 'paced' ? a.row.figures.usPerDelivery! < b.row.figures.usPerDelivery! : a.row.figures.deliveriesPerSecond! > b.row.figures.deliveriesPerSecond!;
}

/** One group message as the realtime layer carries it: MessageSent to the group, InboxUpdated to each member; group g's through node g mod n (the groups in turn, so the nodes in turn). */
function groupMessage(publishers: Publisher[], groups: number, size: number, groupChannel: (g: number) => string, userChannel: (u: number) => string) {
  return async (seq: number): Promise<void> => {
    const g = seq % groups;
    const publisher = publishers[g % publishers.length]!;
    const data = JSON.stringify({ marker: marker(seq, nowMs()), text: FILLER });
    const members = Array.from({ length: size }, (_, i) => userChannel(g * size + i));
    await Promise.all([publisher.trigger(groupChannel(g), 'MessageSent', data), publisher.triggerChannels(members, 'InboxUpdated', data)]);
  };
}

/** Delivered / received over a span; 1 when nothing was received (one node: nothing to waste). */
function efficiency(before: CrossNodeCounters, after: CrossNodeCounters): number {
  const received = after.received - before.received;
  return received === 0 ? 1 : (after.delivered - before.delivered) / received;
}

/** CPU over a span (cores, averaged) of each node, the Redis servers, the client processes and everything else. */
function cpuSnapshot(nodes: readonly ParleyNode[], redis: BenchRedis, clientPids: readonly number[]) {
  const read = () => ({
    at: performance.now(),
    machine: machineBusySeconds(),
    nodes: nodes.map((node) => cpuOf(node.pid, () => nodeGone(node))),
    redis: redis.pids.reduce((s, pid) => s + cpuOf(pid, () => `a redis-server of ${redis.label}`), 0),
    clients: clientPids.reduce((s, pid) => s + cpuOf(pid, () => 'a client worker'), 0),
    driver: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  });
  const a = read();
  return {
    done() {
      const b = read();
      const span = (b.at - a.at) / 1000;
      const nodesCpu = b.nodes.map((x, i) => (x - a.nodes[i]!) / span);
      const redisCpu = (b.redis - a.redis) / span;
      const clients = (b.clients - a.clients) / span;
      const driver = (b.driver - a.driver) / span;
      const total = (b.machine - a.machine) / span;
      return { nodes: nodesCpu, redis: redisCpu, clients, other: Math.max(0, total - nodesCpu.reduce((s, x) => s + x, 0) - redisCpu - clients - driver) };
    },
  };
}

/** A process's CPU seconds; when it is gone, an error that says which process it was (`what`) instead of ENOENT. */
function cpuOf(pid: number, what: () => string): number {
  try {
    return cpuSeconds(pid);
  } catch (err) {
    throw new Error(`cannot read the CPU time of ${what()} (pid ${pid}): ${(err as Error).message}`);
  }
}

/** A node, and when it has exited, how and with what last output. */
function nodeGone(node: ParleyNode): string {
  if (node.running) return `${node.name}, still running`;
  return `${node.name}, which exited (${node.child.exitCode ?? node.child.signalCode}) with this last output:\n${node.logs()}`;
}

/** Waits until `expected` marked frames arrived over the pools, or no more arrive for 3 s. */
async function drain(pools: ClientPool[], expected: number): Promise<boolean> {
  let last = -1;
  let still = 0;
  for (;;) {
    const n = (await Promise.all(pools.map((pool) => pool.delivered()))).reduce((s, x) => s + x, 0);
    if (n >= expected) return true;
    if (n === last) {
      if (++still >= 15) return false;
    } else {
      still = 0;
      last = n;
    }
    await sleep(200);
  }
}

// ── 2. a group of 10,000 ──

interface Templates {
  message: Record<string, unknown>;
  inbox: Record<string, unknown>;
}

/**
 * Users first … first+count-1 created through the server-key API (as a host app does), spread over the nodes, named as
 * their tokens name them (ParleyNode.token): a token whose name differs from the stored one rewrites the user.
 */
async function createUsers(nodes: readonly ParleyNode[], first: number, count: number, label: string): Promise<void> {
  const line = progress(label);
  let next = first;
  let done = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, lane) => {
      while (next < first + count) {
        const id = next++;
        const r = await nodes[lane % nodes.length]!.server('PUT', `/users/${id}`, { name: `User ${id}` });
        if (r.status !== 201 && r.status !== 200) throw new Error(`PUT /users/${id}: ${r.status} ${JSON.stringify(r.body)}`);
        if (++done % 2000 === 0) line(`${done.toLocaleString('en-US')} users`);
      }
    }),
  );
  line(`${count.toLocaleString('en-US')} users created`, true);
}

async function createGroup(node: ParleyNode, owner: number, members: readonly number[], name: string): Promise<number> {
  const r = await node.request(owner, 'POST', '/groups', { name, user_ids: members }, {}, 180_000);
  if (r.status !== 201) throw new Error(`POST /groups: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return (r.body as { data: { id: number } }).data.id;
}

/** CPU milliseconds the processes used per message while `run` sent `messages` of them. */
async function cpuPerMessage<T>(pids: readonly number[], messages: number, run: () => Promise<T>): Promise<{ result: T; cpuMs: number }> {
  const total = () => pids.reduce((s, pid) => s + cpuOf(pid, () => `process ${pid}`), 0);
  const before = total();
  const result = await run();
  return { result, cpuMs: ((total() - before) * 1000) / messages };
}

async function bigGroup(c: BenchCluster, p: Params, vacuums: boolean): Promise<{ row: Row; templates: Templates; cpuMs: number }> {
  const nodes = c.nodes;
  const ids = Array.from({ length: p.members }, (_, i) => BIG_GROUP_FIRST_USER + i);
  await createUsers(nodes, BIG_GROUP_FIRST_USER, p.members, 'setup');
  const sender = ids[0]!;
  const groupId = await createGroup(nodes[0]!, sender, ids.slice(1), 'Benchmark group');
  if (vacuums) await c.vacuum();
  const tokens = await Promise.all(ids.map((id) => nodes[0]!.token(id)));
  const { pool, failed, errors } = await ClientPool.connect({
    label: 'members',
    url: nodes[0]!.wsUrl,
    clients: ids.map((id, i) => {
      const node = nodes[i % nodes.length]!;
      return { channels: [`private-chat.user.${id}`, `private-chat.conversation.${groupId}`], token: tokens[i]!, url: node.wsUrl, authUrl: `${node.api}/broadcasting/auth` };
    }),
    auth: { kind: 'endpoint', url: `${nodes[0]!.api}/broadcasting/auth` },
    workers: p.workers,
    concurrency: 20,
  });
  try {
    if (failed > 0) throw new Error(`${failed} members could not connect: ${errors.join('; ')}`);
    const send = async (seq: number) => {
      const sentAt = nowMs();
      const r = await nodes[seq % nodes.length]!.request(sender, 'POST', `/conversations/${groupId}/messages`, { body: `Message ${marker(seq, sentAt)} to the group` }, {}, COMPLETION_TIMEOUT_MS);
      if (r.status !== 201) throw new Error(`POST messages: ${r.status} ${JSON.stringify(r.body)}`);
    };
    const between = vacuums ? async (seq: number) => void (seq % 10 === 9 && (await c.vacuum('participants'))) : undefined;
    const { result: row, cpuMs } = await cpuPerMessage(
      nodes.map((node) => node.pid),
      p.warmupMessages + p.messages,
      () => timeMessages(`Parley, ${nodes.length} nodes`, pool, p, send, between),
    );
    const message = await nodes[0]!.request(sender, 'GET', `/conversations/${groupId}/messages?limit=1`);
    const inbox = await nodes[0]!.request(sender, 'GET', `/conversations/${groupId}`);
    return {
      row: { ...row, setup: `Parley, ${nodes.length} nodes: a group of ${p.members.toLocaleString('en-US')}` },
      templates: { message: (message.body as { data: Record<string, unknown>[] }).data[0]!, inbox: (inbox.body as { data: Record<string, unknown> }).data },
      cpuMs,
    };
  } finally {
    pool.close();
  }
}

/** The floor: the bare ws server delivering the same frames (one MessageSent, an InboxUpdated encoded per member) to as many clients. */
async function bigGroupFloor(t: Target, p: Params, templates: Templates): Promise<{ row: Row; cpuMs: number }> {
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
      const body = `Message ${marker(seq, nowMs())} to the group`;
      const response = await fetch(`http://127.0.0.1:${t.port}/bench/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          conversationChannel,
          userChannelPrefix: 'private-chat.user.',
          users: p.members,
          message: JSON.stringify({ ...sent, body }),
          inbox: { ...templates.inbox, last_message: { ...templates.message, body } },
        }),
      });
      await response.text();
    };
    const { result: row, cpuMs } = await cpuPerMessage([t.pid], p.warmupMessages + p.messages, () => timeMessages('bare ws', pool, p, send));
    return { row: { ...row, setup: `bare ws, no database: ${p.members.toLocaleString('en-US')} clients (the floor)`, parley: false }, cpuMs };
  } finally {
    pool.close();
  }
}

/** Messages one at a time, each timed from just before its send until every member has both events. */
async function timeMessages(label: string, pool: ClientPool, p: Params, send: (seq: number) => Promise<void>, between?: (seq: number) => Promise<void>): Promise<Row> {
  const line = progress(`${label}: messages`);
  const all: number[] = [];
  let timeouts = 0;
  pool.measure(COMPLETION);
  for (let seq = 0; seq < p.warmupMessages + p.messages; seq++) {
    if (seq === p.warmupMessages) pool.measure(COMPLETION);
    const done = pool.completed(seq, COMPLETION_TIMEOUT_MS);
    const sentAt = nowMs();
    await send(seq);
    const lastAt = await done;
    if (seq < p.warmupMessages) continue;
    if (lastAt === null) timeouts++;
    else all.push(lastAt - sentAt);
    if (all.length % 20 === 0 && all.length > 0) line(`${all.length}/${p.messages}, p50 so far ${percentile(all, 50).toFixed(1)} ms`);
    await between?.(seq); // not timed
    await sleep(5);
  }
  const latency = summarize(Histogram.of(all));
  line(`all members: p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(1)} ms${timeouts ? `, ${timeouts} timed out` : ''}`, true);
  return { setup: label, parley: true, figures: { p50: percentile(all, 50), p99: percentile(all, 99), max: percentile(all, 100), timeouts }, latency };
}

// ── 3. reconnect storm ──

async function storm(c: BenchCluster, p: Params, vacuums: boolean): Promise<{ row: Row; note: string[] }> {
  const nodes = c.nodes;
  const victim = nodes.length - 1;
  const survivors = nodes.filter((_, i) => i !== victim);
  const ids = Array.from({ length: p.stormSockets }, (_, i) => STORM_FIRST_USER + i);
  await createUsers(survivors, STORM_FIRST_USER, p.stormSockets, 'storm setup');
  const groupOf = (i: number) => Math.floor(i / p.groupSize);
  const groupIds: number[] = [];
  for (let g = 0; g * p.groupSize < ids.length; g++) {
    const members = ids.slice(g * p.groupSize, (g + 1) * p.groupSize);
    groupIds.push(await createGroup(survivors[g % survivors.length]!, members[0]!, members.slice(1), `Storm group ${g}`));
  }
  const tokens = await Promise.all(ids.map((id) => nodes[0]!.token(id)));
  const line = progress('storm clients');
  const { pool, connected, failed, errors } = await StormClients.connect(
    nodes.map((node) => ({ wsUrl: node.wsUrl, api: node.api })),
    ids.map((userId, i) => ({ userId, token: tokens[i]!, groupId: groupIds[groupOf(i)]!, home: victim })),
    p.workers,
  );
  try {
    if (failed > 0) throw new Error(`${failed} storm clients could not connect: ${errors.join('; ')}`);
    line(`${connected.toLocaleString('en-US')} connected to node ${victim + 1}, each with a sync cursor`, true);
    // What the clients must find in their sync: a message in every group, after their cursors were taken.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < groupIds.length) {
          const g = next++;
          const r = await survivors[g % survivors.length]!.request(ids[g * p.groupSize]!, 'POST', `/conversations/${groupIds[g]}/messages`, { body: `Before the storm ${g}` }, {}, 60_000);
          if (r.status !== 201) throw new Error(`POST messages: ${r.status} ${JSON.stringify(r.body)}`);
        }
      }),
    );
    // Autovacuum would have analyzed the storm's users, groups and messages by now: without statistics the
    // planner took the messages table for the large group's hundred rows and hydrated each sync's message with a
    // merge join over the whole users index (6-8 ms a sync instead of 0.15).
    if (vacuums) await c.vacuum();
    await sleep(1000);
    const rssBefore = survivors.map((node) => rssBytes(node.pid));
    const peak = [...rssBefore];
    const sampler = setInterval(() => survivors.forEach((node, i) => (peak[i] = Math.max(peak[i]!, rssBytes(node.pid)))), 20);
    const cpu = survivors.map((node) => cpuOf(node.pid, () => nodeGone(node)));
    const killedAt = nowMs();
    nodes[victim]!.kill();
    let r = await pool.report();
    const deadline = killedAt + 120_000;
    while (r.synced < connected && nowMs() < deadline) {
      await sleep(250);
      r = await pool.report();
      line(`${((nowMs() - killedAt) / 1000).toFixed(1)} s: ${r.resubscribed.toLocaleString('en-US')} resubscribed, ${r.synced.toLocaleString('en-US')} synced`);
    }
    clearInterval(sampler);
    // BENCH_NODE_LOGS=<dir>: what each surviving node wrote (the end of it), to see what a 5xx was.
    if (process.env.BENCH_NODE_LOGS) for (const node of survivors) writeFileSync(join(process.env.BENCH_NODE_LOGS, `storm-${node.name}.log`), node.logs());
    const stormSeconds = (nowMs() - killedAt) / 1000;
    const survivorsCpu = survivors.reduce((s, node, i) => s + cpuOf(node.pid, () => nodeGone(node)) - cpu[i]!, 0) / stormSeconds;
    const synced = (r.lastSyncedAt - killedAt) / 1000;
    const resubscribed = (r.lastResubscribedAt - killedAt) / 1000;
    line(`all ${r.synced.toLocaleString('en-US')} synced ${synced.toFixed(2)} s after the kill (resubscribed after ${resubscribed.toFixed(2)} s), ${r.serverErrors} 5xx`, true);
    const note: string[] = [];
    if (r.synced < connected) note.push(`Reconnect storm: only ${r.synced} of ${connected} clients had caught up 120 s after the kill.`);
    if (r.missingMessage > 0) note.push(`Reconnect storm: ${r.missingMessage} clients' sync lacked the message posted to their group before the kill.`);
    if (r.retries > 0) note.push(`Reconnect storm: ${r.retries} reconnect attempts failed and were tried again (${r.errors.join('; ')}).`);
    const mib = (b: number) => b / 2 ** 20;
    note.push(
      `Reconnect storm: the surviving nodes' resident memory went from ${rssBefore.map((b) => mib(b).toFixed(0)).join(' and ')} MiB to a peak of ${peak.map((b) => mib(b).toFixed(0)).join(' and ')} MiB; ` +
        `they used ${survivorsCpu.toFixed(2)} cores together while taking the clients over; the catching-up syncs returned ${r.changes.toLocaleString('en-US')} changes.`,
    );
    return {
      row: {
        setup: `reconnect storm: node ${victim + 1} with ${connected.toLocaleString('en-US')} sockets killed`,
        parley: true,
        figures: {
          resubscribedSeconds: r.synced < connected ? NaN : resubscribed,
          syncedSeconds: r.synced < connected ? NaN : synced,
          serverErrors: r.serverErrors,
          peakRssMiB: Math.max(...peak.map(mib)),
          rssGrowthMiB: Math.max(...peak.map((b, i) => mib(b - rssBefore[i]!))),
          nodesCpu: survivorsCpu,
        },
      },
      note,
    };
  } finally {
    pool.close();
  }
}

// ── report ──

/** A target of none at all (a count that must be zero). */
function none(label: string, count: number): Goal {
  return { label, target: '0', actual: String(count), score: count === 0 ? 1 : 0, met: count === 0 };
}

function report(p: Params, { single, sharded }: Redises, { rows, perNode, notes: measured }: Measured, smoke: boolean): BenchmarkReport {
  // The closed loop's rows and the paced rounds' (the same load per node).
  const closed = (label: string) => rows.find((r) => r.setup.startsWith(`${label},`));
  const paced = (label: string) => rows.find((r) => r.setup.startsWith(`${label} at `));
  const [one, onOne, onCluster] = [closed(LABELS.one), closed(LABELS.single), closed(LABELS.sharded)];
  const [pacedOne, pacedOnOne, pacedOnCluster] = [paced(LABELS.one), paced(LABELS.single), paced(LABELS.sharded)];
  const [pacedOneOnCluster, pacedByGroup, pacedByGroupOnCluster] = [paced(LABELS.oneOnCluster), paced(LABELS.byGroup), paced(LABELS.shardedByGroup)];
  // The issue's three nodes are on a Redis Cluster; on one Redis when this machine cannot run one.
  const many = onCluster ?? onOne;
  const on = (r: Row) => (r === onCluster || r === pacedOnCluster ? 'on a Redis Cluster' : 'on one Redis');
  // At the same load per node, on each kind of Redis: 1 node, 3 nodes with each group on one node, 3 nodes spread.
  const sameLoad = [
    { on: 'on one Redis', one: pacedOne, byGroup: pacedByGroup, three: pacedOnOne },
    ...(pacedOnCluster ? [{ on: 'on a Redis Cluster', one: pacedOneOnCluster, byGroup: pacedByGroupOnCluster, three: pacedOnCluster }] : []),
  ];
  const judged = sameLoad[sameLoad.length - 1]!;
  const cpu = (a: Row | undefined, b: Row | undefined) => f(a, 'usPerDelivery') / f(b, 'usPerDelivery');
  const atRate = `at ${p.perNodeRate} messages/s a node`;
  const big = rows.find((r) => r.setup.includes('a group of'));
  const floor = rows.find((r) => r.setup.includes('(the floor)'));
  const stormRow = rows.find((r) => r.setup.startsWith('reconnect storm'));
  const f = (r: Row | undefined, key: string) => r?.figures[key] ?? NaN;
  const redis = sharded ?? single;
  const notes = [
    `Each node is a process of its own (node src/main.ts) on one PostgreSQL database. The large group and the reconnect storm ran on ${redis.label}.` +
      (sharded ? '' : ' redis-server is older than 7 here, so no Redis Cluster was measured.'),
  ];
  for (const [label, nodes] of perNode) {
    notes.push(
      `Per node, ${label} (best round): cross-node efficiency ${nodes.map((x) => x.efficiency.toFixed(3)).join(', ')}; CPU per delivery ${nodes.map((x) => `${x.usPerDelivery.toFixed(1)} µs`).join(', ')}; deliveries ${nodes.map((x) => x.deliveries.toLocaleString('en-US')).join(', ')}.`,
    );
  }
  // The groups' rows (those with deliveries lost or not).
  for (const r of rows.filter((x) => x.figures.lost !== undefined)) {
    if (r.figures.lost! > 0) notes.push(`${r.setup}: ${r.figures.lost} deliveries missing after the drain.`);
    if (r.figures.otherCpu! > 0.15) notes.push(`${r.setup}: other processes on the machine used ${r.figures.otherCpu!.toFixed(2)} cores during its best round, so its figures are lower than on a quiet machine.`);
  }
  for (const r of [big, floor]) if (r && r.figures.timeouts! > 0) notes.push(`${r.setup}: ${r.figures.timeouts} messages did not reach every member within ${COMPLETION_TIMEOUT_MS / 1000} s.`);
  notes.push(...measured);
  const members = p.members.toLocaleString('en-US');
  return {
    benchmark: 'cluster',
    title: `Cluster: 1 and ${NODES} Parley nodes on one database, on one Redis${sharded ? ' and on a Redis Cluster' : ''}`,
    smoke,
    parameters: {
      nodes: `1 on ${single.label}, then ${NODES} (processes of their own) on it${sharded ? `, then 1 (paced rounds) and ${NODES} on ${sharded.label}` : ''}`,
      groups: `${p.clients.toLocaleString('en-US')} clients in ${p.clients / p.groupSize} groups of ${p.groupSize}, client u on node u mod ${NODES} (spread) or on node g mod ${NODES} with its group g (each group on one node); each on its group's channel and its own`,
      'group message': `MessageSent to the group's channel and InboxUpdated to its ${p.groupSize} members' channels (Pusher HTTP API, the nodes in turn): ${2 * p.groupSize} deliveries`,
      'throughput phase': `${p.throughputSeconds} s, ${p.inFlight} messages in flight (the closed loop), then ${p.perNodeRate} messages/s a node${p.rateSetByEnv ? ' (BENCH_CLUSTER_RATE)' : ''} (the same load per node: the closed loop's best round shows the most deliveries/s, a paced one the least CPU per delivery); ${p.rounds} round(s), the setups taking turns`,
      'large group': `${members} members spread over the ${NODES} nodes, both channels authorized through /broadcasting/auth; ${p.messages} messages (after ${p.warmupMessages}) one at a time, posted to the nodes in turn`,
      'large group and storm on': redis.label,
      'reconnect storm': `${p.stormSockets.toLocaleString('en-US')} chat clients (groups of ${p.groupSize}) on node ${NODES}, killed with SIGKILL; the clients reconnect at once to the other nodes, subscribe both channels and GET /sync from their cursor`,
      'client processes': `${NODES} (groups), ${p.workers} (large group, storm)`,
    },
    columns: [
      { key: 'deliveriesPerSecond', label: 'deliveries/s' },
      { key: 'nodesCpu', label: 'nodes CPU' },
      { key: 'usPerDelivery', label: 'nodes µs/delivery' },
      { key: 'maxNodeUsPerDelivery', label: 'max node µs/delivery' },
      { key: 'redisCpu', label: 'Redis CPU' },
      { key: 'efficiency', label: 'cross-node efficiency (min node)' },
      { key: 'p50', label: 'p50 ms' },
      { key: 'p99', label: 'p99 ms' },
      { key: 'resubscribedSeconds', label: 'all resubscribed s' },
      { key: 'syncedSeconds', label: 'all synced s' },
      { key: 'serverErrors', label: '5xx' },
      { key: 'peakRssMiB', label: 'survivor peak RSS MiB' },
      { key: 'otherCpu', label: 'other CPU' },
    ],
    rows,
    comparisons: [
      ...[onOne, onCluster].filter((r): r is Row => r !== undefined).flatMap((r) => [
        { label: `deliveries/s, ${NODES} nodes ${on(r)} / 1 node on one Redis (the closed loop)`, value: f(r, 'deliveriesPerSecond') / f(one, 'deliveriesPerSecond') },
        { label: `nodes' CPU per delivery, ${NODES} nodes ${on(r)} / 1 node on one Redis (the closed loop)`, value: cpu(r, one) },
      ]),
      ...sameLoad.flatMap((x) => [
        { label: `nodes' CPU per delivery ${atRate} ${x.on}, ${NODES} nodes / 1 node`, value: cpu(x.three, x.one) },
        { label: `nodes' CPU per delivery ${atRate} ${x.on}, a busier machine: ${NODES} nodes, each group on one node / 1 node`, value: cpu(x.byGroup, x.one) },
        { label: `nodes' CPU per delivery ${atRate} ${x.on}, what crosses between nodes: ${NODES} nodes spread / each group on one node`, value: cpu(x.three, x.byGroup) },
      ]),
      { label: `nodes' CPU per delivery ${atRate}, 1 node on a Redis Cluster / on one Redis (the Cluster's own cost)`, value: cpu(pacedOneOnCluster, pacedOne) },
      { label: `group of ${members}: p99, Parley / the bare ws floor`, value: f(big, 'p99') / f(floor, 'p99') },
      { label: `group of ${members}: p50, Parley / the bare ws floor`, value: f(big, 'p50') / f(floor, 'p50') },
    ].filter((c) => Number.isFinite(c.value)),
    targets: [
      ...(many ? [goal(`cross-node efficiency at ${NODES} nodes ${on(many)} (the least efficient node)`, '≥ 0.95', f(many, 'efficiency'), 0.95, 'at least')] : []),
      ...(judged.one && judged.three
        ? [goal(`nodes' CPU per delivery does not grow with the node count (${atRate} ${judged.on}: ${NODES} nodes / 1 node)`, '≤ 1.00×', cpu(judged.three, judged.one), 1, 'at most', '×')]
        : []),
      ...(big && floor ? [goal(`group of ${members}: p99 until every member has both events, Parley / the floor`, '≤ 1.2×', f(big, 'p99') / f(floor, 'p99'), 1.2, 'at most', '×')] : []),
      ...(stormRow ? [goal(`reconnect storm: ${p.stormSockets.toLocaleString('en-US')} sockets resubscribed and synced after their node was killed`, '≤ 10 s', f(stormRow, 'syncedSeconds'), 10, 'at most', ' s')] : []),
      ...(stormRow ? [none('reconnect storm: 5xx answers while the clients move', f(stormRow, 'serverErrors'))] : []),
    ],
    notes,
    charts: {
      bars: [
        {
          file: 'cluster-throughput.svg',
          title: `Group messages: deliveries per second, 1 node and ${NODES} nodes (${p.clients.toLocaleString('en-US')} clients)`,
          unit: 'deliveries/s',
          bars: [one, onOne, onCluster].filter((r): r is Row => r !== undefined).map((r) => ({ label: r.setup, value: r.figures.deliveriesPerSecond!, highlight: r === many })),
        },
      ],
      latency: big && floor
        ? [
            {
              file: 'cluster-large-group.svg',
              title: `A group of ${members} on ${NODES} nodes: POST → every member has MessageSent and InboxUpdated`,
              series: [big, floor].map((r) => ({ label: r.setup, curve: r.latency!.curve })),
            },
          ]
        : [],
    },
  };
}
