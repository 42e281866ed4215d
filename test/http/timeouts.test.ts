// Request timeouts over real sockets: headers must arrive within CHAT_REQUEST_TIMEOUT_S, and a body within it
// plus one second per CHAT_REQUEST_MIN_BYTES_PER_S bytes received. A trickled body (an upload or JSON) or
// trickled headers get 408 with the error body and a closed connection; an upload that keeps arriving at the
// minimum rate outlasts the timeout and is stored; a WebSocket (an upgraded request) is not affected.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../support/app.js';
import { newUsers, register } from './helpers.js';

const TIMEOUT_S = 2;
const MIN_BYTES_PER_S = 1000;
/** Long enough for any cut to have happened, with room for a loaded machine. */
const GIVE_UP_MS = TIMEOUT_S * 1000 + 8_000;

interface RawExchange {
  /** Everything the server sent, as text. */
  readonly response: string;
  /** Milliseconds from the first byte sent until the server closed the connection (or GIVE_UP_MS). */
  readonly closedAfterMs: number;
  readonly closedByServer: boolean;
  readonly bytesSent: number;
}

/**
 * Opens a TCP connection, writes `head`, then `body` in pieces of `step` bytes every `everyMs`, and reads until
 * the server closes the connection (or GIVE_UP_MS passes).
 */
function trickle(port: number, head: string, body: Buffer, step: number, everyMs: number): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const started = Date.now();
    const received: Buffer[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ response: Buffer.concat(received).toString(), closedAfterMs: Date.now() - started, closedByServer, bytesSent: sent });
    };
    const giveUp = setTimeout(() => finish(false), GIVE_UP_MS);
    const next = (): void => {
      if (done || socket.destroyed || !socket.writable) return;
      if (sent >= body.length) return;
      const part = body.subarray(sent, sent + step);
      socket.write(part);
      sent += part.length;
      timer = setTimeout(next, everyMs);
    };
    socket.on('connect', () => {
      socket.write(head);
      timer = setTimeout(next, everyMs);
    });
    socket.on('data', (data) => received.push(data));
    socket.on('error', () => finish(true));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
  });
}

function statusOf(response: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
}

function jsonBodyOf(response: string): any {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}

function filesUnder(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

describe('request timeouts (real sockets)', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { CHAT_REQUEST_TIMEOUT_S: String(TIMEOUT_S), CHAT_REQUEST_MIN_BYTES_PER_S: String(MIN_BYTES_PER_S) } });
  });
  after(async () => {
    await app?.close();
  });

  /** The request line and headers of a multipart upload of `size` body bytes. */
  async function uploadHead(userId: number, size: number): Promise<string> {
    return (
      `POST /api/chat/v1/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${await app.token(userId)}\r\n` +
      `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${size}\r\n\r\n`
    );
  }

  /** A multipart body of exactly `size` bytes carrying one file. */
  function multipartBody(size: number): Buffer {
    const start = '--b\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n';
    const end = '\r\n--b--\r\n';
    return Buffer.concat([Buffer.from(start), Buffer.alloc(size - start.length - end.length, 0x61), Buffer.from(end)]);
  }

  function assertTimedOut(exchange: RawExchange, what: string): void {
    assert.equal(statusOf(exchange.response), 408, `${what}: ${JSON.stringify(exchange.response.slice(0, 300))}`);
    assert.deepEqual(jsonBodyOf(exchange.response), { message: 'The request took too long to arrive.', code: 'request_timeout' });
    assert.match(exchange.response, /\r\nconnection: close\r\n/i);
    assert.ok(exchange.closedByServer, `${what}: the server closes the connection`);
    // Cut close to the deadline: the timeout plus what the trickle earned (a second per MIN_BYTES_PER_S), plus slack.
    const deadlineMs = TIMEOUT_S * 1000 + (exchange.bytesSent * 1000) / MIN_BYTES_PER_S;
    assert.ok(exchange.closedAfterMs >= TIMEOUT_S * 1000 - 50, `${what}: not before the timeout (${exchange.closedAfterMs} ms)`);
    assert.ok(exchange.closedAfterMs < deadlineMs + 2_000, `${what}: cut off in time (${exchange.closedAfterMs} ms, deadline ${deadlineMs} ms)`);
  }

  test('an upload whose body trickles in is answered 408 and closed, and nothing is kept', async () => {
    const [a] = newUsers(1);
    await register(app, a);
    const attachments = join(app.config.dataDir, 'attachments');
    const filesBefore = filesUnder(attachments);
    const size = 20_000;
    // 100 bytes each 200 ms: 500 bytes/s, half the minimum rate; the whole body would take 40 s.
    const exchanged = trickle(app.port, await uploadHead(a, size), multipartBody(size), 100, 200);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(filesUnder(attachments), filesBefore + 1, 'the upload is being written');
    const exchange = await exchanged;
    assertTimedOut(exchange, 'trickled upload');
    assert.ok(exchange.bytesSent < 3_000, `only a trickle was sent (${exchange.bytesSent} bytes)`);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(filesUnder(attachments), filesBefore, 'the partial upload is not kept');
  });

  test('a JSON body that trickles in is answered 408 and closed', async () => {
    const [a] = newUsers(1);
    const token = await app.token(a);
    const body = JSON.stringify({ name: 'Slow group', user_ids: [] });
    const head = `POST /api/chat/v1/groups HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    // One byte each 400 ms: the whole body would take 14 s.
    const exchange = await trickle(app.port, head, Buffer.from(body), 1, 400);
    assertTimedOut(exchange, 'trickled JSON');
  });

  test('headers that trickle in are answered 408 with the error body and closed', async () => {
    const head = 'GET /api/chat/v1/conversations HTTP/1.1\r\nHost: 127.0.0.1\r\n';
    const exchange = await trickle(app.port, head, Buffer.from('X-Slow: ' + 'x'.repeat(100)), 1, 300);
    assertTimedOut(exchange, 'trickled headers');
  });

  test('a connection that sends nothing is closed after the timeout', async () => {
    const exchange = await trickle(app.port, '', Buffer.alloc(0), 1, 1_000);
    assert.ok(exchange.closedByServer, 'closed by the server');
    assert.ok(exchange.closedAfterMs < TIMEOUT_S * 1000 + 3_000, `closed in time (${exchange.closedAfterMs} ms)`);
  });

  test('an upload that keeps arriving at the minimum rate may take longer than the timeout, and is stored', async () => {
    const [a] = newUsers(1);
    await register(app, a);
    const size = 14_000;
    // 350 bytes every 100 ms: 3,500 bytes/s, above the 1,000 minimum; the whole body takes 4 s, twice the timeout.
    const body = multipartBody(size);
    const socket = connect(app.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const started = Date.now();
    socket.write(await uploadHead(a, size));
    const received: Buffer[] = [];
    socket.on('data', (d) => received.push(d));
    for (let offset = 0; offset < size; offset += 350) {
      socket.write(body.subarray(offset, offset + 350));
      await new Promise((r) => setTimeout(r, 100));
    }
    const deadline = Date.now() + 5_000;
    while (!Buffer.concat(received).toString().includes('"url"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    const response = Buffer.concat(received).toString();
    assert.ok(Date.now() - started > TIMEOUT_S * 1000, 'the upload outlasted the timeout');
    assert.equal(statusOf(response), 201, response.slice(0, 300));
    assert.equal(jsonBodyOf(response).data.size, size - body.indexOf('\r\n\r\n') - 4 - '\r\n--b--\r\n'.length);
  });

  test('a WebSocket stays open well past the request timeout', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${app.port}/app/${app.config.broadcast.appKey}?protocol=7&client=js&version=8.4.0`);
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('message', () => resolve());
      ws.once('error', reject);
    });
    const outcome = await Promise.race([closed.then((code) => `closed with ${code}`), new Promise((r) => setTimeout(() => r('open'), TIMEOUT_S * 1000 * 2 + 1_000))]);
    assert.equal(outcome, 'open');
    ws.close();
  });
});
