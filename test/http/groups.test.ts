// Groups over HTTP: creation (the creator owns it), settings, participants and roles, leaving (with the owner's
// hand-over) and deletion. Role refusals are 403 forbidden_role; groups one is not in are 404.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertConversation, assertError, conversation, direct, group, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`groups (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    /** Role of each user in the group, as a participant sees it in the preview. */
    async function roles(viewer: number, id: number): Promise<Record<number, string>> {
      const c = await conversation(app, viewer, id);
      return Object.fromEntries(c.participants_preview.map((p: any) => [p.id, p.role]));
    }
    const promote = (owner: number, id: number, userId: number, role = 'admin') =>
      app.request(owner, 'PATCH', `/groups/${id}/participants/${userId}`, { role });

    describe('POST /groups', () => {
      test('creates a group with 201; the creator becomes its owner, the others members', async () => {
        const [owner, m1, m2] = newUsers(3);
        await register(app, m1, m2);
        const res = await app.request(owner, 'POST', '/groups', { name: '  Book club ', user_ids: [m1, m2, owner, m1], avatar_url: 'https://example.test/g.png' });
        assert.equal(res.status, 201);
        const c = res.body.data;
        assertConversation(c);
        assert.equal(c.type, 'group');
        assert.equal(c.name, 'Book club');
        assert.equal(c.avatar_url, 'https://example.test/g.png');
        assert.equal(c.participant_count, 3);
        assert.deepEqual(c.participants_preview, [
          { id: owner, name: `User ${owner}`, avatar_url: null, role: 'owner' },
          { id: m1, name: `User ${m1}`, avatar_url: null, role: 'member' },
          { id: m2, name: `User ${m2}`, avatar_url: null, role: 'member' },
        ]);
        assert.equal(c.last_message, null);
        assert.equal(c.unread_count, 0);
        // Every participant now has it in their inbox.
        for (const u of [owner, m1, m2]) {
          assert.ok((await app.request(u, 'GET', '/conversations')).body.data.some((x: any) => x.id === c.id));
        }
      });

      test('a group may start with the owner alone', async () => {
        const [owner] = newUsers(1);
        const res = await app.request(owner, 'POST', '/groups', { name: 'Notes to self', user_ids: [] });
        assert.equal(res.status, 201);
        assert.equal(res.body.data.participant_count, 1);
      });

      test('unknown users, a blank name or a missing field are refused with 422 naming the field', async () => {
        const [owner, m1] = newUsers(2);
        await register(app, m1);
        const cases: [unknown, string][] = [
          [{ name: 'G', user_ids: [m1, 987_654_321] }, 'user_ids'],
          [{ name: '   ', user_ids: [m1] }, 'name'],
          [{ name: '', user_ids: [m1] }, 'name'],
          [{ name: 'x'.repeat(101), user_ids: [m1] }, 'name'],
          [{ user_ids: [m1] }, 'name'],
          [{ name: 'G' }, 'user_ids'],
          [{ name: 'G', user_ids: [0] }, 'user_ids.0'],
        ];
        for (const [body, field] of cases) {
          const res = await app.request(owner, 'POST', '/groups', body);
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors[field], `${JSON.stringify(body)} names ${field}: ${JSON.stringify(res.body.errors)}`);
        }
      });
    });

    describe('consent: blocks and the rate of new groups', () => {
      test('a block between two users, either way, stops either putting the other in a group (403 blocked, nothing done)', async () => {
        const [adder, blocker, blocked, bystander, admin] = newUsers(5);
        await register(app, adder, blocker, blocked, bystander, admin);
        assert.equal((await app.request(blocker, 'POST', '/blocks', { user_id: adder })).status, 200); // blocker blocked the adder
        assert.equal((await app.request(adder, 'POST', '/blocks', { user_id: blocked })).status, 200); // the adder blocked someone

        const before = (await app.request(blocker, 'GET', '/conversations')).body.data.length;
        for (const target of [blocker, blocked]) {
          const res = await app.request(adder, 'POST', '/groups', { name: 'Around you', user_ids: [bystander, target] });
          assertError(res, 403, 'blocked');
          assert.match(res.body.message, new RegExp(`users ${target} `));
        }
        assert.equal((await app.request(blocker, 'GET', '/conversations')).body.data.length, before, 'no group was made');

        const id = await group(app, adder, [bystander, admin]);
        assert.equal((await promote(adder, id, admin)).status, 204);
        assertError(await app.request(adder, 'POST', `/groups/${id}/participants`, { user_ids: [blocker] }), 403, 'blocked');
        assertError(await app.request(adder, 'POST', `/groups/${id}/participants`, { user_ids: [bystander, blocked] }), 403, 'blocked');
        assert.equal((await conversation(app, adder, id)).participant_count, 3, 'nobody was added');
        // Another admin, with no block between them, may add the blocker: the block is between two people.
        assert.equal((await app.request(admin, 'POST', `/groups/${id}/participants`, { user_ids: [blocker] })).status, 200);
        // After the unblock, the adder may add them again.
        assert.equal((await app.request(adder, 'DELETE', `/blocks/${blocked}`)).status, 200);
        assert.equal((await app.request(adder, 'POST', `/groups/${id}/participants`, { user_ids: [blocked] })).status, 200);
      });

      test('a user may create 30 groups in an hour (CHAT_RATE_GROUPS_PER_HOUR); the 31st is 429 with a Retry-After of up to an hour', async () => {
        const [creator, member] = newUsers(2);
        await register(app, member);
        for (let i = 0; i < 30; i++) {
          const res = await app.request(creator, 'POST', '/groups', { name: `G${i}`, user_ids: [member] });
          assert.equal(res.status, 201, `group ${i + 1}: ${JSON.stringify(res.body)}`);
        }
        const refused = await app.request(creator, 'POST', '/groups', { name: 'One too many', user_ids: [member] });
        assertError(refused, 429, 'rate_limited');
        assert.match(refused.body.message, /groups created/);
        const retryAfter = Number(refused.headers.get('retry-after'));
        assert.ok(retryAfter > 3000 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
        assert.equal((await app.request(member, 'GET', '/conversations?limit=100')).body.data.length, 30);
        // Others may still create groups, and the creator may still change the ones it has.
        assert.equal((await app.request(member, 'POST', '/groups', { name: 'Mine', user_ids: [creator] })).status, 201);
      });
    });

    describe('PATCH /groups/{id}', () => {
      test('a group avatar must be an http(s) URL of a public host: anything else is 422 on avatar_url, on create and on change', async () => {
        const [owner] = newUsers(1);
        const id = await group(app, owner, []);
        for (const avatar_url of [
          'javascript:alert(1)',
          'JavaScript:alert(1)',
          'data:image/svg+xml,<svg/>',
          'file:///etc/passwd',
          'ftp://example.test/a.png',
          'not a url',
          '/relative.png',
          'https://user:secret@example.test/a.png',
          'http://127.0.0.1/a.png',
          'http://2130706433/a.png', // 127.0.0.1 as a number
          'http://10.0.0.5/a.png',
          'http://169.254.169.254/latest/meta-data',
          'http://[::1]/a.png',
          'http://[::ffff:192.168.0.1]/a.png',
          'http://[fd00::1]/a.png',
          'http://localhost:8080/a.png',
          'http://app.localhost/a.png',
          'http://router/a.png',
        ]) {
          for (const res of [
            await app.request(owner, 'POST', '/groups', { name: 'G', user_ids: [], avatar_url }),
            await app.request(owner, 'PATCH', `/groups/${id}`, { avatar_url }),
          ]) {
            assertError(res, 422, 'validation_failed');
            assert.deepEqual(Object.keys(res.body.errors), ['avatar_url'], avatar_url);
          }
        }
        for (const avatar_url of ['https://cdn.example.test/g.png', 'http://example.test:8080/a.png?size=64', 'https://93.184.215.14/a.png', null]) {
          const res = await app.request(owner, 'PATCH', `/groups/${id}`, { avatar_url });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          assert.equal(res.body.data.avatar_url, avatar_url);
        }
      });

      test('the owner and admins may rename a group and change its avatar; members may not', async () => {
        const [owner, admin, member] = newUsers(3);
        const id = await group(app, owner, [admin, member], 'Old');
        await promote(owner, id, admin);

        const byAdmin = await app.request(admin, 'PATCH', `/groups/${id}`, { name: 'New', avatar_url: 'https://example.test/a.png' });
        assert.equal(byAdmin.status, 200);
        assertConversation(byAdmin.body.data);
        assert.equal(byAdmin.body.data.name, 'New');
        assert.equal(byAdmin.body.data.avatar_url, 'https://example.test/a.png');

        const byOwner = await app.request(owner, 'PATCH', `/groups/${id}`, { avatar_url: null });
        assert.equal(byOwner.status, 200);
        assert.equal(byOwner.body.data.name, 'New');
        assert.equal(byOwner.body.data.avatar_url, null);

        assertError(await app.request(member, 'PATCH', `/groups/${id}`, { name: 'Mine' }), 403, 'forbidden_role');
        assert.equal((await conversation(app, member, id)).name, 'New');
      });

      test('a direct conversation is not a group (404)', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        assertError(await app.request(a, 'PATCH', `/groups/${id}`, { name: 'Nope' }), 404, 'not_found');
        assertError(await app.request(a, 'POST', `/groups/${id}/leave`), 404, 'not_found');
        assertError(await app.request(a, 'DELETE', `/groups/${id}`), 404, 'not_found');
      });
    });

    describe('POST /groups/{id}/participants', () => {
      test('the owner and admins add participants; members may not', async () => {
        const [owner, admin, member, x, y] = newUsers(5);
        const id = await group(app, owner, [admin, member]);
        await promote(owner, id, admin);
        await register(app, x, y);

        const res = await app.request(admin, 'POST', `/groups/${id}/participants`, { user_ids: [x] });
        assert.equal(res.status, 200);
        assertConversation(res.body.data);
        assert.equal(res.body.data.participant_count, 4);
        assert.equal((await roles(x, id))[x], 'member');

        assertError(await app.request(member, 'POST', `/groups/${id}/participants`, { user_ids: [y] }), 403, 'forbidden_role');
        assertError(await app.request(y, 'GET', `/conversations/${id}`), 404, 'not_found');
      });

      test('adding someone already there changes nothing; unknown users are refused', async () => {
        const [owner, member] = newUsers(2);
        const id = await group(app, owner, [member]);
        const again = await app.request(owner, 'POST', `/groups/${id}/participants`, { user_ids: [member, owner] });
        assert.equal(again.status, 200);
        assert.equal(again.body.data.participant_count, 2);
        const unknown = await app.request(owner, 'POST', `/groups/${id}/participants`, { user_ids: [987_654_321] });
        assertError(unknown, 422, 'validation_failed');
        assert.ok(unknown.body.errors.user_ids);
      });
    });

    describe('PATCH /groups/{id}/participants/{user_id} (roles)', () => {
      test('only the owner changes roles', async () => {
        const [owner, admin, member] = newUsers(3);
        const id = await group(app, owner, [admin, member]);
        assert.equal((await promote(owner, id, admin)).status, 204);
        assert.equal((await roles(member, id))[admin], 'admin');

        assertError(await promote(admin, id, member), 403, 'forbidden_role');
        assertError(await promote(member, id, member), 403, 'forbidden_role');
        assert.equal((await roles(member, id))[member], 'member');

        assert.equal((await promote(owner, id, admin, 'member')).status, 204);
        assert.equal((await roles(member, id))[admin], 'member');
      });

      test('making someone owner hands ownership over: the previous owner becomes an admin', async () => {
        const [owner, heir] = newUsers(2);
        const id = await group(app, owner, [heir]);
        assert.equal((await promote(owner, id, heir, 'owner')).status, 204);
        assert.deepEqual(await roles(owner, id), { [heir]: 'owner', [owner]: 'admin' });
        // The new owner now holds the owner's powers, the old one no longer.
        assertError(await app.request(owner, 'DELETE', `/groups/${id}`), 403, 'forbidden_role');
      });

      test('the owner cannot change their own role (409), nor the role of a non-participant (404)', async () => {
        const [owner, member, stranger] = newUsers(3);
        const id = await group(app, owner, [member]);
        await register(app, stranger);
        assertError(await promote(owner, id, owner, 'member'), 409, 'conflict');
        assertError(await promote(owner, id, stranger), 404, 'not_found');
      });

      test('the role must be owner, admin or member', async () => {
        const [owner, member] = newUsers(2);
        const id = await group(app, owner, [member]);
        const res = await promote(owner, id, member, 'moderator');
        assertError(res, 422, 'validation_failed');
        assert.ok(res.body.errors.role);
      });
    });

    describe('DELETE /groups/{id}/participants/{user_id}', () => {
      test('the owner may remove anyone, admins included', async () => {
        const [owner, admin, member] = newUsers(3);
        const id = await group(app, owner, [admin, member]);
        await promote(owner, id, admin);
        assert.equal((await app.request(owner, 'DELETE', `/groups/${id}/participants/${admin}`)).status, 204);
        assert.equal((await app.request(owner, 'DELETE', `/groups/${id}/participants/${member}`)).status, 204);
        assert.equal((await conversation(app, owner, id)).participant_count, 1);
      });

      test('an admin may remove members but not other admins or the owner', async () => {
        const [owner, admin, otherAdmin, member] = newUsers(4);
        const id = await group(app, owner, [admin, otherAdmin, member]);
        await promote(owner, id, admin);
        await promote(owner, id, otherAdmin);

        assertError(await app.request(admin, 'DELETE', `/groups/${id}/participants/${otherAdmin}`), 403, 'forbidden_role');
        assertError(await app.request(admin, 'DELETE', `/groups/${id}/participants/${owner}`), 403, 'forbidden_role');
        assert.equal((await app.request(admin, 'DELETE', `/groups/${id}/participants/${member}`)).status, 204);
        assert.deepEqual(await roles(owner, id), { [owner]: 'owner', [admin]: 'admin', [otherAdmin]: 'admin' });
      });

      test('a member may remove nobody', async () => {
        const [owner, m1, m2] = newUsers(3);
        const id = await group(app, owner, [m1, m2]);
        assertError(await app.request(m1, 'DELETE', `/groups/${id}/participants/${m2}`), 403, 'forbidden_role');
      });

      test('a removed participant loses the conversation at once', async () => {
        const [owner, member] = newUsers(2);
        const id = await group(app, owner, [member]);
        await send(app, owner, id, 'before');
        await app.request(owner, 'DELETE', `/groups/${id}/participants/${member}`);
        assertError(await app.request(member, 'GET', `/conversations/${id}`), 404, 'not_found');
        assertError(await app.request(member, 'GET', `/conversations/${id}/messages`), 404, 'not_found');
        assertError(await app.request(member, 'POST', `/conversations/${id}/messages`, { body: 'hello?' }), 404, 'not_found');
        assert.ok(!(await app.request(member, 'GET', '/conversations')).body.data.some((x: any) => x.id === id));
      });

      test('removing oneself is leaving (409), and removing a non-participant is 404', async () => {
        const [owner, member, stranger] = newUsers(3);
        const id = await group(app, owner, [member]);
        await register(app, stranger);
        assertError(await app.request(owner, 'DELETE', `/groups/${id}/participants/${owner}`), 409, 'conflict');
        assertError(await app.request(owner, 'DELETE', `/groups/${id}/participants/${stranger}`), 404, 'not_found');
      });
    });

    describe('POST /groups/{id}/leave', () => {
      test('a member leaves: the group is gone for them and one participant fewer for the others', async () => {
        const [owner, member] = newUsers(2);
        const id = await group(app, owner, [member]);
        assert.equal((await app.request(member, 'POST', `/groups/${id}/leave`)).status, 204);
        assertError(await app.request(member, 'GET', `/conversations/${id}`), 404, 'not_found');
        assert.equal((await conversation(app, owner, id)).participant_count, 1);
        assertError(await app.request(member, 'POST', `/groups/${id}/leave`), 404, 'not_found');
      });

      test('an owner leaving hands ownership to the longest-standing admin', async () => {
        const [owner, earlyMember, olderAdmin, newerAdmin] = newUsers(4);
        const id = await group(app, owner, [earlyMember, olderAdmin, newerAdmin]);
        // Promotion order does not matter; time in the group does.
        await promote(owner, id, newerAdmin);
        await promote(owner, id, olderAdmin);
        assert.equal((await app.request(owner, 'POST', `/groups/${id}/leave`)).status, 204);
        assert.deepEqual(await roles(earlyMember, id), { [olderAdmin]: 'owner', [newerAdmin]: 'admin', [earlyMember]: 'member' });
      });

      test('an owner leaving a group without admins hands ownership to the longest-standing member', async () => {
        const [owner, first, second] = newUsers(3);
        const id = await group(app, owner, [first, second]);
        assert.equal((await app.request(owner, 'POST', `/groups/${id}/leave`)).status, 204);
        assert.deepEqual(await roles(second, id), { [first]: 'owner', [second]: 'member' });
        assert.equal((await app.request(first, 'PATCH', `/groups/${id}`, { name: 'Mine now' })).status, 200);
      });

      test('the last participant leaving ends the group', async () => {
        const [owner] = newUsers(1);
        const id = await group(app, owner, []);
        assert.equal((await app.request(owner, 'POST', `/groups/${id}/leave`)).status, 204);
        assertError(await app.request(owner, 'GET', `/conversations/${id}`), 404, 'not_found');
      });
    });

    describe('DELETE /groups/{id}', () => {
      test('the owner deletes the group for every participant', async () => {
        const [owner, admin, member] = newUsers(3);
        const id = await group(app, owner, [admin, member]);
        await send(app, member, id, 'last words');
        assert.equal((await app.request(owner, 'DELETE', `/groups/${id}`)).status, 204);
        for (const u of [owner, admin, member]) {
          assertError(await app.request(u, 'GET', `/conversations/${id}`), 404, 'not_found');
          assert.ok(!(await app.request(u, 'GET', '/conversations')).body.data.some((x: any) => x.id === id));
        }
      });

      test('admins and members may not delete a group (403 forbidden_role)', async () => {
        const [owner, admin, member] = newUsers(3);
        const id = await group(app, owner, [admin, member]);
        await promote(owner, id, admin);
        assertError(await app.request(admin, 'DELETE', `/groups/${id}`), 403, 'forbidden_role');
        assertError(await app.request(member, 'DELETE', `/groups/${id}`), 403, 'forbidden_role');
        assert.equal((await conversation(app, owner, id)).participant_count, 3);
      });

      test('a non-participant gets 404 for every group operation', async () => {
        const [owner, member, outsider] = newUsers(3);
        const id = await group(app, owner, [member]);
        assertError(await app.request(outsider, 'PATCH', `/groups/${id}`, { name: 'x' }), 404, 'not_found');
        assertError(await app.request(outsider, 'POST', `/groups/${id}/participants`, { user_ids: [outsider] }), 404, 'not_found');
        assertError(await app.request(outsider, 'DELETE', `/groups/${id}/participants/${member}`), 404, 'not_found');
        assertError(await app.request(outsider, 'PATCH', `/groups/${id}/participants/${member}`, { role: 'admin' }), 404, 'not_found');
        assertError(await app.request(outsider, 'POST', `/groups/${id}/leave`), 404, 'not_found');
        assertError(await app.request(outsider, 'DELETE', `/groups/${id}`), 404, 'not_found');
      });
    });
  });
}
