// GET /groups/{id}/changes: a group's membership changes, newest first, exactly as GroupParticipantsChanged was
// broadcast (the same payloads /sync gives), paged by cursor; participants only.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, direct, group, newUsers, register } from './helpers.js';

for (const database of DATABASES) {
  describe(`group changes (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('added, role changed, removed, left: newest first, each as broadcast, the same as /sync carried', async () => {
      const [owner, bob, carol, dave] = newUsers(4);
      await register(app, owner!, carol!, dave!);
      const since = (await app.request(owner!, 'GET', '/sync')).body.data.cursor;
      const id = await group(app, owner!, [bob!]);
      assert.equal((await app.request(owner!, 'POST', `/groups/${id}/participants`, { user_ids: [carol, dave] })).status, 200);
      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}/participants/${bob}`, { role: 'admin' })).status, 204);
      assert.equal((await app.request(bob!, 'DELETE', `/groups/${id}/participants/${carol}`)).status, 204);
      assert.equal((await app.request(dave!, 'POST', `/groups/${id}/leave`)).status, 204);

      const res = await app.request(bob!, 'GET', `/groups/${id}/changes`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body).sort(), ['data', 'next_cursor']);
      assert.equal(res.body.next_cursor, null);
      const kinds = res.body.data.map((c: any) => [c.data.change_type, c.data.actor_user_id, c.data.target_user_ids]);
      assert.deepEqual(kinds, [
        ['removed', dave, [dave]],
        ['removed', bob, [carol]],
        ['role_changed', owner, [bob]],
        ['added', owner, [carol, dave]],
      ]);
      for (const change of res.body.data) {
        assert.deepEqual(Object.keys(change), ['type', 'conversation_id', 'data', 'at']);
        assert.equal(change.type, 'GroupParticipantsChanged');
        assert.equal(change.conversation_id, id);
      }
      // The owner saw every one of them live: /sync carried the same payloads, oldest first.
      const synced = (await app.request(owner!, 'GET', `/sync?since=${encodeURIComponent(since)}`)).body.data.changes.filter((c: any) => c.type === 'GroupParticipantsChanged');
      assert.deepEqual(synced, [...res.body.data].reverse());
    });

    test('paged by cursor; refused to non-participants, for direct conversations and for a bad cursor', async () => {
      const [owner, member, stranger, friend] = newUsers(4);
      await register(app, stranger!, friend!);
      const id = await group(app, owner!, [member!]);
      const added = newUsers(5);
      await register(app, ...added);
      for (const user of added) assert.equal((await app.request(owner!, 'POST', `/groups/${id}/participants`, { user_ids: [user] })).status, 200);
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res: any = await app.request(member!, 'GET', `/groups/${id}/changes?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.ok(res.body.data.length <= 2);
        seen.push(...res.body.data.map((c: any) => c.data.target_user_ids[0]));
        cursor = res.body.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, [...added].reverse(), 'newest first, each once');

      assertError(await app.request(stranger!, 'GET', `/groups/${id}/changes`), 404);
      assertError(await app.request(member!, 'GET', `/groups/${id}/changes?cursor=nonsense`), 422);
      assertError(await app.request(member!, 'GET', `/groups/${id}/changes?limit=101`), 422);
      const directId = await direct(app, friend!, stranger!);
      assertError(await app.request(friend!, 'GET', `/groups/${directId}/changes`), 404);
    });
  });
}
