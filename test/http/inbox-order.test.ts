// The inbox's order after a delete: it is by newest message (docs/api.md), so deleting a conversation's newest
// message moves the conversation back to the time of its newest visible message (or of its creation when none
// is left), in GET /conversations, its pages, and the InboxUpdated entries the client orders by.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { direct, group, newUsers, send } from './helpers.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const database of DATABASES) {
  describe(`inbox order after a delete (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const inboxIds = async (userId: number, query = '') => (await app.request(userId, 'GET', `/conversations${query}`)).body.data.map((c: any) => c.id);

    test('deleting the newest message puts the conversation back at its newest visible message', async () => {
      const [me, a, b] = newUsers(3);
      const withA = await direct(app, me, a);
      const early = await send(app, a, withA, 'early');
      await pause(5);
      const team = await group(app, me, [b], 'Team');
      await send(app, b, team, 'later');
      await pause(5);
      const newest = await send(app, a, withA, 'newest');
      assert.deepEqual(await inboxIds(me), [withA, team]);

      assert.equal((await app.request(a, 'DELETE', `/messages/${newest.id}`)).status, 204);
      assert.deepEqual(await inboxIds(me), [team, withA], 'the group, with the later message, comes first');
      const entry = (await app.request(me, 'GET', `/conversations/${withA}`)).body.data;
      assert.equal(entry.last_message.id, early.id);
      // Pages follow the same order.
      const first = await app.request(me, 'GET', '/conversations?limit=1');
      assert.deepEqual(first.body.data.map((c: any) => c.id), [team]);
      assert.deepEqual(await inboxIds(me, `?limit=1&cursor=${first.body.meta.next_cursor}`), [withA]);
    });

    test('deleting the only message puts the conversation back at its creation', async () => {
      const [me, a, b] = newUsers(3);
      const withA = await direct(app, me, a);
      await pause(5);
      const team = await group(app, me, [b], 'Team');
      await pause(5);
      const only = await send(app, a, withA, 'only');
      assert.deepEqual(await inboxIds(me), [withA, team]);
      assert.equal((await app.request(a, 'DELETE', `/messages/${only.id}`)).status, 204);
      assert.deepEqual(await inboxIds(me), [team, withA]);
    });

    test('deleting an older message leaves the order as it was', async () => {
      const [me, a, b] = newUsers(3);
      const team = await group(app, me, [b], 'Team');
      const withA = await direct(app, me, a);
      const old = await send(app, a, withA, 'old');
      await pause(5);
      await send(app, b, team, 'middle');
      await pause(5);
      await send(app, a, withA, 'new');
      assert.equal((await app.request(a, 'DELETE', `/messages/${old.id}`)).status, 204);
      assert.deepEqual(await inboxIds(me), [withA, team]);
    });
  });
}
