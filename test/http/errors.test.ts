// Errors over HTTP: every failure is JSON {message, code} (plus `errors` naming fields on 422) with the right
// status, limits come from the environment, and nothing a client sends yields a 500 — checked with a small
// table-driven fuzz of bad inputs on every route.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, call, direct, group, newUsers, send } from './helpers.js';

const BODY_MAX_CHARS = 20;
const SENDS_PER_MINUTE = 3;
const HEARTBEATS_PER_MINUTE = 2;

/** Any response to a bad input: below 500, and if an error, the JSON error body of docs/api.md. */
function assertHandled(res: { status: number; body: any }, what: string): void {
  assert.ok(res.status < 500, `${what}: status ${res.status} ${JSON.stringify(res.body)}`);
  if (res.status >= 400) {
    try {
      assertError(res, res.status);
    } catch (err) {
      assert.fail(`${what}: ${(err as Error).message}`);
    }
  }
}

/** Values of the wrong kind, out of range, or odd, to put where an id, a string, a flag or a list belongs. */
const BAD_VALUES: unknown[] = [
  'abc', '', ' ', -1, 0, 1.5, 1e20, 2 ** 63, '99999999999999999999', '9007199254740993', '1e3', {}, { id: 1 }, [], [1, 2], [[1]],
  null, true, false, 'x'.repeat(20_000), 'a\u0000b', '😀'.repeat(30), '<script>alert(1)</script>', "1'; drop table users; --",
];
/** Whole bodies that are not the object a route expects. */
const BAD_BODIES: (string | unknown)[] = [
  [], [1, 2], 'just a string', 42, true, '{}', 'null', '[]', '"str"', '{"a":', '{"__proto__": {"polluted": 1}}',
  '{"constructor": {"prototype": {"polluted": 1}}}', `{"x": ${'['.repeat(5000)}${']'.repeat(5000)}}`,
];
/** Path segments that are not a positive integer id (or are one that does not exist). */
const BAD_IDS = ['0', '-1', 'abc', '1.5', '1e3', '99999999999999999999', '9007199254740993', 'null', '%20', '%00', "1'", 'x'.repeat(150), '%5B%5D', '987654321'];
/** Query values. */
const BAD_QUERY_VALUES = ['abc', '-1', '0', '1.5', '1e30', '99999999999999999999', '', '%00', 'x'.repeat(1000), '1,2', '[]', '%FF'];

for (const database of DATABASES) {
  describe(`errors (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({
        database,
        env: {
          CHAT_BODY_MAX_CHARS: String(BODY_MAX_CHARS),
          CHAT_RATE_SENDS_PER_MINUTE: String(SENDS_PER_MINUTE),
          CHAT_RATE_HEARTBEATS_PER_MINUTE: String(HEARTBEATS_PER_MINUTE),
        },
      });
    });
    after(async () => {
      await app?.close();
    });

    describe('error bodies', () => {
      test('malformed JSON is 400 with {message, code}', async () => {
        const [a] = newUsers(1);
        for (const raw of ['{bad', '{"user_id": 1,}', "{'user_id': 1}", '']) {
          const res = await app.request(a, 'POST', '/conversations', raw, { 'content-type': 'application/json' });
          assertError(res, 400, 'bad_request');
        }
      });

      test('an invalid field is 422 with errors naming the field', async () => {
        const [a] = newUsers(1);
        const wrongType = await app.request(a, 'POST', '/conversations', { user_id: 'bob' });
        assertError(wrongType, 422, 'validation_failed');
        assert.deepEqual(Object.keys(wrongType.body.errors), ['user_id']);

        const missing = await app.request(a, 'POST', '/conversations', {});
        assertError(missing, 422, 'validation_failed');
        assert.deepEqual(Object.keys(missing.body.errors), ['user_id']);

        const several = await app.request(a, 'POST', '/groups', { name: [], user_ids: { all: true } });
        assertError(several, 422, 'validation_failed');
        assert.deepEqual(Object.keys(several.body.errors).sort(), ['name', 'user_ids']);

        const element = await app.request(a, 'POST', '/groups', { name: 'G', user_ids: [5, -2] });
        assertError(element, 422, 'validation_failed');
        assert.deepEqual(Object.keys(element.body.errors), ['user_ids.1']);
      });

      test('JSON bodies are taken as typed: a flag, a number or a one-element list is not an id or a text', async () => {
        const [a] = newUsers(1);
        for (const body of [{ user_id: true }, { user_id: [2] }, { user_id: '2' }]) {
          const res = await app.request(a, 'POST', '/conversations', body);
          assertError(res, 422, 'validation_failed');
          assert.deepEqual(Object.keys(res.body.errors), ['user_id'], JSON.stringify(body));
        }
        const numberBody = await app.request(a, 'POST', '/groups', { name: 5, user_ids: [] });
        assertError(numberBody, 422, 'validation_failed');
        assert.deepEqual(Object.keys(numberBody.body.errors), ['name']);
      });

      test('an invalid query parameter is 422 naming it; an invalid path id is 404', async () => {
        const [a] = newUsers(1);
        const res = await app.request(a, 'GET', '/conversations?limit=lots');
        assertError(res, 422, 'validation_failed');
        assert.deepEqual(Object.keys(res.body.errors), ['limit']);
        assertError(await app.request(a, 'GET', '/conversations/lots'), 404, 'not_found');
      });

      test('text with a NUL character is 422 naming the field (it cannot be stored)', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const res = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'nul\u0000here' });
        assertError(res, 422, 'validation_failed');
        assert.deepEqual(Object.keys(res.body.errors), ['body']);
        const nested = await app.request(a, 'POST', '/groups', { name: 'G\u0000', user_ids: [b] });
        assertError(nested, 422, 'validation_failed');
        assert.deepEqual(Object.keys(nested.body.errors), ['name']);
      });

      test('an unknown route is a JSON 404, whatever the method', async () => {
        const [a] = newUsers(1);
        for (const [method, path] of [['GET', '/nothing-here'], ['POST', '/conversations/1/unknown'], ['PUT', '/conversations'], ['DELETE', '/blocks']]) {
          const res = await app.request(a, method!, path!);
          assertError(res, 404, 'not_found');
        }
        const outside = await fetch(`${app.baseUrl}/not/the/api`);
        assertError({ status: outside.status, body: await outside.json() }, 404, 'not_found');
      });

      test('an unsupported content type is 415', async () => {
        const [a] = newUsers(1);
        const res = await app.request(a, 'POST', '/conversations', '<user_id>1</user_id>', { 'content-type': 'application/xml' });
        assertError(res, 415, 'unsupported_media_type');
      });

      test('a JSON body sent as text/plain is 415 naming the type sent, not a 422 about a "body" field', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const res = await app.request(a, 'POST', `/conversations/${id}/messages`, '{"body":"hi"}', { 'content-type': 'text/plain;charset=UTF-8' });
        assertError(res, 415, 'unsupported_media_type');
        assert.equal(res.body.errors, undefined);
        assert.match(res.body.message, /application\/json/);
        assert.match(res.body.message, /text\/plain/);
        // The keepalive offline signal still takes text/plain (a closing page sends what it can).
        assert.ok((await app.request(a, 'POST', '/presence/offline', 'bye', { 'content-type': 'text/plain' })).status < 300);
      });

      test('a request body over the 1 MB limit is 413', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const res = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'x'.repeat(1024 * 1024 + 1) });
        assertError(res, 413, 'payload_too_large');
      });

      test('a URL that cannot be decoded is 400 with the same error body', async () => {
        const [a] = newUsers(1);
        assertError(await app.request(a, 'GET', '/conversations/%'), 400, 'bad_request');
      });
    });

    describe('limits from the environment', () => {
      test(`a message body may have CHAT_BODY_MAX_CHARS (${BODY_MAX_CHARS}) characters, not one more`, async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        await send(app, a, id, 'x'.repeat(BODY_MAX_CHARS));
        const over = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'x'.repeat(BODY_MAX_CHARS + 1) });
        assertError(over, 422, 'validation_failed');
        assert.deepEqual(Object.keys(over.body.errors), ['body']);
      });

      test('the body limit counts characters, not UTF-16 units or bytes', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, b, a);
        const message = await send(app, a, id, '😀'.repeat(BODY_MAX_CHARS));
        assert.equal(message.body, '😀'.repeat(BODY_MAX_CHARS));
        assertError(await app.request(a, 'POST', `/conversations/${id}/messages`, { body: '😀'.repeat(BODY_MAX_CHARS + 1) }), 422, 'validation_failed');
      });

      test('an edit is held to the same body limit', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const message = await send(app, a, id, 'short');
        const res = await app.request(a, 'PATCH', `/messages/${message.id}`, { body: 'y'.repeat(BODY_MAX_CHARS + 1) });
        assertError(res, 422, 'validation_failed');
        assert.deepEqual(Object.keys(res.body.errors), ['body']);
      });

      test(`sends over CHAT_RATE_SENDS_PER_MINUTE (${SENDS_PER_MINUTE}) are 429 with Retry-After, for that user only`, async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        // The window is a fixed minute: should it roll over mid-test, the limit applies again from there, so
        // send until refused and bound where the refusal may come.
        const statuses: number[] = [];
        let refused: { status: number; body: any; headers: Headers } | null = null;
        while (refused === null && statuses.length <= 2 * SENDS_PER_MINUTE) {
          const res = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: `n${statuses.length}` });
          statuses.push(res.status);
          if (res.status === 429) refused = res;
        }
        assert.ok(refused, `a 429 came within ${2 * SENDS_PER_MINUTE + 1} sends: ${statuses}`);
        assertError(refused, 429, 'rate_limited');
        const retryAfter = Number(refused.headers.get('retry-after'));
        assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers.get('retry-after')}`);
        assert.ok(statuses.slice(0, SENDS_PER_MINUTE).every((s) => s === 201), `the first ${SENDS_PER_MINUTE} sends succeeded: ${statuses}`);
        // A refused send stores nothing; the other participant is not limited.
        const stored = (await app.request(b, 'GET', `/conversations/${id}/messages`)).body.data.length;
        assert.equal(stored, statuses.filter((s) => s === 201).length);
        await send(app, b, id, 'my own quota');
      });

      test(`heartbeats over CHAT_RATE_HEARTBEATS_PER_MINUTE (${HEARTBEATS_PER_MINUTE}) are 429 with Retry-After`, async () => {
        const [a] = newUsers(1);
        const statuses: number[] = [];
        let refused: { status: number; body: any; headers: Headers } | null = null;
        while (refused === null && statuses.length <= 2 * HEARTBEATS_PER_MINUTE) {
          const res = await app.request(a, 'POST', '/presence/heartbeat');
          statuses.push(res.status);
          if (res.status === 429) refused = res;
        }
        assert.ok(refused, `a 429 came: ${statuses}`);
        assertError(refused, 429, 'rate_limited');
        assert.match(refused.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
      });
    });

    describe('never a 500: a small fuzz of bad inputs', () => {
      // Fixtures: a group of many members, so each fuzzed send has a sender with its own rate-limit quota.
      let owner: number;
      let members: number[];
      let groupId: number;
      let directId: number;
      let messageId: number;
      let nextMember = 0;
      const member = (): number => {
        assert.ok(nextMember < members.length, 'enough fuzz members');
        return members[nextMember++]!;
      };
      const fill = (path: string): string =>
        path.replaceAll('{G}', String(groupId)).replaceAll('{D}', String(directId)).replaceAll('{M}', String(messageId)).replaceAll('{O}', String(owner));
      /** Placeholders in a body: a whole '{X}' becomes that id as a number, one inside a string is filled in. */
      const resolve = (value: unknown): unknown => {
        if (typeof value === 'string') return /^\{[GDMO]\}$/.test(value) ? Number(fill(value)) : fill(value);
        if (Array.isArray(value)) return value.map(resolve);
        if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
        return value;
      };

      before(async () => {
        [owner] = newUsers(1);
        members = newUsers(200);
        groupId = await group(app, owner, members, 'Fuzz');
        directId = await direct(app, owner, members[0]!);
        messageId = (await send(app, owner, groupId, 'fuzz target')).id;
        nextMember = 1;
      });

      /** [method, path, the body's fields, server route?, a send (each value gets its own sender)?] */
      const ROUTES: [string, string, Record<string, unknown>, boolean, boolean][] = [
        ['POST', '/conversations', { user_id: '{O}' }, false, false],
        ['POST', '/conversations/{G}/messages', { body: 'hi', attachment_id: null, reply_to_id: null, client_message_id: 'c' }, false, true],
        ['POST', '/conversations/{D}/messages', { body: 'hi' }, false, false],
        ['POST', '/conversations/{G}/read', { message_id: '{M}' }, false, false],
        ['POST', '/conversations/{G}/typing', { is_typing: true }, false, false],
        ['PATCH', '/messages/{M}', { body: 'edit' }, false, false],
        ['POST', '/messages/{M}/forward', { conversation_ids: ['{G}'] }, false, true],
        ['POST', '/groups', { name: 'G', user_ids: ['{O}'], avatar_url: null }, false, false],
        ['PATCH', '/groups/{G}', { name: 'G', avatar_url: null }, false, false],
        ['POST', '/groups/{G}/participants', { user_ids: ['{O}'] }, false, false],
        ['PATCH', '/groups/{G}/participants/{O}', { role: 'admin' }, false, false],
        ['POST', '/blocks', { user_id: '{O}' }, false, false],
        ['POST', '/broadcasting/auth', { socket_id: '1.2', channel_name: 'private-chat.conversation.{G}' }, false, false],
        ['POST', '/broadcasting/user-auth', { socket_id: '1.2' }, false, false],
        ['PUT', '/users/{O}', { name: 'Owner', avatar_url: null }, true, false],
        ['POST', '/users/{O}/tokens', { ttl_seconds: 600 }, true, false],
      ];

      async function fuzz(userId: number, method: string, path: string, body: unknown, asServer: boolean, what: string) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        const raw = typeof body === 'string' ? body : JSON.stringify(body);
        const res = asServer
          ? await call(app, null, method, path, raw, { ...headers, 'x-chat-server-key': app.config.serverKey })
          : await app.request(userId, method, path, raw, headers);
        assertHandled(res, what);
      }

      for (const [method, template, fields, asServer, isSend] of ROUTES) {
        for (const field of Object.keys(fields)) {
          test(`${method} ${template}: bad values for ${field}`, async () => {
            const testUser = member();
            for (const value of BAD_VALUES) {
              const body = resolve(fields) as Record<string, unknown>;
              body[field] = value;
              // A direct conversation's one other participant is members[0]; a send gets a fresh sender each time.
              const actor = template.includes('{D}') ? members[0]! : isSend ? member() : testUser;
              await fuzz(actor, method, fill(template), body, asServer, `${method} ${template} ${field}=${JSON.stringify(value)?.slice(0, 60)}`);
            }
          });
        }
        test(`${method} ${template}: bodies that are not the expected object`, async () => {
          const sender = member();
          for (const body of BAD_BODIES) {
            await fuzz(sender, method, fill(template), body, asServer, `${method} ${template} body=${String(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 60)}`);
          }
        });
      }

      const ID_ROUTES: [string, string, unknown][] = [
        ['GET', '/conversations/{id}', undefined],
        ['GET', '/conversations/{id}/messages', undefined],
        ['POST', '/conversations/{id}/messages', { body: 'x' }],
        ['POST', '/conversations/{id}/read', {}],
        ['POST', '/conversations/{id}/typing', { is_typing: true }],
        ['PATCH', '/messages/{id}', { body: 'x' }],
        ['DELETE', '/messages/{id}', undefined],
        ['POST', '/messages/{id}/forward', { conversation_ids: ['{G}'] }],
        ['PATCH', '/groups/{id}', { name: 'x' }],
        ['DELETE', '/groups/{id}', undefined],
        ['POST', '/groups/{id}/participants', { user_ids: ['{O}'] }],
        ['DELETE', '/groups/{G}/participants/{id}', undefined],
        ['PATCH', '/groups/{G}/participants/{id}', { role: 'admin' }],
        ['POST', '/groups/{id}/leave', undefined],
        ['DELETE', '/blocks/{id}', undefined],
        ['GET', '/attachments/{id}', undefined],
      ];
      for (const [method, template, body] of ID_ROUTES) {
        test(`${method} ${template}: ids that are not ids`, async () => {
          const userId = member();
          for (const id of BAD_IDS) {
            const path = fill(template).replace('{id}', id);
            const res = await app.request(userId, method, path, resolve(body));
            assertHandled(res, `${method} ${path}`);
            // Not found, or (a member acting on the fixture group) refused for their role before the id is looked at.
            const allowed = template.includes('{G}') ? [400, 403, 404] : [400, 404];
            assert.ok(allowed.includes(res.status), `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        });
      }

      const QUERIES: [string, string[]][] = [
        ['/conversations', ['limit', 'cursor']],
        ['/conversations/{G}/messages', ['before', 'after', 'limit']],
        ['/presence', ['user_ids']],
      ];
      for (const [template, params] of QUERIES) {
        for (const param of params) {
          test(`GET ${template}: bad values for ?${param}`, async () => {
            const userId = member();
            for (const value of BAD_QUERY_VALUES) {
              const path = `${fill(template)}?${param}=${value}`;
              assertHandled(await app.request(userId, 'GET', path), `GET ${path.slice(0, 80)}`);
              const twice = `${fill(template)}?${param}=1&${param}=${value}`;
              assertHandled(await app.request(userId, 'GET', twice), `GET ${twice.slice(0, 80)}`);
            }
          });
        }
      }

      test('bad headers: odd tokens, content types and socket ids', async () => {
        const userId = member();
        const token = await app.token(userId);
        const cases: Record<string, string>[] = [
          { authorization: `Bearer ${token}`, 'x-socket-id': 'not-a-socket' },
          { authorization: `Bearer ${token}`, 'x-socket-id': '1'.repeat(500) },
          { authorization: `Bearer ${'a'.repeat(8000)}` },
          { authorization: `Bearer ${token}.extra` },
          { authorization: `bearer ${token}` },
          { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=latin1' },
          { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
          { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
          { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=z' },
        ];
        for (const headers of cases) {
          const res = await call(app, null, 'POST', `/conversations/${groupId}/messages`, '{"body":"hi"}', headers);
          assertHandled(res, JSON.stringify(headers).slice(0, 100));
        }
      });
    });
  });
}
