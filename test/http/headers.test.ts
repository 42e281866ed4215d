// Response headers every client relies on: API answers (JSON, errors, empty ones) are never sniffed into another
// type and never stored by a cache (nosniff, no-store), attachment downloads keep their own caching, and CORS
// (CHAT_CORS_ORIGINS) lets a page on a listed origin use every method and request header of the API (the
// browser itself is in test/web/cors.test.ts), while other origins get no CORS headers at all.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { direct, group, newUsers, send, upload } from './helpers.js';

const ALLOWED = 'http://allowed.example:3000';
const OTHER = 'http://other.example:3000';

for (const database of DATABASES) {
  describe(`response headers (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database, env: { CHAT_CORS_ORIGINS: `${ALLOWED},http://second.example` } });
    });
    after(async () => {
      await app?.close();
    });

    async function raw(userId: number | null, method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}): Promise<Response> {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      if (userId !== null) headers.authorization = `Bearer ${await app.token(userId)}`;
      if (init.body !== undefined) headers['content-type'] ??= 'application/json';
      return fetch(`${app.baseUrl}${path}`, { method, headers, body: init.body });
    }

    test('API answers carry nosniff and no-store: successes, empty answers and errors of every kind', async () => {
      const [a, b] = newUsers(2);
      const conversation = await direct(app, a, b);
      const message = await send(app, a, conversation, 'hi');
      const groupId = await group(app, a, [b]);
      const api = '/api/chat/v1';
      const answers: [string, Response][] = [
        ['200 list', await raw(a, 'GET', `${api}/conversations`)],
        ['201 create', await raw(a, 'POST', `${api}/conversations/${conversation}/messages`, { body: '{"body":"x"}' })],
        ['200 edit', await raw(a, 'PATCH', `${api}/messages/${message.id}`, { body: '{"body":"edited"}' })],
        ['204 empty', await raw(a, 'PATCH', `${api}/groups/${groupId}/participants/${b}`, { body: '{"role":"admin"}' })],
        ['401', await raw(null, 'GET', `${api}/conversations`)],
        ['404 resource', await raw(a, 'GET', `${api}/conversations/987654321`)],
        ['404 route', await raw(a, 'GET', `${api}/nowhere`)],
        ['400 bad URL', await raw(a, 'GET', `${api}/conversations/%E0%A4%A`)],
        ['400 bad JSON', await raw(a, 'POST', `${api}/groups`, { body: '{bad' })],
        ['422', await raw(a, 'POST', `${api}/groups`, { body: '{}' })],
        ['server key 401', await raw(null, 'PUT', `${api}/users/5`, { body: '{"name":"x"}' })],
        ['openapi.json', await raw(null, 'GET', `${api}/openapi.json`)],
        ['client-config', await raw(null, 'GET', `${api}/client-config`)],
        ['healthz', await raw(null, 'GET', '/healthz')],
      ];
      for (const [what, response] of answers) {
        assert.ok(response.status < 500, `${what}: ${response.status}`);
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff', what);
        assert.equal(response.headers.get('cache-control'), 'no-store', what);
        await response.arrayBuffer();
      }
    });

    test('an attachment download keeps its own private caching, with nosniff', async () => {
      const [a] = newUsers(1);
      const { body } = await upload(app, a, 'x', 'x.txt');
      const response = await raw(a, 'GET', body.data.url);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'private, max-age=3600');
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    });

    test('a CORS preflight from a listed origin allows every method and request header the API uses', async () => {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        const response = await raw(null, 'OPTIONS', '/api/chat/v1/messages/1', {
          headers: { origin: ALLOWED, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type,x-socket-id,x-request-id' },
        });
        assert.equal(response.status, 204, method);
        assert.equal(response.headers.get('access-control-allow-origin'), ALLOWED, method);
        const methods = response.headers.get('access-control-allow-methods')!.split(',').map((m) => m.trim());
        assert.ok(methods.includes(method), `${method} in ${methods.join(',')}`);
        const allowed = response.headers.get('access-control-allow-headers')!.toLowerCase().split(',').map((h) => h.trim());
        for (const header of ['authorization', 'content-type', 'x-socket-id', 'x-request-id']) assert.ok(allowed.includes(header), `${header} allowed`);
        // The server key is for the host app's backend only: a browser may not send it.
        assert.ok(!allowed.includes('x-chat-server-key'), 'X-Chat-Server-Key is not allowed');
        assert.equal(response.headers.get('access-control-max-age'), '600');
        assert.equal(response.headers.get('access-control-allow-credentials'), null, 'no cookies: no credentials');
      }
      // The second origin of the list too.
      const second = await raw(null, 'OPTIONS', '/api/chat/v1/blocks/2', { headers: { origin: 'http://second.example', 'access-control-request-method': 'DELETE' } });
      assert.equal(second.headers.get('access-control-allow-origin'), 'http://second.example');
    });

    test('answers to a listed origin expose Retry-After and Content-Disposition; other origins get no CORS headers', async () => {
      const [a] = newUsers(1);
      const allowed = await raw(a, 'GET', '/api/chat/v1/blocks', { headers: { origin: ALLOWED } });
      assert.equal(allowed.headers.get('access-control-allow-origin'), ALLOWED);
      const exposed = allowed.headers.get('access-control-expose-headers')!.toLowerCase().split(',').map((h) => h.trim());
      assert.deepEqual(exposed.sort(), ['content-disposition', 'retry-after']);
      assert.match(allowed.headers.get('vary') ?? '', /origin/i);

      for (const origin of [OTHER, 'http://allowed.example', 'https://allowed.example:3000', 'null']) {
        const preflight = await raw(null, 'OPTIONS', '/api/chat/v1/messages/1', { headers: { origin, 'access-control-request-method': 'PATCH' } });
        assert.equal(preflight.headers.get('access-control-allow-origin'), null, origin);
        const plain = await raw(a, 'GET', '/api/chat/v1/blocks', { headers: { origin } });
        assert.equal(plain.headers.get('access-control-allow-origin'), null, origin);
      }
    });
  });
}

describe('response headers without CHAT_CORS_ORIGINS', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app?.close();
  });

  test('no CORS headers for any origin: only same-origin pages may call the API', async () => {
    const preflight = await fetch(`${app.api}/messages/1`, { method: 'OPTIONS', headers: { origin: ALLOWED, 'access-control-request-method': 'PATCH' } });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.equal(preflight.headers.get('access-control-allow-methods'), null);
    await preflight.arrayBuffer();
  });
});
