// How long a client may take to send its request. Node's own timers count from the request's first byte and
// treat every request alike; a 25 MiB upload on a slow link needs minutes where a JSON body needs a second.
// So: the headers must arrive within `requestTimeoutMs` (Node's headersTimeout), and a body within
// `requestTimeoutMs` plus one second for every `minBytesPerSecond` bytes received so far. A trickle (a few bytes
// now and then, to hold a socket) falls behind that at once and is cut off; an upload that keeps arriving at
// the minimum rate or faster is never cut, whatever its size. Cut off: 408 with the usual error body, and the
// connection is closed.
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface RequestTimeouts {
  /** Time allowed for the headers, and for a body before it has earned more with what it sent. */
  readonly requestTimeoutMs: number;
  /** Each this many bytes received give the body one more second. */
  readonly minBytesPerSecond: number;
}

/** How often Node checks its header timeout: a fraction of it, so a cut comes close to the deadline. */
export const connectionsCheckingInterval = (timeouts: RequestTimeouts): number =>
  Math.min(5_000, Math.max(250, Math.floor(timeouts.requestTimeoutMs / 4)));

const TIMEOUT_BODY = JSON.stringify({ message: 'The request took too long to arrive.', code: 'request_timeout' });

/** A raw HTTP response written straight to the socket (nothing of it has been sent), then the socket closed. */
function answerRawAndClose(socket: Socket, status: number, reason: string, body: string): void {
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  // The client may still be sending: give it a moment to read the answer before the connection goes.
  setTimeout(() => socket.destroy(), 1_000).unref();
}

function hasBody(request: FastifyRequest): boolean {
  const { headers } = request.raw;
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

export function installRequestTimeouts(app: FastifyInstance, timeouts: RequestTimeouts): void {
  const { requestTimeoutMs, minBytesPerSecond } = timeouts;
  // Headers: Node's own check (connectionsCheckingInterval is set where the server is made). Bodies: below.
  app.server.headersTimeout = requestTimeoutMs;
  app.server.requestTimeout = 0;

  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const raw = request.raw;
    if (raw.complete || !hasBody(request)) return done();
    const socket = raw.socket;
    const started = Date.now();
    const bytesBefore = socket.bytesRead; // this request's headers, and earlier requests on a kept-alive connection
    let timer: NodeJS.Timeout;
    const check = (): void => {
      if (raw.complete || socket.destroyed) return;
      const received = socket.bytesRead - bytesBefore;
      const deadline = started + requestTimeoutMs + (received * 1000) / minBytesPerSecond;
      const now = Date.now();
      if (now < deadline) {
        timer = setTimeout(check, Math.ceil(deadline - now));
        return;
      }
      request.log.info({ received_bytes: received, elapsed_ms: now - started }, 'request body too slow: answered 408 and closed');
      if (reply.raw.headersSent) socket.destroy();
      else answerRawAndClose(socket, 408, 'Request Timeout', TIMEOUT_BODY);
    };
    timer = setTimeout(check, requestTimeoutMs);
    const stop = (): void => clearTimeout(timer);
    raw.once('end', stop);
    raw.once('close', stop);
    done();
  });
}

/**
 * Errors Node raises before a request reaches Fastify (a header timeout, a malformed request line, headers
 * too large): the usual {message, code} body instead of Fastify's own.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    answerRawAndClose(socket, 408, 'Request Timeout', TIMEOUT_BODY);
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    answerRawAndClose(socket, 431, 'Request Header Fields Too Large', JSON.stringify({ message: 'The request headers are too large.', code: 'bad_request' }));
  } else {
    answerRawAndClose(socket, 400, 'Bad Request', JSON.stringify({ message: 'The request is not valid HTTP.', code: 'bad_request' }));
  }
}
