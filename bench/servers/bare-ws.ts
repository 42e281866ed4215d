// The limit of this stack: a bare `ws` broadcast server on node:http, with just enough of the Pusher
// protocol for the benchmark clients (connection_established, subscribe to public channels, ping) and an
// unsigned POST /apps/{id}/events. No signatures, no limits, no channel types, no logging, no metrics.
//
//   node --import tsx bench/servers/bare-ws.ts --port 6001 --mode string|buffer
//
// --mode string: ws.send(frame as a string) per socket, so ws encodes the string once per socket.
// --mode buffer: the frame is built once per event as a Buffer and the same bytes go to every socket.
//
// POST /bench/chat is the floor of the chat end-to-end benchmark: the deliveries of one chat message without
// a database: one MessageSent frame to the conversation channel, and to each member's own channel an
// InboxUpdated whose payload is JSON-encoded per member (each member's unread count differs), as Parley must.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';

const { values } = parseArgs({ options: { port: { type: 'string' }, mode: { type: 'string', default: 'buffer' } } });
const port = Number(values.port ?? 6001);
const mode = values.mode === 'string' ? 'string' : 'buffer';

const channels = new Map<string, Set<WebSocket>>();
let nextId = 1;

const wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: 100_000 });

wss.on('connection', (ws) => {
  const id = nextId++;
  const mine = new Set<string>();
  ws.send(JSON.stringify({ event: 'pusher:connection_established', data: JSON.stringify({ socket_id: `${id}.${id}`, activity_timeout: 120 }) }));
  ws.on('message', (data) => {
    let frame: { event?: string; data?: { channel?: string } };
    try {
      frame = JSON.parse(data.toString()) as typeof frame;
    } catch {
      return;
    }
    if (frame.event === 'pusher:ping') {
      ws.send('{"event":"pusher:pong","data":"{}"}');
    } else if (frame.event === 'pusher:subscribe' && typeof frame.data?.channel === 'string') {
      const channel = frame.data.channel;
      let set = channels.get(channel);
      if (set === undefined) channels.set(channel, (set = new Set()));
      set.add(ws);
      mine.add(channel);
      ws.send(JSON.stringify({ event: 'pusher_internal:subscription_succeeded', channel, data: '{}' }));
    }
  });
  ws.on('error', () => {});
  ws.once('close', () => {
    for (const channel of mine) {
      const set = channels.get(channel);
      set?.delete(ws);
      if (set?.size === 0) channels.delete(channel);
    }
  });
});

function broadcast(channel: string, event: string, data: string): void {
  const set = channels.get(channel);
  if (set === undefined) return;
  const frame = `{"event":${JSON.stringify(event)},"channel":${JSON.stringify(channel)},"data":${JSON.stringify(data)}}`;
  if (mode === 'string') {
    for (const ws of set) ws.send(frame);
  } else {
    const bytes = Buffer.from(frame);
    for (const ws of set) ws.send(bytes, { binary: false });
  }
}

interface ChatDelivery {
  conversationChannel: string;
  /** Members' channels are userChannelPrefix + 1 … users. */
  userChannelPrefix: string;
  users: number;
  /** The MessageSent payload, as JSON text. */
  message: string;
  /** A ConversationResource; unread_count is set per member. */
  inbox: Record<string, unknown>;
}

function chat(body: ChatDelivery): void {
  broadcast(body.conversationChannel, 'MessageSent', body.message);
  for (let id = 1; id <= body.users; id++) {
    broadcast(`${body.userChannelPrefix}${id}`, 'InboxUpdated', JSON.stringify({ ...body.inbox, unread_count: id }));
  }
}

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/bench/chat') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      chat(JSON.parse(Buffer.concat(chunks).toString()) as ChatDelivery);
      res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
    return;
  }
  if (req.method === 'POST' && req.url?.startsWith('/apps/')) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { name: string; data: string; channels?: string[]; channel?: string };
        for (const channel of body.channels ?? [body.channel!]) broadcast(channel, body.name, body.data);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
});
server.keepAliveTimeout = 60_000;
server.on('upgrade', (req, socket, head) => {
  wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
});
server.listen(port, '127.0.0.1');
