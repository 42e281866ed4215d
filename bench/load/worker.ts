// A load generator process: many Pusher-protocol clients over real sockets (`ws`), driven over IPC by the
// benchmark driver (bench/lib/clients.ts). It connects and subscribes its clients, answers pusher:ping, and
// for every frame that carries a benchmark marker (see protocol.ts) records the latency from the send time in
// the marker to its arrival. Frames are not JSON-parsed on that path: the clients must cost the shared CPU as
// little as possible.
import { createHmac } from 'node:crypto';
import { WebSocket, type RawData } from 'ws';
import { nowMs } from '../lib/clock.js';
import { Histogram } from '../lib/stats.js';
import type { AuthMode, ClientSpec, ConnectCommand, DriverMessage, WorkerMessage } from './protocol.js';

const send = (message: WorkerMessage): void => {
  process.send?.(message);
};

const PONG = '{"event":"pusher:pong","data":"{}"}';

interface Client {
  readonly index: number;
  readonly ws: WebSocket;
  /** Completion tracking: seq → bit mask of the completion events seen by this client. */
  seen?: Map<number, number>;
}

const clients: Client[] = [];
let measuring = false;
let events = new Map<string, Histogram>();
let firstAt = Infinity;
let lastAt = -Infinity;
let closed: Record<string, number> = {};
let completion: readonly string[] | undefined;
/** seq → clients of this worker that have every completion event, and when the last of them got it. */
let progress = new Map<number, { clients: number; lastAt: number }>();

function onData(client: Client, text: string, at: number): void {
  const m = text.indexOf('~b~');
  if (m === -1) return;
  const s1 = text.indexOf('~', m + 3);
  const s2 = text.indexOf('~', s1 + 1);
  const seq = Number(text.slice(m + 3, s1));
  const sentAt = Number(text.slice(s1 + 1, s2));
  // Frames from Parley, Soketi and the bare server all start with {"event":"<name>"
  const name = text.startsWith('{"event":"') ? text.slice(10, text.indexOf('"', 10)) : eventOf(text);
  let h = events.get(name);
  if (h === undefined) events.set(name, (h = new Histogram()));
  h.record(at - sentAt);
  if (at < firstAt) firstAt = at;
  if (at > lastAt) lastAt = at;
  if (completion === undefined) return;
  const bit = completion.indexOf(name);
  if (bit === -1) return;
  const seen = (client.seen ??= new Map());
  const mask = (seen.get(seq) ?? 0) | (1 << bit);
  seen.set(seq, mask);
  if (mask !== (1 << completion.length) - 1) return;
  seen.delete(seq);
  let p = progress.get(seq);
  if (p === undefined) progress.set(seq, (p = { clients: 0, lastAt: at }));
  p.clients++;
  if (at > p.lastAt) p.lastAt = at;
  if (p.clients === clients.length) {
    progress.delete(seq);
    send({ type: 'complete', seq, clients: p.clients, lastAt: p.lastAt });
  }
}

function eventOf(text: string): string {
  try {
    return String((JSON.parse(text) as { event?: unknown }).event);
  } catch {
    return '?';
  }
}

/** Opens one client, subscribes it to its channels and resolves when every subscription succeeded. */
function open(command: ConnectCommand, spec: ClientSpec, index: number): Promise<Client> {
  return new Promise((resolve, reject) => {
    const localAddress = command.localAddresses[index % command.localAddresses.length];
    // No UTF-8 validation of received text: the servers under test are trusted, and the clients should cost the shared CPU as little as they can.
    const ws = new WebSocket(spec.url ?? command.url, { localAddress, perMessageDeflate: false, skipUTF8Validation: true, handshakeTimeout: command.timeoutMs });
    const client: Client = { index, ws };
    let pending = new Set(spec.channels);
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.terminate();
      reject(new Error(why));
    };
    const timer = setTimeout(() => fail(`timed out (${pending.size} subscriptions pending)`), command.timeoutMs);
    ws.on('error', (err) => fail(err.message));
    ws.on('close', (code) => {
      if (!settled) fail(`closed with ${code} while connecting`);
      else if (measuring) closed[code] = (closed[code] ?? 0) + 1;
    });
    ws.on('message', (data: RawData) => {
      const at = nowMs();
      const text = (data as Buffer).toString('latin1');
      if (text.startsWith('{"event":"pusher')) {
        control(text);
        return;
      }
      onData(client, text, at);
    });

    function control(text: string): void {
      const frame = JSON.parse(text) as { event: string; channel?: string; data?: unknown };
      switch (frame.event) {
        case 'pusher:ping':
          ws.send(PONG);
          return;
        case 'pusher:connection_established': {
          const { socket_id: socketId } = JSON.parse((frame.data as string | undefined) ?? '{}') as { socket_id: string };
          if (pending.size === 0) return done();
          for (const channel of spec.channels) {
            authorize(command.auth, spec, socketId, channel).then(
              (auth) => ws.send(JSON.stringify({ event: 'pusher:subscribe', data: auth === undefined ? { channel } : { channel, auth } })),
              (err: Error) => fail(`auth ${channel}: ${err.message}`),
            );
          }
          return;
        }
        case 'pusher_internal:subscription_succeeded':
          pending.delete(frame.channel ?? '');
          if (pending.size === 0) done();
          return;
        case 'pusher:subscription_error':
          fail(`subscription_error ${frame.channel}: ${JSON.stringify(frame.data)}`);
          return;
        case 'pusher:error':
          fail(`pusher:error ${JSON.stringify(frame.data)}`);
          return;
      }
    }

    function done(): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      pending = new Set();
      resolve(client);
    }
  });
}

async function authorize(mode: AuthMode, spec: ClientSpec, socketId: string, channel: string): Promise<string | undefined> {
  if (!channel.startsWith('private-') && !channel.startsWith('presence-')) return undefined;
  switch (mode.kind) {
    case 'none':
      return undefined;
    case 'sign':
      return `${mode.appKey}:${createHmac('sha256', mode.appSecret).update(`${socketId}:${channel}`).digest('hex')}`;
    case 'endpoint': {
      const response = await fetch(spec.authUrl ?? mode.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${spec.token ?? ''}`, 'content-type': 'application/json' },
        body: JSON.stringify({ socket_id: socketId, channel_name: channel }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`HTTP ${response.status} ${text.slice(0, 200)}`);
      return (JSON.parse(text) as { auth: string }).auth;
    }
  }
}

async function connectAll(command: ConnectCommand): Promise<void> {
  const started = nowMs();
  let next = 0;
  let failed = 0;
  const errors: string[] = [];
  const ticker = setInterval(() => send({ type: 'progress', connected: clients.length, failed }), 500);
  async function lane(): Promise<void> {
    while (next < command.clients.length) {
      const index = next++;
      try {
        clients.push(await open(command, command.clients[index]!, index));
      } catch (err) {
        failed++;
        if (errors.length < 5) errors.push((err as Error).message);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(command.concurrency, command.clients.length) }, lane));
  clearInterval(ticker);
  send({ type: 'connected', connected: clients.length, failed, errors, ms: nowMs() - started });
}

function report(): void {
  const figures: Record<string, { count: number; latency: ReturnType<Histogram['toJSON']> }> = {};
  for (const [name, h] of events) figures[name] = { count: h.count, latency: h.toJSON() };
  const open = clients.filter((c) => c.ws.readyState === WebSocket.OPEN).length;
  send({ type: 'report', events: figures, firstAt, lastAt, closed, open });
}

process.on('message', (message: DriverMessage) => {
  switch (message.type) {
    case 'connect':
      void connectAll(message);
      return;
    case 'measure':
      measuring = true;
      events = new Map();
      firstAt = Infinity;
      lastAt = -Infinity;
      closed = {};
      completion = message.completion;
      progress = new Map();
      for (const client of clients) client.seen = undefined;
      return;
    case 'report':
      report();
      return;
    case 'close':
      measuring = false;
      for (const client of clients) client.ws.terminate();
      setTimeout(() => process.exit(0), 50);
      return;
  }
});
// The driver going away ends the worker too: never leave sockets behind.
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
