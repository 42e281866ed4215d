// Mentions (API v1.1): a message names participants in mentioned_user_ids; each mentioned participant's
// unread_mention_count counts the unread messages that mention them, kept by sends, deletes and reads.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, conversation, direct, group, history, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`mentions (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('a message carries its mentions in history; each mentioned participant has one unread mention more', async () => {
      const [owner, ann, bob] = newUsers(3);
      const id = await group(app, owner, [ann, bob]);
      const message = await send(app, owner, id, { body: '@ann @bob look', mentioned_user_ids: [bob, ann, ann] });
      const [item] = (await history(app, ann, id)).data;
      assert.equal(item.id, message.id);
      assert.deepEqual(item.mentioned_user_ids, [ann, bob].sort((x, y) => x - y));
      assert.equal((await conversation(app, ann, id)).unread_mention_count, 1);
      assert.equal((await conversation(app, bob, id)).unread_mention_count, 1);
      await send(app, owner, id, { body: 'just Ann', mentioned_user_ids: [ann] });
      assert.equal((await conversation(app, ann, id)).unread_mention_count, 2);
      assert.equal((await conversation(app, bob, id)).unread_mention_count, 1);
      assert.equal((await conversation(app, owner, id)).unread_mention_count, 0);
    });

    test('marking read clears the mentions up to the read position', async () => {
      const [owner, ann] = newUsers(2);
      const id = await group(app, owner, [ann]);
      const first = await send(app, owner, id, { body: 'one', mentioned_user_ids: [ann] });
      await send(app, owner, id, { body: 'two', mentioned_user_ids: [ann] });
      assert.equal((await app.request(ann, 'POST', `/conversations/${id}/read`, { message_id: first.id })).status, 200);
      assert.equal((await conversation(app, ann, id)).unread_mention_count, 1);
      assert.equal((await app.request(ann, 'POST', `/conversations/${id}/read`)).status, 200);
      const seen = await conversation(app, ann, id);
      assert.deepEqual([seen.unread_count, seen.unread_mention_count], [0, 0]);
    });

    test('deleting an unread message that mentions someone takes it off their mention count', async () => {
      const [owner, ann] = newUsers(2);
      const id = await group(app, owner, [ann]);
      const message = await send(app, owner, id, { body: 'oops', mentioned_user_ids: [ann] });
      assert.equal((await conversation(app, ann, id)).unread_mention_count, 1);
      assert.equal((await app.request(owner, 'DELETE', `/messages/${message.id}`)).status, 204);
      assert.equal((await conversation(app, ann, id)).unread_mention_count, 0);
    });

    test('mentioning yourself is not a mention', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await send(app, a, id, { body: 'note to self', mentioned_user_ids: [a] });
      assert.deepEqual((await history(app, a, id)).data[0].mentioned_user_ids, []);
      assert.equal((await conversation(app, a, id)).unread_mention_count, 0);
    });

    test('only participants can be mentioned, at most 50 at once (422 naming mentioned_user_ids); nothing is written', async () => {
      const [a, b, outsider] = newUsers(3);
      await register(app, outsider);
      const id = await direct(app, a, b);
      const refused = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'hi', mentioned_user_ids: [b, outsider] });
      assertError(refused, 422, 'validation_failed');
      assert.ok(refused.body.errors.mentioned_user_ids);
      const tooMany = Array.from({ length: 51 }, (_, i) => 900_000 + i);
      const many = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'hi', mentioned_user_ids: tooMany });
      assertError(many, 422, 'validation_failed');
      assert.ok(many.body.errors.mentioned_user_ids);
      assertError(await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'hi', mentioned_user_ids: ['x'] }), 422);
      assert.deepEqual((await history(app, a, id)).data, []);
    });
  });
}
