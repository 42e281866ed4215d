// Attachments over HTTP: multipart upload (one file), download by the uploader and by participants of a
// conversation where it was sent (404 to everyone else), and the size limit (413), set small here. Hostile
// uploads: a made-up part type is stored as application/octet-stream, active content (HTML, SVG, XML,
// scripts) is only ever a sandboxed download, and a file gone from storage answers the error body.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertKeys, ATTACHMENT_KEYS, direct, group, newUsers, send, upload } from './helpers.js';

const MAX_BYTES = 1024;

for (const database of DATABASES) {
  describe(`attachments (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database, env: { CHAT_ATTACHMENT_MAX_BYTES: String(MAX_BYTES) } });
    });
    after(async () => {
      await app?.close();
    });

    /** GET the attachment's url as a user (or without a token). */
    async function download(userId: number | null, url: string): Promise<{ status: number; headers: Headers; bytes: Buffer; json: any }> {
      const headers: Record<string, string> = userId === null ? {} : { authorization: `Bearer ${await app.token(userId)}` };
      const response = await fetch(`${app.baseUrl}${url}`, { headers });
      const bytes = Buffer.from(await response.arrayBuffer());
      let json: unknown = null;
      if (response.status >= 400 && response.headers.get('content-type')?.includes('application/json')) json = JSON.parse(bytes.toString());
      return { status: response.status, headers: response.headers, bytes, json };
    }

    /** Uploads one file with the part's Content-Type header exactly as given (FormData would clean it). */
    async function rawUpload(userId: number, partType: string, content = '<script>alert(document.domain)</script>', filename = 'page.html') {
      const boundary = 'parley-test-boundary';
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: `),
        Buffer.from(partType, 'latin1'),
        Buffer.from(`\r\n\r\n${content}\r\n--${boundary}--\r\n`),
      ]);
      const response = await fetch(`${app.api}/attachments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await app.token(userId)}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
      });
      return { status: response.status, body: await response.json() as any };
    }

    test('an upload answers 201 with {id, name, mime_type, size, url, width, height, thumbnail_url}', async () => {
      const [a] = newUsers(1);
      const res = await upload(app, a, 'hello, world', 'greeting.txt', 'text/plain');
      assert.equal(res.status, 201);
      assertKeys(res.body, ['data']);
      assertKeys(res.body.data, ATTACHMENT_KEYS, 'attachment');
      const { id } = res.body.data;
      assert.ok(Number.isInteger(id) && id > 0);
      assert.deepEqual(res.body.data, { id, name: 'greeting.txt', mime_type: 'text/plain', size: 12, url: `/api/chat/v1/attachments/${id}`, width: null, height: null, thumbnail_url: null });
    });

    test('the uploader downloads the very bytes, with their type', async () => {
      const [a] = newUsers(1);
      const content = new Uint8Array(Array.from({ length: 300 }, (_, i) => i % 256));
      const { body } = await upload(app, a, content, 'data.bin', 'application/octet-stream');
      const file = await download(a, body.data.url);
      assert.equal(file.status, 200);
      assert.deepEqual(file.bytes, Buffer.from(content));
      assert.equal(file.headers.get('content-type'), 'application/octet-stream');
      assert.equal(file.headers.get('content-length'), '300');
      assert.equal(file.headers.get('x-content-type-options'), 'nosniff');
    });

    test('nobody else may read an attachment that was not sent (404)', async () => {
      const [a, b] = newUsers(2);
      await direct(app, a, b);
      const { body } = await upload(app, a, 'draft');
      const file = await download(b, body.data.url);
      assertError({ status: file.status, body: file.json }, 404, 'not_found');
    });

    test('once sent, the participants of that conversation may read it, and nobody else', async () => {
      const [a, b, outsider] = newUsers(3);
      const id = await direct(app, a, b);
      const { body } = await upload(app, a, 'shared', 'shared.txt');
      await send(app, a, id, { attachment_id: body.data.id, body: 'see attached' });
      const forB = await download(b, body.data.url);
      assert.equal(forB.status, 200);
      assert.equal(forB.bytes.toString(), 'shared');
      const forOutsider = await download(outsider, body.data.url);
      assertError({ status: forOutsider.status, body: forOutsider.json }, 404, 'not_found');
    });

    test('participants of a group where it was sent may read it; a removed participant no longer may', async () => {
      const [owner, m1, m2] = newUsers(3);
      const id = await group(app, owner, [m1, m2]);
      const { body } = await upload(app, owner, 'minutes');
      await send(app, owner, id, { attachment_id: body.data.id });
      assert.equal((await download(m2, body.data.url)).status, 200);
      await app.request(owner, 'DELETE', `/groups/${id}/participants/${m2}`);
      assert.equal((await download(m2, body.data.url)).status, 404);
      assert.equal((await download(m1, body.data.url)).status, 200);
    });

    test('a deleted message no longer shares its attachment; the uploader keeps access', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const { body } = await upload(app, a, 'oops');
      const message = await send(app, a, id, { attachment_id: body.data.id });
      await app.request(a, 'DELETE', `/messages/${message.id}`);
      assert.equal((await download(b, body.data.url)).status, 404);
      assert.equal((await download(a, body.data.url)).status, 200);
    });

    test('a file up to CHAT_ATTACHMENT_MAX_BYTES is accepted; a larger one is refused with 413', async () => {
      const [a] = newUsers(1);
      const atLimit = await upload(app, a, new Uint8Array(MAX_BYTES), 'exact.bin', 'application/octet-stream');
      assert.equal(atLimit.status, 201);
      assert.equal(atLimit.body.data.size, MAX_BYTES);
      const over = await upload(app, a, new Uint8Array(MAX_BYTES + 1), 'big.bin', 'application/octet-stream');
      assertError(over, 413, 'payload_too_large');
      const wayOver = await upload(app, a, new Uint8Array(MAX_BYTES * 50), 'huge.bin', 'application/octet-stream');
      assertError(wayOver, 413, 'payload_too_large');
    });

    test('an upload must be multipart/form-data with a file', async () => {
      const [a] = newUsers(1);
      assertError(await app.request(a, 'POST', '/attachments', { file: 'nope' }), 415, 'unsupported_media_type');
      const form = new FormData();
      form.append('note', 'no file here');
      const response = await fetch(`${app.api}/attachments`, { method: 'POST', headers: { authorization: `Bearer ${await app.token(a)}` }, body: form });
      const res = { status: response.status, body: await response.json() };
      assertError(res, 422, 'validation_failed');
      assert.ok(res.body.errors.file);
    });

    test('a malformed multipart body is a 400, not a server error', async () => {
      const [a] = newUsers(1);
      const token = await app.token(a);
      for (const [contentType, payload] of [
        ['multipart/form-data; boundary=xyz', 'garbage'],
        ['multipart/form-data', 'no boundary at all'],
        ['multipart/form-data; boundary=xyz', '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\ncut short'],
      ]) {
        const response = await fetch(`${app.api}/attachments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': contentType! },
          body: payload,
        });
        assertError({ status: response.status, body: await response.json() }, 400, 'bad_request');
      }
    });

    test('a filename is kept as given, and missing metadata gets defaults', async () => {
      const [a] = newUsers(1);
      const named = await upload(app, a, 'x', 'résumé (final).pdf', 'application/pdf');
      assert.equal(named.body.data.name, 'résumé (final).pdf');
      assert.equal(named.body.data.mime_type, 'application/pdf');
      const file = await download(a, named.body.data.url);
      assert.equal(file.headers.get('content-disposition'), `inline; filename*=UTF-8''${encodeURIComponent('résumé (final).pdf')}`);
    });

    test('uploading and downloading need a token', async () => {
      const [a] = newUsers(1);
      const { body } = await upload(app, a, 'x');
      const form = new FormData();
      form.append('file', new Blob(['x']), 'x.txt');
      const response = await fetch(`${app.api}/attachments`, { method: 'POST', body: form });
      assertError({ status: response.status, body: await response.json() }, 401, 'unauthenticated');
      const file = await download(null, body.data.url);
      assertError({ status: file.status, body: file.json }, 401, 'unauthenticated');
    });

    test('an attachment id that does not exist, or is not an id, is 404', async () => {
      const [a] = newUsers(1);
      for (const id of ['987654321', '0', 'abc']) {
        const file = await download(a, `/api/chat/v1/attachments/${id}`);
        assertError({ status: file.status, body: file.json }, 404, 'not_found');
      }
    });

    test('a part type that is not a valid media type is stored and served as application/octet-stream', async () => {
      const [a] = newUsers(1);
      for (const partType of ['text/h\x01tml', 'text/html\x7f', 'garbage', 'text/', '/html', 'text/html/x', 'te xt/html', 'text/h"tml', 'text/\xe9', `image/${'x'.repeat(300)}`]) {
        const res = await rawUpload(a, partType);
        assert.equal(res.status, 201, `${JSON.stringify(partType)}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.data.mime_type, 'application/octet-stream', JSON.stringify(partType));
        const file = await download(a, res.body.data.url);
        assert.equal(file.status, 200, JSON.stringify(partType));
        assert.equal(file.headers.get('content-type'), 'application/octet-stream');
        assert.match(file.headers.get('content-disposition')!, /^attachment;/);
        assert.equal(file.bytes.toString(), '<script>alert(document.domain)</script>');
      }
      // A valid type is kept, in lower case, without parameters.
      const valid = await rawUpload(a, 'Text/Plain; charset="utf-8"', 'hi', 'hi.txt');
      assert.equal(valid.body.data.mime_type, 'text/plain');
    });

    test('a type stored before types were checked is served as application/octet-stream, not a 500', async () => {
      const [a] = newUsers(1);
      const { body } = await upload(app, a, '<b>old</b>', 'old.html', 'text/html');
      await app.app.chat.db.updateTable('attachments').set({ mime_type: 'text/h\u0001tml' }).where('id', '=', body.data.id).execute();
      const file = await download(a, body.data.url);
      assert.equal(file.status, 200);
      assert.equal(file.headers.get('content-type'), 'application/octet-stream');
      assert.match(file.headers.get('content-disposition')!, /^attachment;/);
      assert.equal(file.bytes.toString(), '<b>old</b>');
    });

    test('active content (HTML, SVG, XML, scripts) and unknown types are sandboxed downloads; safe types are inline', async () => {
      const [a] = newUsers(1);
      const download_ = ['text/html', 'image/svg+xml', 'application/xhtml+xml', 'application/xml', 'text/xml', 'text/javascript',
        'application/javascript', 'application/json', 'text/css', 'application/x-shockwave-flash', 'application/octet-stream', 'application/x-unknown'];
      const inline = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'text/plain', 'audio/mpeg', 'video/mp4'];
      for (const type of [...download_, ...inline, 'application/pdf']) {
        const { body } = await rawUpload(a, type, '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', 'file.x');
        assert.equal(body.data.mime_type, type);
        const file = await download(a, body.data.url);
        assert.equal(file.status, 200, type);
        assert.equal(file.headers.get('content-type'), type, type);
        assert.equal(file.headers.get('x-content-type-options'), 'nosniff', type);
        const disposition = download_.includes(type) ? 'attachment' : 'inline';
        assert.equal(file.headers.get('content-disposition'), `${disposition}; filename*=UTF-8''file.x`, type);
        // Sandboxed, all but PDF (a sandbox stops the browser's PDF viewer; PDF is not a web page).
        assert.equal(file.headers.get('content-security-policy'), type === 'application/pdf' ? null : 'sandbox', type);
      }
    });

    test("an attachment whose file is gone from storage answers 404 with the error body", async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const { body } = await upload(app, a, 'soon gone', 'gone.txt');
      await send(app, a, id, { attachment_id: body.data.id });
      const row = await app.app.chat.db.selectFrom('attachments').select('storage_key').where('id', '=', body.data.id).executeTakeFirstOrThrow();
      await rm(join(app.config.dataDir, 'attachments', row.storage_key.slice(0, 2), row.storage_key));
      for (const user of [a, b]) {
        const file = await download(user, body.data.url);
        assertError({ status: file.status, body: file.json }, 404, 'not_found');
        assert.equal(file.headers.get('content-disposition'), null, 'no download headers on the error');
        assert.equal(file.headers.get('cache-control'), 'no-store');
      }
      // HEAD too (Fastify answers it from the GET route).
      const head = await fetch(`${app.baseUrl}${body.data.url}`, { method: 'HEAD', headers: { authorization: `Bearer ${await app.token(a)}` } });
      assert.equal(head.status, 404);
    });
  });
}
