// A client that goes away mid-upload (a closed tab, a cancelled upload) is not an outage: the server logs it at
// info as the client's doing, never as "dependency unavailable" (a warning operators page on), keeps no
// partial file, and goes on serving.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.js';
import { newUsers, register } from './helpers.js';

function filesUnder(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
  } catch {
    return 0;
  }
}

describe('a client that abandons an upload', () => {
  let app: TestApp;
  const logs: Record<string, unknown>[] = [];
  before(async () => {
    app = await startTestApp({ logTo: (line) => logs.push(JSON.parse(line)) });
  });
  after(async () => {
    await app?.close();
  });

  test('is logged as the client closing the connection, keeps no file, and the server goes on', async () => {
    const [a] = newUsers(1);
    await register(app, a);
    const attachments = join(app.config.dataDir, 'attachments');
    const filesBefore = filesUnder(attachments);
    const size = 1_000_000;
    const socket = connect(app.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /api/chat/v1/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${await app.token(a)}\r\n` +
        `Content-Type: multipart/form-data; boundary=b\r\nContent-Length: ${size}\r\n\r\n` +
        '--b\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n',
    );
    socket.write(Buffer.alloc(50_000, 0x61));
    await new Promise((r) => setTimeout(r, 300));
    socket.destroy();

    const deadline = Date.now() + 5_000;
    const about = () => logs.filter((l) => /client closed|dependency unavailable|unhandled error/.test(String(l.msg)));
    while (about().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      about().map((l) => [l.level, l.msg]),
      [[30, 'client closed the connection before the request was read']],
    );
    assert.equal(filesUnder(attachments), filesBefore, 'the partial upload is not kept');
    const after = await app.request(a, 'GET', '/conversations');
    assert.equal(after.status, 200);
  });
});
