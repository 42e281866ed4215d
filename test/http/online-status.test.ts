// Presence over HTTP: heartbeats and the offline signal, and GET /presence for users who share a conversation
// with the caller (403 for anyone else).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertKeys, direct, group, ISO_UTC, newUsers, PRESENCE_KEYS, register } from './helpers.js';

for (const database of DATABASES) {
  describe(`presence (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const presence = async (viewer: number, ids: number[]) => {
      const res = await app.request(viewer, 'GET', `/presence?user_ids=${ids.join(',')}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assertKeys(res.body, ['data']);
      res.body.data.forEach((p: unknown) => assertKeys(p, PRESENCE_KEYS, 'presence'));
      return res.body.data as { user_id: number; is_online: boolean; last_seen_at: string | null }[];
    };

    test('a heartbeat answers {data: {is_online: true}}, and the user shows online to those who share a conversation', async () => {
      const [a, b] = newUsers(2);
      await direct(app, a, b);
      const beat = await app.request(a, 'POST', '/presence/heartbeat');
      assert.equal(beat.status, 200);
      assert.deepEqual(beat.body, { data: { is_online: true } });
      const [seen] = await presence(b, [a]);
      assert.equal(seen!.user_id, a);
      assert.equal(seen!.is_online, true);
      assert.match(seen!.last_seen_at!, ISO_UTC);
      // Beating again keeps the user online.
      assert.deepEqual((await app.request(a, 'POST', '/presence/heartbeat')).body, { data: { is_online: true } });
      assert.equal((await presence(b, [a]))[0]!.is_online, true);
    });

    test('the offline signal answers {data: {is_online: false}} and keeps the time last seen', async () => {
      const [a, b] = newUsers(2);
      await direct(app, a, b);
      await app.request(a, 'POST', '/presence/heartbeat');
      const off = await app.request(a, 'POST', '/presence/offline');
      assert.equal(off.status, 200);
      assert.deepEqual(off.body, { data: { is_online: false } });
      const [seen] = await presence(b, [a]);
      assert.equal(seen!.is_online, false);
      assert.match(seen!.last_seen_at!, ISO_UTC);
    });

    test('the offline signal works as a page closes: a text/plain keepalive body, or none, is accepted', async () => {
      const [a] = newUsers(1);
      await app.request(a, 'POST', '/presence/heartbeat');
      const beacon = await app.request(a, 'POST', '/presence/offline', 'bye', { 'content-type': 'text/plain;charset=UTF-8' });
      assert.equal(beacon.status, 200);
      assert.deepEqual(beacon.body, { data: { is_online: false } });
      const again = await app.request(a, 'POST', '/presence/offline');
      assert.deepEqual(again.body, { data: { is_online: false } });
    });

    test('a user never seen online is offline with last_seen_at null', async () => {
      const [a, b] = newUsers(2);
      await direct(app, a, b);
      assert.deepEqual(await presence(a, [b]), [{ user_id: b, is_online: false, last_seen_at: null }]);
    });

    test('answers for each requested user, in the order asked, including the caller and group peers', async () => {
      const [me, peer, groupPeer] = newUsers(3);
      await direct(app, me, peer);
      await group(app, groupPeer, [me]);
      await app.request(groupPeer, 'POST', '/presence/heartbeat');
      const result = await presence(me, [groupPeer, me, peer, groupPeer]);
      assert.deepEqual(result.map((p) => [p.user_id, p.is_online]), [[groupPeer, true], [me, false], [peer, false]]);
    });

    test('asking about a user who shares no conversation with the caller is 403', async () => {
      const [me, peer, stranger] = newUsers(3);
      await direct(app, me, peer);
      await register(app, stranger);
      assertError(await app.request(me, 'GET', `/presence?user_ids=${stranger}`), 403, 'forbidden');
      assertError(await app.request(me, 'GET', `/presence?user_ids=${peer},${stranger}`), 403, 'forbidden');
      assertError(await app.request(me, 'GET', '/presence?user_ids=987654321'), 403, 'forbidden');
    });

    test('leaving the only shared group ends the right to see presence', async () => {
      const [owner, member] = newUsers(2);
      const id = await group(app, owner, [member]);
      await presence(member, [owner]);
      await app.request(member, 'POST', `/groups/${id}/leave`);
      assertError(await app.request(member, 'GET', `/presence?user_ids=${owner}`), 403, 'forbidden');
    });

    test('user_ids must be a comma-separated list of at most 100 ids (422 naming user_ids)', async () => {
      const [me] = newUsers(1);
      for (const query of ['', '?user_ids=', '?user_ids=a,b', '?user_ids=1,,2', '?user_ids=-1', `?user_ids=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`]) {
        const res = await app.request(me, 'GET', `/presence${query}`);
        assertError(res, 422, 'validation_failed');
        assert.ok(res.body.errors.user_ids, query);
      }
    });

    test('presence needs a token', async () => {
      assertError(await app.request(null, 'POST', '/presence/heartbeat'), 401, 'unauthenticated');
      assertError(await app.request(null, 'POST', '/presence/offline'), 401, 'unauthenticated');
      assertError(await app.request(null, 'GET', '/presence?user_ids=1'), 401, 'unauthenticated');
    });
  });
}
