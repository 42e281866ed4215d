// Mute (API v1.1): a participant mutes a conversation until a time or until unmuted; the HTTP
// ConversationResource shows it (muted, muted_until). Muting silences notifications only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertConversation, assertError, conversation, direct, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`mute (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('muting until a time shows muted_until in the conversation and the inbox, for the muter only', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const until = new Date(Date.now() + 3_600_000).toISOString();
      const res = await app.request(a, 'PUT', `/conversations/${id}/mute`, { until });
      assert.equal(res.status, 200);
      assertConversation(res.body.data);
      assert.deepEqual([res.body.data.muted, res.body.data.muted_until], [true, until]);
      const inbox = await app.request(a, 'GET', '/conversations');
      assert.deepEqual(inbox.body.data.find((c: any) => c.id === id).muted_until, until);
      const other = await conversation(app, b, id);
      assert.deepEqual([other.muted, other.muted_until], [false, null]);
    });

    test('muting with until null lasts until unmuted; DELETE unmutes', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const muted = await app.request(a, 'PUT', `/conversations/${id}/mute`, { until: null });
      assert.deepEqual([muted.status, muted.body.data.muted, muted.body.data.muted_until], [200, true, null]);
      await send(app, b, id, 'still counted');
      assert.equal((await conversation(app, a, id)).unread_count, 1, 'muting silences notifications only');
      const unmuted = await app.request(a, 'DELETE', `/conversations/${id}/mute`);
      assert.deepEqual([unmuted.status, unmuted.body.data.muted, unmuted.body.data.muted_until], [200, false, null]);
    });

    test('a mute that has ended shows as not muted', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await app.request(a, 'PUT', `/conversations/${id}/mute`, { until: new Date(Date.now() + 300).toISOString() });
      await new Promise((resolve) => setTimeout(resolve, 400));
      const c = await conversation(app, a, id);
      assert.deepEqual([c.muted, c.muted_until], [false, null]);
    });

    test('bad input: an end in the past or not a date-time is 422; a conversation you are not in is 404', async () => {
      const [a, b, outsider] = newUsers(3);
      await register(app, outsider);
      const id = await direct(app, a, b);
      assertError(await app.request(a, 'PUT', `/conversations/${id}/mute`, { until: '2000-01-01T00:00:00.000Z' }), 422);
      assertError(await app.request(a, 'PUT', `/conversations/${id}/mute`, { until: 'tomorrow' }), 422);
      assertError(await app.request(a, 'PUT', `/conversations/${id}/mute`, {}), 422);
      // A leap second is a valid RFC 3339 date-time but not a JavaScript Date: 422, not a 500.
      for (const until of ['2099-12-31T23:59:60Z', '2099-12-31T18:59:60-05:00']) {
        const res = await app.request(a, 'PUT', `/conversations/${id}/mute`, { until });
        assertError(res, 422, 'validation_failed');
        assert.ok(res.body.errors.until, JSON.stringify(res.body));
      }
      assertError(await app.request(outsider, 'PUT', `/conversations/${id}/mute`, { until: null }), 404);
      assertError(await app.request(outsider, 'DELETE', `/conversations/${id}/mute`), 404);
    });
  });
}
