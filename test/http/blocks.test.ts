// Blocking over HTTP: a block by either side stops direct messaging between two users (403 blocked) until it
// is lifted; groups are not affected. messaging_blocked_user_ids lists everyone a user cannot message directly.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertKeys, direct, group, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`blocks (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const block = (blocker: number, blocked: number) => app.request(blocker, 'POST', '/blocks', { user_id: blocked });
    const unblock = (blocker: number, blocked: number) => app.request(blocker, 'DELETE', `/blocks/${blocked}`);
    const blocks = async (userId: number) => {
      const res = await app.request(userId, 'GET', '/blocks');
      assert.equal(res.status, 200);
      assertKeys(res.body, ['data', 'messaging_blocked_user_ids']);
      return res.body;
    };

    test('blocking answers with the blocker’s messaging_blocked_user_ids', async () => {
      const [a, b] = newUsers(2);
      await register(app, a, b);
      const res = await block(a, b);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: { messaging_blocked_user_ids: [b] } });
    });

    test('GET /blocks lists whom the caller blocked, and messaging_blocked_user_ids both ways', async () => {
      const [a, b, c] = newUsers(3);
      await register(app, a, b, c);
      await block(a, b);
      await block(c, a);
      assert.deepEqual(await blocks(a), {
        data: [{ id: b, name: `User ${b}`, avatar_url: null }],
        messaging_blocked_user_ids: [b, c].sort((x, y) => x - y),
      });
      assert.deepEqual(await blocks(b), { data: [], messaging_blocked_user_ids: [a] });
      assert.deepEqual(await blocks(c), { data: [{ id: a, name: `User ${a}`, avatar_url: null }], messaging_blocked_user_ids: [a] });
    });

    test('a block refuses direct sends both ways with 403 blocked', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await send(app, a, id, 'before the block');
      await block(b, a);
      assertError(await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'hello?' }), 403, 'blocked');
      assertError(await app.request(b, 'POST', `/conversations/${id}/messages`, { body: 'go away' }), 403, 'blocked');
      // The conversation and its history stay readable.
      const history = await app.request(a, 'GET', `/conversations/${id}/messages`);
      assert.deepEqual(history.body.data.map((m: any) => m.body), ['before the block']);
    });

    test('a block refuses edits of earlier direct messages both ways with 403 blocked, and the message stays as it was', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const mine = await send(app, a, id, 'before the block');
      const theirs = await send(app, b, id, 'also before');
      await block(a, b);
      assertError(await app.request(b, 'PATCH', `/messages/${theirs.id}`, { body: 'edited after being blocked' }), 403, 'blocked');
      assertError(await app.request(a, 'PATCH', `/messages/${mine.id}`, { body: 'edited by the blocker' }), 403, 'blocked');
      const history = await app.request(a, 'GET', `/conversations/${id}/messages`);
      assert.deepEqual(history.body.data.map((m: any) => [m.body, m.edited_at]), [['also before', null], ['before the block', null]]);
      await unblock(a, b);
      assert.equal((await app.request(b, 'PATCH', `/messages/${theirs.id}`, { body: 'edited once unblocked' })).status, 200);
    });

    test('a block refuses starting to type in the direct conversation both ways; stopping is accepted', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await block(b, a);
      assertError(await app.request(a, 'POST', `/conversations/${id}/typing`, { is_typing: true }), 403, 'blocked');
      assertError(await app.request(b, 'POST', `/conversations/${id}/typing`, { is_typing: true }), 403, 'blocked');
      assert.equal((await app.request(a, 'POST', `/conversations/${id}/typing`, { is_typing: false })).status, 204);
    });

    test('a block refuses opening a direct conversation both ways with 403 blocked', async () => {
      const [a, b] = newUsers(2);
      await register(app, a, b);
      await block(a, b);
      assertError(await app.request(a, 'POST', '/conversations', { user_id: b }), 403, 'blocked');
      assertError(await app.request(b, 'POST', '/conversations', { user_id: a }), 403, 'blocked');
      assert.deepEqual((await app.request(b, 'GET', '/conversations')).body.data, []);
    });

    test('a block refuses forwarding into the direct conversation', async () => {
      const [a, b, c] = newUsers(3);
      const withB = await direct(app, a, b);
      const withC = await direct(app, a, c);
      const message = await send(app, c, withC, 'forward me');
      await block(b, a);
      assertError(await app.request(a, 'POST', `/messages/${message.id}/forward`, { conversation_ids: [withB] }), 403, 'blocked');
    });

    test('a block does not stop messaging in a shared group', async () => {
      const [a, b] = newUsers(2);
      const id = await group(app, a, [b]);
      await block(a, b);
      await send(app, a, id, 'group talk');
      await send(app, b, id, 'still fine');
    });

    test('unblocking lifts the block: messaging works again and the lists are empty', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await block(a, b);
      const res = await unblock(a, b);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { data: { messaging_blocked_user_ids: [] } });
      assert.deepEqual(await blocks(a), { data: [], messaging_blocked_user_ids: [] });
      assert.deepEqual(await blocks(b), { data: [], messaging_blocked_user_ids: [] });
      await send(app, b, id, 'friends again');
    });

    test('when both blocked each other, one unblock leaves the other block in force', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await block(a, b);
      await block(b, a);
      const res = await unblock(a, b);
      assert.deepEqual(res.body, { data: { messaging_blocked_user_ids: [b] } });
      assertError(await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'hi' }), 403, 'blocked');
    });

    test('only the blocker can lift a block: the blocked side gets 404', async () => {
      const [a, b] = newUsers(2);
      await register(app, a, b);
      await block(a, b);
      assertError(await unblock(b, a), 404, 'not_found');
      assert.deepEqual((await blocks(b)).messaging_blocked_user_ids, [a]);
    });

    test('blocking twice is harmless; unblocking without a block is 404', async () => {
      const [a, b] = newUsers(2);
      await register(app, a, b);
      assert.equal((await block(a, b)).status, 200);
      assert.equal((await block(a, b)).status, 200);
      assert.equal((await blocks(a)).data.length, 1);
      assert.equal((await unblock(a, b)).status, 200);
      assertError(await unblock(a, b), 404, 'not_found');
    });

    test('one cannot block oneself (422) or an unknown user (404)', async () => {
      const [a] = newUsers(1);
      const self = await block(a, a);
      assertError(self, 422, 'validation_failed');
      assert.ok(self.body.errors.user_id);
      assertError(await block(a, 987_654_321), 404, 'not_found');
      const invalid = await app.request(a, 'POST', '/blocks', { user_id: 'b' });
      assertError(invalid, 422, 'validation_failed');
      assert.ok(invalid.body.errors.user_id);
    });
  });
}
