// The OpenAPI document: served without a token at /api/chat/v1/openapi.json, it lists every operation of the
// API (docs/api.md) with its auth scheme. It does not depend on the database, so it runs on the first kind only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';

const PREFIX = '/api/chat/v1';

/** Every operation of the API (docs/api.md), as OpenAPI writes it. */
const OPERATIONS: [string, string][] = [
  ['get', '/conversations'],
  ['post', '/conversations'],
  ['get', '/conversations/{id}'],
  ['get', '/conversations/{id}/messages'],
  ['post', '/conversations/{id}/messages'],
  ['post', '/conversations/{id}/read'],
  ['post', '/conversations/{id}/typing'],
  ['get', '/conversations/{id}/reads'],
  ['put', '/conversations/{id}/mute'],
  ['delete', '/conversations/{id}/mute'],
  ['patch', '/messages/{id}'],
  ['delete', '/messages/{id}'],
  ['post', '/messages/{id}/forward'],
  ['put', '/messages/{id}/reactions/{emoji}'],
  ['delete', '/messages/{id}/reactions/{emoji}'],
  ['post', '/attachments'],
  ['get', '/attachments/{id}'],
  ['get', '/attachments/{id}/thumbnail'],
  ['post', '/groups'],
  ['patch', '/groups/{id}'],
  ['delete', '/groups/{id}'],
  ['post', '/groups/{id}/participants'],
  ['delete', '/groups/{id}/participants/{user_id}'],
  ['patch', '/groups/{id}/participants/{user_id}'],
  ['post', '/groups/{id}/leave'],
  ['get', '/blocks'],
  ['post', '/blocks'],
  ['delete', '/blocks/{user_id}'],
  ['post', '/presence/heartbeat'],
  ['post', '/presence/offline'],
  ['get', '/presence'],
  ['get', '/search/messages'],
  ['get', '/sync'],
  ['get', '/groups/{id}/changes'],
  ['get', '/messages/{id}/thread'],
  ['get', '/threads'],
  ['post', '/messages/{id}/thread/read'],
  ['put', '/messages/{id}/pin'],
  ['delete', '/messages/{id}/pin'],
  ['get', '/conversations/{id}/pins'],
  ['put', '/conversations/{id}/archive'],
  ['delete', '/conversations/{id}/archive'],
  ['put', '/conversations/{id}/pin'],
  ['delete', '/conversations/{id}/pin'],
  ['post', '/conversations/{id}/clear'],
  ['get', '/users'],
  ['get', '/push/config'],
  ['post', '/push/subscriptions'],
  ['delete', '/push/subscriptions'],
  ['post', '/broadcasting/auth'],
  ['post', '/broadcasting/user-auth'],
  ['put', '/users/{id}'],
  ['post', '/users/{id}/tokens'],
  // Moderation (v1.2)
  ['post', '/messages/{id}/report'],
  ['post', '/groups/{id}/bans'],
  ['get', '/groups/{id}/bans'],
  ['delete', '/groups/{id}/bans/{user_id}'],
  ['get', '/moderation/reports'],
  ['post', '/moderation/reports/{id}/resolve'],
  ['put', '/users/{id}/ban'],
  ['delete', '/users/{id}/ban'],
  ['get', '/audit'],
  // Compliance (v1.2)
  ['get', '/users/{id}/export'],
  ['delete', '/users/{id}'],
];

describe(`openapi (${DATABASES[0] ?? 'pglite'})`, () => {
  let app: TestApp;
  let doc: any;
  before(async () => {
    app = await startTestApp({ database: DATABASES[0] ?? 'pglite' });
  });
  after(async () => {
    await app?.close();
  });

  test('GET /api/chat/v1/openapi.json serves an OpenAPI 3 document without a token', async () => {
    const response = await fetch(`${app.api}/openapi.json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    doc = await response.json();
    assert.match(doc.openapi, /^3\./);
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(typeof doc.info.version, 'string');
  });

  test('lists every operation of the API, and nothing outside the API prefix', async () => {
    const listed = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).filter((k) => ['get', 'post', 'put', 'patch', 'delete'].includes(k)).map((method) => `${method} ${path}`),
    );
    const expected = OPERATIONS.map(([method, path]) => `${method} ${PREFIX}${path}`);
    assert.deepEqual([...listed].sort(), [...expected].sort());
    assert.ok(!Object.keys(doc.paths).includes(`${PREFIX}/openapi.json`), 'the document does not list itself');
  });

  test('every operation documents a success response and its path parameters', async () => {
    for (const [method, path] of OPERATIONS) {
      const op = doc.paths[`${PREFIX}${path}`][method];
      const codes = Object.keys(op.responses ?? {});
      if (path === '/attachments/{id}') continue; // the file itself: no JSON schema
      assert.ok(codes.some((c) => /^2\d\d$/.test(c)), `${method} ${path} documents a 2xx: ${codes}`);
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const params = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      assert.deepEqual(params.sort(), names.sort(), `${method} ${path} path parameters`);
    }
  });

  test('user routes document the error responses; both auth schemes are declared', async () => {
    const op = doc.paths[`${PREFIX}/conversations/{id}/messages`].post;
    for (const code of ['401', '403', '404', '422', '429']) assert.ok(op.responses[code], `documents ${code}`);
    assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), ['bearer', 'serverKey']);
    assert.deepEqual(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    assert.deepEqual(doc.components.securitySchemes.serverKey, { type: 'apiKey', in: 'header', name: 'X-Chat-Server-Key' });
  });

  test('every user operation documents 401 and 404, the downloads of a file and a thumbnail too', async () => {
    for (const [method, path] of OPERATIONS) {
      const op = doc.paths[`${PREFIX}${path}`][method];
      if (!(op.security ?? []).some((s: Record<string, unknown>) => 'bearer' in s)) continue;
      for (const code of ['401', '404']) assert.ok(op.responses?.[code], `${method} ${path} documents ${code}`);
    }
  });

  test('the MessageResource schema has exactly the fields docs/api.md lists (a sent reply in a thread adds thread_id)', async () => {
    const op = doc.paths[`${PREFIX}/conversations/{id}/messages`].post;
    const schema = op.responses['201'].content['application/json'].schema.properties.data;
    const fields = ['attachment', 'body', 'conversation_id', 'created_at', 'edited_at', 'forwarded_from', 'id', 'reply_to', 'sender'];
    assert.deepEqual([...schema.required].sort(), fields);
    assert.deepEqual(Object.keys(schema.properties).sort(), [...fields, 'thread_id'].sort());
  });
});
