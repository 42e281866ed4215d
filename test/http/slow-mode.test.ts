// A group's sending rules (docs/api.md "Moderation"): PATCH /groups/{id} sets slow_mode_s (0 to 3600) and frozen
// (owner, admin), the ConversationResource shows both; in slow mode a member sends once per window (429 slow_mode
// with Retry-After), owner and admins as they like; a frozen group takes only its owner's and admins' messages
// (403 frozen). Each change is in the audit log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertConversation, assertError, call, group, newUsers, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`slow mode and frozen groups (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('slow mode: a member sends once per window (429 slow_mode, Retry-After), thread replies too; owner and admins are not held', async () => {
      const [owner, admin, member] = newUsers(3);
      const id = await group(app, owner!, [admin!, member!]);
      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}/participants/${admin}`, { role: 'admin' })).status, 204);
      const patched = await app.request(admin!, 'PATCH', `/groups/${id}`, { slow_mode_s: 2 });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assertConversation(patched.body.data);
      assert.equal(patched.body.data.slow_mode_s, 2);
      assert.equal(patched.body.data.frozen, false);

      const root = await send(app, member!, id, 'one');
      const refused = await app.request(member!, 'POST', `/conversations/${id}/messages`, { body: 'two' });
      assertError(refused, 429, 'slow_mode');
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 2, `Retry-After ${retryAfter}`);
      assertError(await app.request(member!, 'POST', `/conversations/${id}/messages`, { body: 'reply', thread_id: root.id }), 429, 'slow_mode');
      for (let i = 0; i < 3; i++) await send(app, owner!, id, `owner ${i}`);
      for (let i = 0; i < 3; i++) await send(app, admin!, id, `admin ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      await send(app, member!, id, { body: 'reply', thread_id: root.id });
      assertError(await app.request(member!, 'POST', `/conversations/${id}/messages`, { body: 'three' }), 429, 'slow_mode');

      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}`, { slow_mode_s: 0 })).body.data.slow_mode_s, 0);
      await send(app, member!, id, 'free again');
      await send(app, member!, id, 'and again');
    });

    test('frozen: only owner and admins send (403 frozen) until unfrozen; a member may not change either setting; 3601 s answers 422', async () => {
      const [owner, member] = newUsers(2);
      const id = await group(app, owner!, [member!]);
      assertError(await app.request(member!, 'PATCH', `/groups/${id}`, { frozen: true }), 403, 'forbidden_role');
      assertError(await app.request(member!, 'PATCH', `/groups/${id}`, { slow_mode_s: 10 }), 403, 'forbidden_role');
      assertError(await app.request(owner!, 'PATCH', `/groups/${id}`, { slow_mode_s: 3601 }), 422);
      assertError(await app.request(owner!, 'PATCH', `/groups/${id}`, { slow_mode_s: -1 }), 422);
      assertError(await app.request(owner!, 'PATCH', `/groups/${id}`, { frozen: 'yes' }), 422);
      const frozen = await app.request(owner!, 'PATCH', `/groups/${id}`, { frozen: true });
      assert.equal(frozen.body.data.frozen, true);
      assert.equal((await app.request(member!, 'GET', `/conversations/${id}`)).body.data.frozen, true);
      assertError(await app.request(member!, 'POST', `/conversations/${id}/messages`, { body: 'hello?' }), 403, 'frozen');
      await send(app, owner!, id, 'announcement');
      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}`, { frozen: false })).body.data.frozen, false);
      await send(app, member!, id, 'thanks');

      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}`, { slow_mode_s: 30 })).status, 200);
      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}`, { slow_mode_s: 30 })).status, 200, 'unchanged: no entry');
      const entries = (await call(app, null, 'GET', `/audit?conversation_id=${id}`, undefined, { 'x-chat-server-key': app.config.serverKey })).body.data;
      assert.deepEqual(entries.map((e: any) => e.action), ['slow_mode_changed', 'group_unfrozen', 'group_frozen']);
      assert.deepEqual(entries[0].details, { from: 0, to: 30 });
    });
  });
}
