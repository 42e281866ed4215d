// Group bans (docs/api.md "Moderation"): owner and admins ban (an admin members only, nobody the owner); a banned
// member is removed (GroupMembershipRevoked "banned", GroupParticipantsChanged "removed") and is not added back
// (403 banned) until unbanned or `until` passes; the list holds the bans in force; each writes the audit log.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, call, group, newUsers, register, send } from './helpers.js';

const BAN_KEYS = ['created_at', 'reason', 'until', 'user_id'];

for (const database of DATABASES) {
  describe(`group bans (${database})`, () => {
    let app: TestApp;
    const audit = async (query: string) => (await call(app, null, 'GET', `/audit?${query}`, undefined, { 'x-chat-server-key': app.config.serverKey })).body.data;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('a ban removes the member, who cannot be added back (403 banned) until unbanned; both are in the audit log', async () => {
      const [owner, member, other] = newUsers(3);
      const id = await group(app, owner!, [member!, other!]);
      const since = (await app.request(member!, 'GET', '/sync')).body.data.cursor;

      const ban = await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: member, reason: 'spamming' });
      assert.equal(ban.status, 201, JSON.stringify(ban.body));
      assert.deepEqual(Object.keys(ban.body.data).sort(), BAN_KEYS);
      assert.equal(ban.body.data.user_id, member);
      assert.equal(ban.body.data.reason, 'spamming');
      assert.equal(ban.body.data.until, null);

      // Removed: they no longer see the group nor send to it; they heard why.
      assertError(await app.request(member!, 'GET', `/conversations/${id}`), 404);
      assertError(await app.request(member!, 'POST', `/conversations/${id}/messages`, { body: 'still here?' }), 404);
      const changes = (await app.request(member!, 'GET', `/sync?since=${encodeURIComponent(since)}`)).body.data.changes;
      const revoked = changes.find((c: any) => c.type === 'GroupMembershipRevoked');
      assert.deepEqual(revoked.data, { conversation_id: id, user_id: member, reason: 'banned' });
      const removed = changes.find((c: any) => c.type === 'GroupParticipantsChanged');
      assert.equal(removed.data.change_type, 'removed');
      assert.deepEqual(removed.data.target_user_ids, [member]);

      const list = await app.request(owner!, 'GET', `/groups/${id}/bans`);
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.data, [ban.body.data]);

      assertError(await app.request(owner!, 'POST', `/groups/${id}/participants`, { user_ids: [member] }), 403, 'banned');
      assert.equal((await app.request(owner!, 'DELETE', `/groups/${id}/bans/${member}`)).status, 204);
      assertError(await app.request(owner!, 'DELETE', `/groups/${id}/bans/${member}`), 404);
      assert.deepEqual((await app.request(owner!, 'GET', `/groups/${id}/bans`)).body.data, []);
      assert.equal((await app.request(owner!, 'POST', `/groups/${id}/participants`, { user_ids: [member] })).status, 200);

      const entries = await audit(`conversation_id=${id}`);
      assert.deepEqual(entries.map((e: any) => e.action), ['group_unban', 'group_ban']);
      assert.equal(entries[1].actor_id, owner);
      assert.equal(entries[1].target_user_id, member);
      assert.deepEqual(entries[1].details, { reason: 'spamming', until: null });
    });

    test('a ban with until lapses on its own; an until in the past or not a date answers 422', async () => {
      const [owner, member] = newUsers(2);
      const id = await group(app, owner!, [member!]);
      const until = new Date(Date.now() + 1500).toISOString();
      const ban = await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: member, until });
      assert.equal(ban.status, 201);
      assert.equal(ban.body.data.until, until);
      assertError(await app.request(owner!, 'POST', `/groups/${id}/participants`, { user_ids: [member] }), 403, 'banned');
      await new Promise((resolve) => setTimeout(resolve, 1600));
      assert.deepEqual((await app.request(owner!, 'GET', `/groups/${id}/bans`)).body.data, [], 'a lapsed ban is not in force');
      assert.equal((await app.request(owner!, 'POST', `/groups/${id}/participants`, { user_ids: [member] })).status, 200);

      assertError(await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: member, until: '2001-01-01T00:00:00Z' }), 422);
      assertError(await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: member, until: 'tomorrow' }), 422);
      assertError(await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: 999_999_991 }), 422);
      assertError(await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: member, reason: 'x'.repeat(501) }), 422);
    });

    test('an admin bans members only; nobody bans the owner; a member may not ban nor list (403); strangers get 404', async () => {
      const [owner, admin, admin2, member, stranger] = newUsers(5);
      await register(app, stranger!);
      const id = await group(app, owner!, [admin!, admin2!, member!]);
      for (const a of [admin, admin2]) assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}/participants/${a}`, { role: 'admin' })).status, 204);
      assertError(await app.request(admin!, 'POST', `/groups/${id}/bans`, { user_id: owner }), 403, 'forbidden_role');
      assertError(await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: owner }), 403, 'forbidden_role');
      assertError(await app.request(admin!, 'POST', `/groups/${id}/bans`, { user_id: admin2 }), 403, 'forbidden_role');
      assertError(await app.request(member!, 'POST', `/groups/${id}/bans`, { user_id: admin }), 403, 'forbidden_role');
      assertError(await app.request(member!, 'GET', `/groups/${id}/bans`), 403, 'forbidden_role');
      assertError(await app.request(stranger!, 'GET', `/groups/${id}/bans`), 404);
      assert.equal((await app.request(admin!, 'POST', `/groups/${id}/bans`, { user_id: member })).status, 201);
      // The owner bans an admin; a user who is not a member may be banned ahead.
      assert.equal((await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: admin2 })).status, 201);
      assert.equal((await app.request(owner!, 'POST', `/groups/${id}/bans`, { user_id: stranger })).status, 201);
      assert.deepEqual((await app.request(owner!, 'GET', `/groups/${id}/bans`)).body.data.map((b: any) => b.user_id).sort(), [admin2, member, stranger].sort());
      assert.equal((await app.request(owner!, 'GET', `/conversations/${id}`)).body.data.participant_count, 2);
    });

    test('removing a participant and changing a role are in the audit log; so is deleting the group', async () => {
      const [owner, member, other] = newUsers(3);
      const id = await group(app, owner!, [member!, other!]);
      await send(app, member!, id, 'hi');
      assert.equal((await app.request(owner!, 'PATCH', `/groups/${id}/participants/${member}`, { role: 'admin' })).status, 204);
      assert.equal((await app.request(owner!, 'DELETE', `/groups/${id}/participants/${other}`)).status, 204);
      assert.equal((await app.request(owner!, 'DELETE', `/groups/${id}`)).status, 204);
      const entries = await audit(`conversation_id=${id}`);
      assert.deepEqual(entries.map((e: any) => e.action), ['group_deleted', 'participant_removed', 'role_changed']);
      assert.deepEqual(entries[2].details, { from: 'member', to: 'admin' });
      assert.equal(entries[1].target_user_id, other);
    });
  });
}
