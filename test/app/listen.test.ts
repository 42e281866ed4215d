// How the service listens (src/app/index.ts): when the sockets of a node that died come back at once, the kernel
// queues them until the process accepts them, rather than dropping their SYNs (each dropped one waits a second or
// more for its retry). Node's default queue, 511, overflowed in the reconnect storm of `npm run bench -- cluster`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.js';

/** The kernel's count of connections dropped because a listen queue was full (every socket of the machine). */
function listenOverflows(): number {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
  const names = lines[0]!.split(/\s+/);
  const values = lines[1]!.split(/\s+/);
  return Number(values[names.indexOf('ListenOverflows')]);
}

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app?.close();
});

/** The kernel's cap on any listen queue (net.core.somaxconn); 0 where it cannot be read. */
function somaxconn(): number {
  try {
    return Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
  } catch {
    return 0;
  }
}

const skip = process.platform !== 'linux' ? 'reads /proc/net/netstat' : somaxconn() < 2_000 ? `net.core.somaxconn is ${somaxconn()}: the kernel caps the queue below 1,500` : false;

test('1,500 connections arriving while the process is busy all wait in the queue: none is dropped', { skip }, async () => {
  const before = listenOverflows();
  const sockets: Socket[] = [];
  // The handshakes complete in the kernel as the connects are made; the process accepts none until the loop is free.
  for (let i = 0; i < 1_500; i++) sockets.push(connect(app.port, '127.0.0.1').on('error', () => {}));
  const busyUntil = Date.now() + 300;
  while (Date.now() < busyUntil); // the process busy, as a node taking over thousands of sockets is
  await new Promise((resolve) => setTimeout(resolve, 200));
  const dropped = listenOverflows() - before;
  for (const s of sockets) s.destroy();
  assert.equal(dropped, 0, `${dropped} connections were dropped by a full listen queue`);
});
