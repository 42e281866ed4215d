// Socket plumbing only: upgrade, open, message, close, error. What a frame means is decided in
// handlers.ts; what an error looks like on the wire in errors.ts.
//
// - Path /app/{key}: a wrong key is answered with pusher:error 4001 and close 4001 after the
//   upgrade, because that is how pusher-js learns not to retry. A path under /app/ that is not /app/{key}
//   gets pusher:error 4005 and close 4005; an upgrade to any other path is answered with HTTP 404.
// - Keepalive (keepalive.ts): the idle ping is a pusher:ping and a WebSocket ping together, and a WebSocket
//   pong counts as activity, so clients that rely on either keep their connection.
// - Oversize frames: a frame above maxMessageBytes gets a pusher:error 4300 naming the limit, then close 1009
//   "Message too big (limit N bytes)"; pusher-js reconnects after 1 s. To bound memory, ws's own maxPayload is
//   twice the limit: it stops reading a larger frame as soon as its length header arrives (nothing is
//   buffered) and closes with 1009 too, but without a reason (ws closes before we hear of it).
// - Binary frames are not part of the protocol: non-fatal pusher:error 4300.
// - What one client may take (limits.ts): sockets per address (one more is refused with pusher:error and close
//   4100, so pusher-js backs off), and frames per socket (text frames and WebSocket pings, a bucket of
//   maxFrameBurst refilled at maxFramesPerSecond): a frame beyond it is dropped unanswered (the first of a run
//   gets pusher:error 4301; a WebSocket ping gets no pong), and a socket that sends another burst's worth while
//   dropped is closed with 4100.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { Connection, newSocketId } from './connection.js';
import { PusherError, PusherErrorCode } from './errors.js';
import { encodeFrame } from './frames.js';
import { handleMessage, type HandlerContext } from './handlers.js';
import { Keepalive } from './keepalive.js';
import { AddressCounts, FrameAllowance, clientAddressResolver } from './limits.js';

/** Protocol versions whose frames we speak (pusher-js sends ?protocol=7). */
const MIN_PROTOCOL = 5;
const MAX_PROTOCOL = 7;

export interface PusherServerOptions {
  readonly appKey: string;
  readonly activityTimeoutSeconds: number;
  readonly pongTimeoutSeconds: number;
  readonly maxMessageBytes: number;
  readonly maxBufferedBytes: number;
  /** Open sockets on this node; one more is refused with 4100 (pusher-js backs off, then retries). */
  readonly maxConnections: number;
  /** Open sockets on this node from one client address (an IPv6 /64); one more is refused with 4100. */
  readonly maxConnectionsPerAddress: number;
  /** Proxies whose X-Forwarded-For names the client (addresses, CIDR ranges); empty: the peer is the client. */
  readonly trustedProxies: readonly string[];
  /** Frames a socket may send per second, on average, and at once (see limits.ts). */
  readonly maxFramesPerSecond: number;
  readonly maxFrameBurst: number;
  /** Origins allowed to connect (exact, or "*"); empty allows any, as do clients that send no Origin. */
  readonly allowedOrigins: readonly string[];
  readonly logger: Logger;
  readonly handlers: HandlerContext;
}

export class PusherServer {
  private readonly options: PusherServerOptions;
  private readonly wss: WebSocketServer;
  private readonly connections = new Map<string, Connection>();
  private readonly ping = encodeFrame('pusher:ping', {});
  private closing: { code: number; drained: () => void; done: Promise<void> } | undefined;
  private lastHandlerError = -Infinity;
  private handlerErrorsSuppressed = 0;
  private readonly perAddress = new AddressCounts();
  private readonly clientAddress: ReturnType<typeof clientAddressResolver>;
  /** Said once: sockets were refused for an address whose X-Forwarded-For was not trusted (a proxy not listed). */
  private proxyWarned = false;

  constructor(options: PusherServerOptions) {
    this.options = options;
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false, // we track connections ourselves, by socket id
      perMessageDeflate: false, // per-socket compression would defeat sending one shared frame
      maxPayload: options.maxMessageBytes * 2, // see the header comment
      autoPong: false, // a WebSocket ping is answered only within the socket's frame allowance
    });
    this.clientAddress = clientAddressResolver(options.trustedProxies);
  }

  /** Is this socket connected here? */
  hasConnection(socketId: string): boolean {
    return this.connections.has(socketId);
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (!path.startsWith('/app/')) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 28\r\n\r\nNo WebSocket endpoint here.\n');
      return true;
    }

    if (this.closing !== undefined) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return true;
    }
    const refusal =
      this.check(path.slice('/app/'.length), new URLSearchParams(q === -1 ? '' : url.slice(q + 1))) ?? this.checkOrigin(req.headers.origin);
    const client = this.clientAddress(req);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      if (refusal !== undefined) this.refuse(ws, refusal);
      else if (this.closing !== undefined) this.detached(ws).close(this.closing.code, 'Server is shutting down');
      else this.open(ws, client.address, client.forwarded);
    });
    return true;
  }

  /** Closes every connection with `code` and resolves once all of them are gone. Idempotent. */
  close(code: number): Promise<void> {
    if (this.closing !== undefined) return this.closing.done;
    let drained!: () => void;
    const done = new Promise<void>((resolve) => {
      drained = () => {
        this.wss.close();
        resolve();
      };
    });
    this.closing = { code, drained, done };
    if (this.connections.size === 0) drained();
    for (const conn of this.connections.values()) conn.close(code, 'Server is shutting down');
    return done;
  }

  private check(key: string, query: URLSearchParams): PusherError | undefined {
    if (key.includes('/')) return new PusherError(PusherErrorCode.PathNotFound, 'Path not found');
    if (key !== this.options.appKey) {
      return new PusherError(PusherErrorCode.AppDoesNotExist, 'Application does not exist');
    }
    const protocol = query.get('protocol');
    if (protocol === null) return undefined; // lenient: plain WebSocket clients may omit it
    if (!/^\d{1,3}$/.test(protocol)) {
      return new PusherError(PusherErrorCode.InvalidVersionFormat, 'Invalid version string format');
    }
    const version = Number(protocol);
    if (version < MIN_PROTOCOL || version > MAX_PROTOCOL) {
      return new PusherError(PusherErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version ${version}`);
    }
    return undefined;
  }

  private checkOrigin(origin: string | undefined): PusherError | undefined {
    const allowed = this.options.allowedOrigins;
    // Browsers always send Origin; other clients (servers, CLIs) may not, and are not what this guards against.
    if (allowed.length === 0 || allowed.includes('*') || origin === undefined || allowed.includes(origin)) return undefined;
    return new PusherError(PusherErrorCode.Unauthorized, 'Origin not allowed');
  }

  /**
   * Closes every socket signed in as userId with 4009 (pusher-js does not reconnect), and with `subscribed` also
   * every socket holding a subscription recorded as userId's (a chat client that never signs in). Returns how many.
   */
  terminateUser(userId: string, { subscribed = false }: { subscribed?: boolean } = {}): number {
    const { registry } = this.options.handlers;
    const owns = (conn: Connection): boolean =>
      conn.signedInUserId === userId || (subscribed && [...conn.channels].some((channel) => registry.subscriberUserId(conn, channel) === userId));
    let closed = 0;
    for (const conn of this.connections.values()) {
      if (!owns(conn)) continue;
      conn.fail(new PusherError(PusherErrorCode.Unauthorized, 'Connection terminated'));
      closed++;
    }
    return closed;
  }

  /** Logs a handler's failure at error level once a minute at most; the failures in between are counted in the next line. */
  private handlerFailed(err: unknown, socketId: string): void {
    const now = performance.now();
    if (now - this.lastHandlerError < HANDLER_ERROR_LOG_INTERVAL_MS) {
      this.handlerErrorsSuppressed++;
      return;
    }
    this.options.logger.error({ err, socketId, suppressed: this.handlerErrorsSuppressed }, 'pusher message handler failed');
    this.lastHandlerError = now;
    this.handlerErrorsSuppressed = 0;
  }

  private refuse(ws: WebSocket, error: PusherError): void {
    this.detached(ws).fail(error);
    this.options.logger.debug({ code: error.code, reason: error.message }, 'connection refused');
  }

  /** A connection that is only being turned away: never registered, never subscribed. */
  private detached(ws: WebSocket): Connection {
    ws.on('error', (err) => this.options.logger.debug({ err }, 'refused socket error'));
    return new Connection(newSocketId(), ws, this.options.maxBufferedBytes);
  }

  private open(ws: WebSocket, address: string, forwarded: boolean): void {
    const { logger, handlers } = this.options;
    if (this.connections.size >= this.options.maxConnections) {
      this.refuse(ws, new PusherError(PusherErrorCode.OverCapacity, 'Over capacity'));
      return;
    }
    if (this.perAddress.count(address) >= this.options.maxConnectionsPerAddress) {
      this.refuse(ws, new PusherError(PusherErrorCode.OverCapacity, 'Over capacity: too many connections from this address'));
      if (forwarded && !this.proxyWarned) {
        this.proxyWarned = true;
        logger.warn(
          { address, limit: this.options.maxConnectionsPerAddress },
          'sockets refused: too many from one address, whose requests carry X-Forwarded-For; if it is your proxy, list it in CHAT_TRUSTED_PROXIES',
        );
      }
      return;
    }
    let id = newSocketId();
    while (this.connections.has(id)) id = newSocketId();
    const conn = new Connection(id, ws, this.options.maxBufferedBytes);
    this.connections.set(id, conn);
    this.perAddress.add(address);
    const allowance = new FrameAllowance(this.options.maxFramesPerSecond, this.options.maxFrameBurst);
    /** Counts one inbound frame; false when it is to be dropped (the client is told once per run, or closed). */
    const allowed = (): boolean => {
      const taken = allowance.take();
      if (taken.verdict === 'ok') return true;
      if (taken.verdict === 'close') {
        conn.close(PusherErrorCode.OverCapacity, 'Over capacity: too many messages');
      } else if (taken.first) {
        const { maxFramesPerSecond: perSecond, maxFrameBurst: burst } = this.options;
        conn.fail(new PusherError(PusherErrorCode.ClientEventRejected, `Rate limit exceeded (${perSecond} messages a second, ${burst} at once); messages dropped`));
      }
      return false;
    };

    const keepalive = new Keepalive(
      this.options.activityTimeoutSeconds * 1000,
      this.options.pongTimeoutSeconds * 1000,
      () => {
        conn.send(this.ping);
        conn.ping();
      },
      () => conn.fail(new PusherError(PusherErrorCode.PongNotReceived, 'Pong reply not received')),
    );
    const touch = (): void => keepalive.touch();

    ws.on('message', (data: RawData, isBinary: boolean) => {
      keepalive.touch();
      if (!allowed()) return;
      if (byteLength(data) > this.options.maxMessageBytes) {
        const reason = `Message too big (limit ${this.options.maxMessageBytes} bytes)`;
        conn.fail(new PusherError(PusherErrorCode.Generic, reason));
        conn.close(MESSAGE_TOO_BIG, reason);
        return;
      }
      if (isBinary) {
        conn.fail(new PusherError(PusherErrorCode.Generic, 'Binary frames are not supported'));
        return;
      }
      try {
        handleMessage(handlers, conn, toText(data));
      } catch (err) {
        // A bug in a handler must cost one frame, not the process; and, as a client can repeat the frame that
        // hits it, at most one error line a minute, not one per frame.
        this.handlerFailed(err, id);
        conn.fail(new PusherError(PusherErrorCode.Generic, 'Internal error'));
      }
    });
    // WebSocket-level pings/pongs are traffic too; a ping is answered (autoPong is off) within the allowance.
    ws.on('ping', (data: Buffer) => {
      keepalive.touch();
      if (allowed() && conn.isOpen) ws.pong(data);
    });
    ws.on('pong', touch);
    ws.on('error', (err) => {
      // ws closes the socket itself after an error (e.g. 1009 for an oversize frame).
      logger.debug({ err, socketId: id }, 'socket error');
    });
    ws.once('close', (code: number) => {
      keepalive.stop();
      this.connections.delete(id);
      this.perAddress.remove(address);
      handlers.registry.removeSubscriber(conn);
      logger.debug({ socketId: id, code }, 'connection closed');
      if (this.closing !== undefined && this.connections.size === 0) this.closing.drained();
    });

    conn.send(
      encodeFrame('pusher:connection_established', {
        socket_id: id,
        activity_timeout: this.options.activityTimeoutSeconds,
      }),
    );
    keepalive.start();
    logger.debug({ socketId: id }, 'connection opened');
  }
}

/** At most one error line per this interval for failures of the frame handlers (see handlerFailed). */
const HANDLER_ERROR_LOG_INTERVAL_MS = 60_000;

/** RFC 6455's close code for a message too big to process. */
const MESSAGE_TOO_BIG = 1009;

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, chunk) => sum + chunk.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

function toText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
