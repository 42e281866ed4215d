// A load generator process for the cluster benchmark's reconnect storm: chat clients that behave as a web client
// does when its node dies. Each connects to its home node, subscribes to its own channel and its group's (both
// authorized through that node's /broadcasting/auth), and takes a sync cursor (GET /sync). When its socket
// closes, it reconnects at once to another node (one it has not seen die; a load balancer taking the dead node
// out of rotation), subscribes again there and catches up with GET /sync?since=<cursor>, paging until has_more
// is false. Driven over IPC by bench/benchmarks/cluster.ts.
import { Agent, request as httpRequest } from 'node:http';
import { WebSocket } from 'ws';
import { nowMs } from '../lib/clock.js';

export interface StormNode {
  readonly wsUrl: string;
  /** http://host:port/api/chat/v1 */
  readonly api: string;
}

export interface StormClient {
  readonly userId: number;
  readonly token: string;
  readonly groupId: number;
  /** Index into the nodes of the node it connects to first. */
  readonly home: number;
}

export type StormCommand =
  | { readonly type: 'connect'; readonly nodes: readonly StormNode[]; readonly clients: readonly StormClient[]; readonly concurrency: number }
  | { readonly type: 'report' }
  | { readonly type: 'close' };

export interface StormReport {
  readonly type: 'report';
  readonly clients: number;
  /** Clients whose first socket closed (the storm reached them), and when the first closed. */
  readonly away: number;
  readonly firstAwayAt: number;
  /** Clients subscribed again on another node, and when the last one was. */
  readonly resubscribed: number;
  readonly lastResubscribedAt: number;
  /** Clients caught up (sync paged to the end), and when the last one was. */
  readonly synced: number;
  readonly lastSyncedAt: number;
  /** Changes the catching-up syncs returned, and the clients whose sync lacked a MessageSent of their group. */
  readonly changes: number;
  readonly missingMessage: number;
  /** HTTP answers ≥ 500 during the storm (auth and sync), and attempts that failed and were tried again. */
  readonly serverErrors: number;
  readonly retries: number;
  readonly errors: string[];
}

export type StormMessage = { readonly type: 'ready' } | { readonly type: 'connected'; readonly connected: number; readonly failed: number; readonly errors: string[] } | StormReport;

interface Client {
  readonly spec: StormClient;
  cursor?: string;
  /** Nodes this client saw die. */
  readonly dead: Set<number>;
  ws?: WebSocket;
  awayAt?: number;
  resubscribedAt?: number;
  syncedAt?: number;
}

const send = (message: StormMessage): void => void process.send?.(message);
const PONG = '{"event":"pusher:pong","data":"{}"}';

let nodes: readonly StormNode[] = [];
const clients: Client[] = [];
let closing = false;
const stats = { changes: 0, missingMessage: 0, serverErrors: 0, retries: 0, errors: [] as string[] };

function noteError(why: string): void {
  if (stats.errors.length < 5) stats.errors.push(why);
}

/**
 * The clients' HTTP requests reach a node over a bounded set of keep-alive connections, as they do behind a load
 * balancer that keeps upstream connections open (nginx's `keepalive`): a node is not handed a new TCP connection
 * and HTTP parser per request. node:http rather than fetch: undici's per-request streams, signals and pool cost
 * the generator more CPU than a reconnecting client costs a node, on the cores the nodes need.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function api(client: Client, node: number, method: string, path: string, body?: unknown): Promise<unknown> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${nodes[node]!.api}${path}`,
      {
        method,
        agent,
        timeout: 30_000,
        headers: { authorization: `Bearer ${client.spec.token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString();
          if (status >= 500 && client.awayAt !== undefined) stats.serverErrors++;
          if (status !== 200) reject(new Error(`${method} ${path}: HTTP ${status} ${text.slice(0, 200)}`));
          else {
            try {
              resolve(JSON.parse(text));
            } catch (err) {
              reject(err as Error);
            }
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens a socket to `node` and subscribes the client's two channels; resolves once both are subscribed. */
function connect(client: Client, node: number): Promise<void> {
  const channels = [`private-chat.user.${client.spec.userId}`, `private-chat.conversation.${client.spec.groupId}`];
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(nodes[node]!.wsUrl, { perMessageDeflate: false, skipUTF8Validation: true, handshakeTimeout: 30_000 });
    let pending = new Set(channels);
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.terminate();
      reject(new Error(why));
    };
    const timer = setTimeout(() => fail(`timed out on node ${node + 1} (${pending.size} subscriptions pending)`), 30_000);
    ws.on('error', (err) => fail(err.message));
    ws.on('close', () => {
      if (!settled) fail(`closed on node ${node + 1} while connecting`);
      else if (!closing && client.ws === ws) lost(client, node);
    });
    ws.on('message', (data) => {
      const text = (data as Buffer).toString('latin1');
      if (!text.startsWith('{"event":"pusher')) return; // chat events: the storm is measured by the syncs
      const frame = JSON.parse(text) as { event: string; channel?: string; data?: string };
      if (frame.event === 'pusher:ping') ws.send(PONG);
      else if (frame.event === 'pusher:connection_established') {
        const { socket_id: socketId } = JSON.parse(frame.data ?? '{}') as { socket_id: string };
        for (const channel of channels) {
          api(client, node, 'POST', '/broadcasting/auth', { socket_id: socketId, channel_name: channel }).then(
            (answer) => ws.send(JSON.stringify({ event: 'pusher:subscribe', data: { channel, auth: (answer as { auth: string }).auth } })),
            (err: Error) => fail(`auth ${channel}: ${err.message}`),
          );
        }
      } else if (frame.event === 'pusher_internal:subscription_succeeded') {
        pending.delete(frame.channel ?? '');
        if (pending.size === 0 && !settled) {
          settled = true;
          clearTimeout(timer);
          pending = new Set();
          client.ws = ws;
          resolve();
        }
      } else if (frame.event === 'pusher:subscription_error' || frame.event === 'pusher:error') fail(`${frame.event} ${JSON.stringify(frame.data)}`);
    });
  });
}

/** The client's socket on `node` closed: reconnect elsewhere, subscribe, catch up. */
function lost(client: Client, node: number): void {
  client.dead.add(node);
  client.awayAt ??= nowMs();
  void recover(client);
}

async function recover(client: Client): Promise<void> {
  for (;;) {
    const alive = nodes.map((_, i) => i).filter((i) => !client.dead.has(i));
    if (alive.length === 0 || closing) return noteError(`user ${client.spec.userId}: no node left`);
    const node = alive[Math.floor(Math.random() * alive.length)]!;
    try {
      await connect(client, node);
      client.resubscribedAt = nowMs();
      await catchUp(client, node);
      client.syncedAt = nowMs();
      return;
    } catch (err) {
      stats.retries++;
      noteError(`user ${client.spec.userId}: ${(err as Error).message}`);
      if (/ECONNREFUSED|closed on node/.test((err as Error).message)) client.dead.add(node);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** GET /sync from the cursor until has_more is false; the group's message sent while away must be among the changes. */
async function catchUp(client: Client, node: number): Promise<void> {
  let cursor = client.cursor!;
  let sawMessage = false;
  for (;;) {
    const answer = (await api(client, node, 'GET', `/sync?since=${encodeURIComponent(cursor)}&limit=500`)) as {
      data: { changes: { type: string; conversation_id: number | null }[]; cursor: string; has_more: boolean };
    };
    stats.changes += answer.data.changes.length;
    sawMessage ||= answer.data.changes.some((c) => c.type === 'MessageSent' && c.conversation_id === client.spec.groupId);
    cursor = answer.data.cursor;
    if (!answer.data.has_more) break;
  }
  client.cursor = cursor;
  if (!sawMessage) stats.missingMessage++;
}

async function connectAll(clientsToOpen: readonly StormClient[], concurrency: number): Promise<void> {
  let next = 0;
  let failed = 0;
  const errors: string[] = [];
  async function lane(): Promise<void> {
    while (next < clientsToOpen.length) {
      const spec = clientsToOpen[next++]!;
      const client: Client = { spec, dead: new Set() };
      try {
        await connect(client, spec.home);
        client.cursor = ((await api(client, spec.home, 'GET', '/sync')) as { data: { cursor: string } }).data.cursor;
        clients.push(client);
      } catch (err) {
        failed++;
        if (errors.length < 5) errors.push((err as Error).message);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, clientsToOpen.length) }, lane));
  send({ type: 'connected', connected: clients.length, failed, errors });
}

function report(): StormReport {
  const times = (pick: (c: Client) => number | undefined) => clients.map(pick).filter((t): t is number => t !== undefined);
  const away = times((c) => c.awayAt);
  const resubscribed = times((c) => c.resubscribedAt);
  const synced = times((c) => c.syncedAt);
  return {
    type: 'report',
    clients: clients.length,
    away: away.length,
    firstAwayAt: Math.min(...away),
    resubscribed: resubscribed.length,
    lastResubscribedAt: Math.max(...resubscribed),
    synced: synced.length,
    lastSyncedAt: Math.max(...synced),
    ...stats,
  };
}

process.on('message', (command: StormCommand) => {
  switch (command.type) {
    case 'connect':
      nodes = command.nodes;
      void connectAll(command.clients, command.concurrency);
      return;
    case 'report':
      send(report());
      return;
    case 'close':
      closing = true;
      for (const client of clients) client.ws?.terminate();
      setTimeout(() => process.exit(0), 50);
      return;
  }
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
