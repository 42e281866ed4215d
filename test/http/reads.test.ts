// Read tracking over HTTP: POST /conversations/{id}/read moves the caller's read position (forward only), and
// unread_count is what lies after it, sent by others, not deleted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertKeys, conversation, direct, group, ISO_UTC, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`reads (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('without a message_id, marks everything up to the latest message read', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await send(app, a, id, 'one');
      const latest = await send(app, a, id, 'two');

      const res = await app.request(b, 'POST', `/conversations/${id}/read`);
      assert.equal(res.status, 200);
      assertKeys(res.body, ['data']);
      assertKeys(res.body.data, ['conversation_id', 'last_read_message_id', 'read_at', 'user_id']);
      assert.equal(res.body.data.conversation_id, id);
      assert.equal(res.body.data.user_id, b);
      assert.equal(res.body.data.last_read_message_id, latest.id);
      assert.match(res.body.data.read_at, ISO_UTC);

      const seen = await conversation(app, b, id);
      assert.equal(seen.unread_count, 0);
      assert.equal(seen.last_read_at, res.body.data.read_at);
    });

    test('an empty JSON object body reads the same as no body', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const latest = await send(app, a, id, 'x');
      const res = await app.request(b, 'POST', `/conversations/${id}/read`, {});
      assert.equal(res.status, 200);
      assert.equal(res.body.data.last_read_message_id, latest.id);
    });

    test('with a message_id, the messages after it stay unread', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await send(app, a, id, 'one');
      await send(app, a, id, 'two');
      await send(app, a, id, 'three');
      const res = await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
      assert.equal(res.body.data.last_read_message_id, first.id);
      assert.equal((await conversation(app, b, id)).unread_count, 2);
    });

    test('the read position only moves forward', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await send(app, a, id, 'one');
      const second = await send(app, a, id, 'two');
      await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: second.id });
      const back = await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
      assert.equal(back.status, 200);
      assert.equal(back.body.data.last_read_message_id, second.id);
      assert.equal((await conversation(app, b, id)).unread_count, 0);
    });

    test('one’s own messages are never unread', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const theirs = await send(app, a, id, 'question');
      await send(app, b, id, 'answer 1');
      await send(app, b, id, 'answer 2');
      await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: theirs.id });
      assert.equal((await conversation(app, b, id)).unread_count, 0);
      assert.equal((await conversation(app, a, id)).unread_count, 2);
    });

    test('a reader’s position does not change anyone else’s count', async () => {
      const [owner, m1, m2] = newUsers(3);
      const id = await group(app, owner, [m1, m2]);
      await send(app, owner, id, 'a');
      await send(app, owner, id, 'b');
      await app.request(m1, 'POST', `/conversations/${id}/read`);
      assert.equal((await conversation(app, m1, id)).unread_count, 0);
      assert.equal((await conversation(app, m2, id)).unread_count, 2);
      assert.equal((await conversation(app, m2, id)).last_read_at, null);
    });

    test('deleted messages after the position are not counted', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await send(app, a, id, 'one');
      const gone = await send(app, a, id, 'two');
      await send(app, a, id, 'three');
      await app.request(a, 'DELETE', `/messages/${gone.id}`);
      await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
      assert.equal((await conversation(app, b, id)).unread_count, 1);
    });

    test('a conversation without messages reads at position 0', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const res = await app.request(a, 'POST', `/conversations/${id}/read`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.last_read_message_id, 0);
      assert.equal((await conversation(app, a, id)).unread_count, 0);
    });

    test('participants added to a group start with its history read', async () => {
      const [owner, early, late] = newUsers(3);
      const id = await group(app, owner, [early]);
      await send(app, owner, id, 'before you came');
      await register(app, late);
      assert.equal((await app.request(owner, 'POST', `/groups/${id}/participants`, { user_ids: [late] })).status, 200);
      assert.equal((await conversation(app, late, id)).unread_count, 0);
      assert.equal((await conversation(app, early, id)).unread_count, 1);
      await send(app, owner, id, 'welcome');
      assert.equal((await conversation(app, late, id)).unread_count, 1);
    });

    test('message_id must be a message of this conversation (422 naming message_id)', async () => {
      const [a, b, c] = newUsers(3);
      const id = await direct(app, a, b);
      const elsewhere = await send(app, a, await direct(app, a, c), 'other');
      for (const messageId of [elsewhere.id, 987_654_321]) {
        const res = await app.request(a, 'POST', `/conversations/${id}/read`, { message_id: messageId });
        assertError(res, 422, 'validation_failed');
        assert.ok(res.body.errors.message_id);
      }
      const wrongType = await app.request(a, 'POST', `/conversations/${id}/read`, { message_id: 'latest' });
      assertError(wrongType, 422, 'validation_failed');
      assert.ok(wrongType.body.errors.message_id);
    });

    test('a non-participant gets 404', async () => {
      const [a, b, outsider] = newUsers(3);
      const id = await direct(app, a, b);
      await send(app, a, id, 'x');
      assertError(await app.request(outsider, 'POST', `/conversations/${id}/read`), 404, 'not_found');
    });
  });
}
