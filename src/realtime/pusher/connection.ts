// One client connection: its socket id, the channels it is subscribed to, and a send that refuses
// to buffer without bound. Everything that writes to or closes a socket goes through here.

import { randomInt } from 'node:crypto';
import { WebSocket } from 'ws';
import { PusherErrorCode, type PusherError } from './errors.js';

/** How long a server-initiated close may wait for the client's close frame before the TCP socket is destroyed. */
const CLOSE_GRACE_MS = 3_000;
/** WebSocket close reasons are limited to 123 bytes. */
const MAX_REASON_BYTES = 123;

/** The part of ws's WebSocket that its own Sender writes to: the TCP socket (ws keeps it in `_socket`). */
interface SocketHolder {
  readonly _socket?: { cork(): void; uncork(): void; write(chunk: Buffer): boolean };
}

/**
 * Complete WebSocket frames by payload: a Buffer given to send is one frame for many sockets (a publish), so
 * its frame (header and payload; a server's frames are not masked) is built by the first send and the same
 * bytes are written to every other socket, with none of ws's per-socket framing. ws writes each of its own
 * frames whole and at once (no compression here), so frames written beside it never interleave with its own.
 */
const wireFrames = new WeakMap<Buffer, Buffer>();

/** One unfragmented text frame, as RFC 6455 §5.2 lays it out for a server. */
export function textFrame(payload: Buffer): Buffer {
  const n = payload.length;
  const header = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + n);
  frame[0] = 0x81; // FIN, opcode 1 (text)
  if (n < 126) {
    frame[1] = n;
  } else if (n < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    frame.writeUInt32BE(n >>> 0, 6);
  }
  payload.copy(frame, header);
  return frame;
}

function wireFrame(payload: Buffer): Buffer {
  let frame = wireFrames.get(payload);
  if (frame === undefined) {
    frame = textFrame(payload);
    wireFrames.set(payload, frame);
  }
  return frame;
}

/**
 * Frames bound for one socket within one turn of the event loop leave in one write. A socket is corked at its
 * first frame and uncorked when the loop turns (setImmediate, after the I/O callbacks of this turn), or at the
 * end of batchSends for work that wants its frames out at once: a batch_events of ten events to one channel,
 * or the events of many requests handled in the same turn under load, cost a subscriber one syscall, not one
 * each. Frames of a socket keep their order; a frame waits at most until the loop turns.
 */
let batchDepth = 0;
const corked: Connection[] = [];
let flushScheduled = false;

function uncorkAll(): void {
  for (const conn of corked) conn.uncork();
  corked.length = 0;
}

function flushAtTurn(): void {
  flushScheduled = false;
  uncorkAll();
}

/** Runs fn (synchronous sends) with the sockets it writes to corked, then writes each socket's frames at once. */
export function batchSends<T>(fn: () => T): T {
  batchDepth++;
  try {
    return fn();
  } finally {
    if (--batchDepth === 0) uncorkAll();
  }
}

/** "<n>.<n>", two random positive integers, as pusher-js and the auth endpoint expect. */
export function newSocketId(): string {
  return `${randomInt(1, 1_000_000_000)}.${randomInt(1, 1_000_000_000)}`;
}

export class Connection {
  readonly id: string;
  /** Channels this connection is subscribed to; maintained by the ChannelRegistry. */
  readonly channels = new Set<string>();
  /** The user this socket signed in as with pusher:signin, if it did. */
  signedInUserId: string | undefined;
  /** The user_info of that sign-in's user_data: this socket's member info on presence channels joined without channel_data. */
  signedInUserInfo: unknown;
  private readonly ws: WebSocket;
  /** Client events sent in the current one-second window (a fixed window: cheap, and exact enough for abuse). */
  private clientEventWindowStart = 0;
  private clientEventCount = 0;
  private readonly maxBufferedBytes: number;
  private killTimer: NodeJS.Timeout | undefined;
  private isCorked = false;

  constructor(id: string, ws: WebSocket, maxBufferedBytes: number) {
    this.id = id;
    this.ws = ws;
    this.maxBufferedBytes = maxBufferedBytes;
    ws.once('close', () => clearTimeout(this.killTimer));
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /**
   * Sends one text frame. A Buffer is sent as-is (text opcode), so one encoded frame can be shared
   * by every subscriber: its WebSocket frame is built once and the same bytes go to each socket. A client that does not read fast enough is disconnected with 4100 (pusher-js
   * backs off and reconnects, then recovers over HTTP) instead of growing our memory. Returns false
   * when nothing was sent.
   */
  send(frame: string | Buffer): boolean {
    if (!this.isOpen) return false;
    if (this.ws.bufferedAmount > this.maxBufferedBytes) {
      this.close(PusherErrorCode.OverCapacity, 'Over capacity: client is not reading its messages');
      return false;
    }
    if (!this.isCorked) this.cork();
    const socket = typeof frame === 'string' ? undefined : (this.ws as unknown as SocketHolder)._socket;
    if (socket !== undefined) socket.write(wireFrame(frame as Buffer));
    else this.ws.send(frame, { binary: false });
    return true;
  }

  private cork(): void {
    const socket = (this.ws as unknown as SocketHolder)._socket;
    if (socket === undefined) return;
    socket.cork();
    this.isCorked = true;
    corked.push(this);
    if (batchDepth === 0 && !flushScheduled) {
      flushScheduled = true;
      setImmediate(flushAtTurn);
    }
  }

  /** Writes what was sent since the socket was corked (one writev). */
  uncork(): void {
    if (!this.isCorked) return;
    this.isCorked = false;
    (this.ws as unknown as SocketHolder)._socket?.uncork();
  }

  /** A WebSocket-level ping: every WebSocket library answers it with a pong by itself. */
  ping(): void {
    if (this.isOpen) this.ws.ping();
  }

  /** Counts one client event; false when this second's allowance is spent. */
  takeClientEvent(perSecond: number, now = performance.now()): boolean {
    if (now - this.clientEventWindowStart >= 1000) {
      this.clientEventWindowStart = now;
      this.clientEventCount = 0;
    }
    return ++this.clientEventCount <= perSecond;
  }

  /** Reports an error as one pusher:error frame; fatal codes (4000–4299) also close the socket. */
  fail(error: PusherError): void {
    this.send(error.toFrame());
    if (error.fatal) this.close(error.code, error.message);
  }

  close(code: number, reason = ''): void {
    const state = this.ws.readyState;
    if (state === WebSocket.CLOSED || this.killTimer !== undefined) return;
    if (state === WebSocket.OPEN) this.ws.close(code, truncateReason(reason));
    // A client that never answers the close frame (or whose buffer is stuck) must not hold the socket.
    this.killTimer = setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS);
    this.killTimer.unref();
  }
}

function truncateReason(reason: string): string {
  let out = reason;
  while (Buffer.byteLength(out) > MAX_REASON_BYTES) out = out.slice(0, -1);
  return out;
}
