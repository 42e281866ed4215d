// Text as stored is text as answered. A JSON string may carry a lone surrogate ("x\ud800y": half of a UTF-16
// pair), which UTF-8 and so PostgreSQL cannot hold: it would be stored as U+FFFD. The server replaces it at the
// HTTP boundary, once, so every answer (the send's, the history's, an edit's, a group's, a user's) shows
// exactly what was stored, on both databases. Whole pairs (emoji) are untouched.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { call, direct, group, history, newUsers, send } from './helpers.js';

/** Strings with lone surrogates, and what is stored for each. */
const CASES: [string, string][] = [
  ['x\ud800y', 'x\ufffdy'],
  ['\udc00 low first', '\ufffd low first'],
  ['reversed \udc00\ud800 pair', 'reversed \ufffd\ufffd pair'],
  ['ends high \udbff', 'ends high \ufffd'],
  ['a pair 😀 and a half \ud83d', 'a pair 😀 and a half \ufffd'],
];

for (const database of DATABASES) {
  describe(`lone surrogates in text (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('a message body is answered as stored, by the send, the history and the inbox', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      for (const [sent, stored] of CASES) {
        const message = await send(app, a, id, sent);
        assert.equal(message.body, stored, JSON.stringify(sent));
        const { data } = await history(app, b, id, '?limit=1');
        assert.equal(data[0].body, stored);
        const inbox = await app.request(b, 'GET', `/conversations/${id}`);
        assert.equal(inbox.body.data.last_message.body, stored);
      }
    });

    test('an edit, a reply preview and a group name are answered as stored', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const original = await send(app, a, id, 'first');
      const edited = await app.request(a, 'PATCH', `/messages/${original.id}`, { body: 'edit \ud800' });
      assert.equal(edited.status, 200);
      assert.equal(edited.body.data.body, 'edit \ufffd');
      const reply = await send(app, b, id, { body: 'answer', reply_to_id: original.id });
      assert.equal(reply.reply_to.body, 'edit \ufffd');
      const { data } = await history(app, a, id);
      assert.deepEqual(data.map((m: any) => m.body), ['answer', 'edit \ufffd']);

      const groupId = await group(app, a, [b], 'Team \udfff');
      const created = await app.request(a, 'GET', `/conversations/${groupId}`);
      assert.equal(created.body.data.name, 'Team \ufffd');
      const renamed = await app.request(a, 'PATCH', `/groups/${groupId}`, { name: '\ud800 Renamed' });
      assert.equal(renamed.body.data.name, '\ufffd Renamed');
      assert.equal((await app.request(b, 'GET', `/conversations/${groupId}`)).body.data.name, '\ufffd Renamed');
    });

    test('a client_message_id is compared as stored: the retry finds the first send', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'once', client_message_id: 'key-\ud800' });
      assert.equal(first.status, 201);
      for (const retryKey of ['key-\ud800', 'key-\ufffd']) {
        const retry = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'once', client_message_id: retryKey });
        assert.equal(retry.status, 200, JSON.stringify(retryKey));
        assert.equal(retry.body.data.id, first.body.data.id);
      }
    });

    test('a user name from the server key endpoint is answered as stored', async () => {
      const [u, other] = newUsers(2);
      const put = await call(app, null, 'PUT', `/users/${u}`, { name: 'Zoë \ud800' }, { 'x-chat-server-key': app.config.serverKey });
      assert.ok(put.status === 201 || put.status === 200);
      assert.equal(put.body.data.name, 'Zoë \ufffd');
      // Seen by another user (not through a token of u's own, whose name claim would rename u).
      const created = await app.request(other, 'POST', '/conversations', { user_id: u });
      assert.equal(created.status, 201);
      assert.ok(created.body.data.participants_preview.some((p: any) => p.id === u && p.name === 'Zoë \ufffd'));
    });
  });
}
