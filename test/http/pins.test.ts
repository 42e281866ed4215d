// Pinned messages (docs/api.md "Pinned messages"): who may pin, the answer and MessagePinned, the list most
// recently pinned first, the limit of 50 (409 too_many_pins), and a deleted message unpinned.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, direct, group, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`pins (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('owner and admins of a group pin and unpin; a member may not (403); history items show the pin', async () => {
      const [owner, admin, member] = newUsers(3);
      const id = await group(app, owner!, [admin!, member!]);
      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}/participants/${admin}`, { role: 'admin' })).status, 204);
      const message = await send(app, member!, id, 'worth keeping');
      assertError(await app.request(member!, 'PUT', `/messages/${message.id}/pin`), 403, 'forbidden_role');

      const pinned = await app.request(admin!, 'PUT', `/messages/${message.id}/pin`);
      assert.equal(pinned.status, 200, JSON.stringify(pinned.body));
      assert.deepEqual(Object.keys(pinned.body.data).sort(), ['message_id', 'pinned', 'pinned_at', 'pinned_by']);
      assert.equal(pinned.body.data.message_id, message.id);
      assert.equal(pinned.body.data.pinned, true);
      assert.equal(pinned.body.data.pinned_by, admin);
      const again = await app.request(owner!, 'PUT', `/messages/${message.id}/pin`);
      assert.deepEqual(again.body.data, pinned.body.data, 'pinning again changes nothing');

      const item = (await app.request(member!, 'GET', `/conversations/${id}/messages`)).body.data[0];
      assert.equal(item.pinned_at, pinned.body.data.pinned_at);
      assert.equal(item.pinned_by, admin);

      const unpinned = await app.request(owner!, 'DELETE', `/messages/${message.id}/pin`);
      assert.equal(unpinned.status, 200);
      assert.deepEqual(unpinned.body.data, { message_id: message.id, pinned: false, pinned_at: null, pinned_by: null });
    });

    test('either person of a direct conversation pins; strangers get 404; the list is most recently pinned first, paged', async () => {
      const [a, b, stranger] = newUsers(3);
      await register(app, stranger!);
      const id = await direct(app, a!, b!);
      const first = await send(app, a!, id, 'first');
      const second = await send(app, b!, id, 'second');
      assert.equal((await app.request(b!, 'PUT', `/messages/${first.id}/pin`)).status, 200);
      assert.equal((await app.request(a!, 'PUT', `/messages/${second.id}/pin`)).status, 200);
      assertError(await app.request(stranger!, 'PUT', `/messages/${first.id}/pin`), 404);
      assertError(await app.request(stranger!, 'GET', `/conversations/${id}/pins`), 404);

      const all = await app.request(a!, 'GET', `/conversations/${id}/pins`);
      assert.equal(all.status, 200, JSON.stringify(all.body));
      assert.deepEqual(all.body.data.map((m: any) => m.id), [second.id, first.id]);
      const page = await app.request(a!, 'GET', `/conversations/${id}/pins?limit=1`);
      const next = await app.request(a!, 'GET', `/conversations/${id}/pins?limit=1&cursor=${encodeURIComponent(page.body.meta.next_cursor)}`);
      assert.deepEqual(next.body.data.map((m: any) => m.id), [first.id]);

      // A deleted message is unpinned.
      assert.equal((await app.request(b!, 'DELETE', `/messages/${second.id}`)).status, 204);
      assert.deepEqual((await app.request(a!, 'GET', `/conversations/${id}/pins`)).body.data.map((m: any) => m.id), [first.id]);
    });

    test('at most 50 pins per conversation: the 51st answers 409 too_many_pins; MessagePinned is in /sync', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a!, b!);
      const ids: number[] = [];
      for (let i = 0; i < 51; i++) ids.push((await send(app, a!, id, `m${i}`)).id);
      const since = (await app.request(a!, 'GET', '/sync')).body.data.cursor;
      for (const m of ids.slice(0, 50)) assert.equal((await app.request(a!, 'PUT', `/messages/${m}/pin`)).status, 200);
      assertError(await app.request(a!, 'PUT', `/messages/${ids[50]}/pin`), 409, 'too_many_pins');
      const changes = (await app.request(b!, 'GET', `/sync?since=${encodeURIComponent(since)}`)).body.data.changes;
      const pins = changes.filter((c: any) => c.type === 'MessagePinned');
      assert.equal(pins.length, 50);
      assert.deepEqual(Object.keys(pins[0].data).sort(), ['conversation_id', 'message_id', 'pinned', 'pinned_at', 'pinned_by']);
    });
  });
}
