// Conversations over HTTP: the inbox, find-or-create of direct conversations, one conversation as its
// participant sees it, typing signals, and the 404 that hides conversations from everyone else.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertConversation, assertError, conversation, direct, group, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`conversations (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    describe('GET /conversations (the inbox)', () => {
      test('lists the caller’s conversations, newest activity first', async () => {
        const [me, a, b, c] = newUsers(4);
        const withA = await direct(app, me, a);
        const withB = await direct(app, me, b);
        const withC = await direct(app, me, c);

        let inbox = await app.request(me, 'GET', '/conversations');
        assert.equal(inbox.status, 200);
        assert.deepEqual(inbox.body.data.map((x: any) => x.id), [withC, withB, withA]);
        assert.deepEqual(Object.keys(inbox.body.meta).sort(), ['next_cursor', 'sync_cursor']);
        assert.equal(inbox.body.meta.next_cursor, null);
        assert.equal(typeof inbox.body.meta.sync_cursor, 'string', 'a position in the change feed to GET /sync from');
        inbox.body.data.forEach(assertConversation);

        // A message moves its conversation to the top.
        await send(app, a, withA, 'news');
        inbox = await app.request(me, 'GET', '/conversations');
        assert.deepEqual(inbox.body.data.map((x: any) => x.id), [withA, withC, withB]);
        assert.equal(inbox.body.data[0].last_message.body, 'news');
      });

      test('holds only the caller’s own conversations', async () => {
        const [me, a, b] = newUsers(3);
        const mine = await direct(app, me, a);
        await direct(app, a, b);
        const inbox = await app.request(me, 'GET', '/conversations');
        assert.deepEqual(inbox.body.data.map((x: any) => x.id), [mine]);
      });

      test('pages with limit and meta.next_cursor until the cursor is null', async () => {
        const [me, ...others] = newUsers(6);
        const ids: number[] = [];
        for (const other of others) ids.push(await direct(app, me, other));
        const expected = [...ids].reverse();

        const seen: number[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
          const page = await app.request(me, 'GET', `/conversations${query}`);
          assert.equal(page.status, 200);
          assert.ok(page.body.data.length <= 2);
          seen.push(...page.body.data.map((x: any) => x.id));
          cursor = page.body.meta.next_cursor;
          if (cursor !== null) assert.equal(typeof cursor, 'string');
          pages += 1;
        } while (cursor !== null && pages < 10);
        assert.deepEqual(seen, expected);
        assert.equal(pages, 3);
      });

      test('a cursor the API did not return is refused with 422 naming cursor', async () => {
        const [me] = newUsers(1);
        for (const cursor of ['garbage', Buffer.from('999999999999999:1').toString('base64url'), Buffer.from('1:99999999999999999').toString('base64url')]) {
          const res = await app.request(me, 'GET', `/conversations?cursor=${cursor}`);
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.cursor);
        }
      });

      test('limit must be between 1 and 100', async () => {
        const [me] = newUsers(1);
        for (const limit of ['0', '101', 'many']) {
          const res = await app.request(me, 'GET', `/conversations?limit=${limit}`);
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.limit);
        }
      });
    });

    describe('POST /conversations (find or create the direct conversation)', () => {
      test('creates it with 201, then finds the same one with 200 from either side', async () => {
        const [a, b] = newUsers(2);
        await register(app, a, b);
        const created = await app.request(a, 'POST', '/conversations', { user_id: b });
        assert.equal(created.status, 201);
        assertConversation(created.body.data);
        const again = await app.request(a, 'POST', '/conversations', { user_id: b });
        assert.equal(again.status, 200);
        const fromB = await app.request(b, 'POST', '/conversations', { user_id: a });
        assert.equal(fromB.status, 200);
        assert.equal(again.body.data.id, created.body.data.id);
        assert.equal(fromB.body.data.id, created.body.data.id);
        assert.equal((await app.request(a, 'GET', '/conversations')).body.data.length, 1);
      });

      test('a direct conversation has no name, both users in the preview as members, and nothing unread', async () => {
        const [a, b] = newUsers(2);
        await register(app, a, b);
        const res = await app.request(a, 'POST', '/conversations', { user_id: b });
        const c = res.body.data;
        assert.equal(c.type, 'direct');
        assert.equal(c.name, null);
        assert.equal(c.avatar_url, null);
        assert.equal(c.participant_count, 2);
        assert.deepEqual(
          [...c.participants_preview].sort((x: any, y: any) => x.id - y.id),
          [
            { id: a, name: `User ${a}`, avatar_url: null, role: 'member' },
            { id: b, name: `User ${b}`, avatar_url: null, role: 'member' },
          ],
        );
        assert.equal(c.last_message, null);
        assert.equal(c.unread_count, 0);
        assert.equal(c.last_read_at, null);
      });

      test('refuses a conversation with oneself (422) and with an unknown user (404)', async () => {
        const [a] = newUsers(1);
        const self = await app.request(a, 'POST', '/conversations', { user_id: a });
        assertError(self, 422, 'validation_failed');
        assert.ok(self.body.errors.user_id);
        assertError(await app.request(a, 'POST', '/conversations', { user_id: 987_654_321 }), 404, 'not_found');
      });
    });

    describe('GET /conversations/{id}', () => {
      test('shows the conversation to a participant', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const c = await conversation(app, b, id);
        assertConversation(c);
        assert.equal(c.id, id);
      });

      test('answers 404 to a non-participant, exactly as for a conversation that does not exist', async () => {
        const [a, b, outsider] = newUsers(3);
        const id = await direct(app, a, b);
        await send(app, a, id, 'private');
        const hidden = await app.request(outsider, 'GET', `/conversations/${id}`);
        const missing = await app.request(outsider, 'GET', '/conversations/987654321');
        assertError(hidden, 404, 'not_found');
        assert.deepEqual(hidden.body, missing.body);
        assertError(await app.request(outsider, 'GET', `/conversations/${id}/messages`), 404, 'not_found');
        assertError(await app.request(outsider, 'POST', `/conversations/${id}/messages`, { body: 'hi' }), 404, 'not_found');
        assertError(await app.request(outsider, 'POST', `/conversations/${id}/read`), 404, 'not_found');
        assertError(await app.request(outsider, 'POST', `/conversations/${id}/typing`, { is_typing: true }), 404, 'not_found');
      });

      test('a path id that is not a positive integer is 404', async () => {
        const [a] = newUsers(1);
        for (const id of ['0', '-1', 'abc', '1.5', '99999999999999999999']) {
          assertError(await app.request(a, 'GET', `/conversations/${id}`), 404, 'not_found');
        }
      });
    });

    describe('participants_preview', () => {
      test('holds at most 10 participants, owner and admins first, while participant_count counts all', async () => {
        const [owner, ...members] = newUsers(12);
        const id = await group(app, owner, members);
        const last = members.at(-1)!;
        assert.equal((await app.request(owner, 'PATCH', `/groups/${id}/participants/${last}`, { role: 'admin' })).status, 204);

        const c = await conversation(app, members[0]!, id);
        assert.equal(c.participant_count, 12);
        assert.equal(c.participants_preview.length, 10);
        assert.deepEqual(c.participants_preview.slice(0, 2), [
          { id: owner, name: `User ${owner}`, avatar_url: null, role: 'owner' },
          { id: last, name: `User ${last}`, avatar_url: null, role: 'admin' },
        ]);
        assert.deepEqual(c.participants_preview.slice(2).map((p: any) => p.id), members.slice(0, 8));
        assert.ok(c.participants_preview.slice(2).every((p: any) => p.role === 'member'));
      });
    });

    describe('unread_count', () => {
      test('counts messages after the user’s own read position, sent by others', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const first = await send(app, a, id, 'one');
        const second = await send(app, a, id, 'two');
        await send(app, a, id, 'three');

        assert.equal((await conversation(app, a, id)).unread_count, 0);
        assert.equal((await conversation(app, b, id)).unread_count, 3);

        await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
        assert.equal((await conversation(app, b, id)).unread_count, 2);
        const read = await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: second.id });
        const seen = await conversation(app, b, id);
        assert.equal(seen.unread_count, 1);
        assert.equal(seen.last_read_at, read.body.data.read_at);

        // The inbox shows the same per-user state.
        const inbox = await app.request(b, 'GET', '/conversations');
        assert.equal(inbox.body.data[0].unread_count, 1);
        assert.equal((await conversation(app, a, id)).unread_count, 0);
      });

      test('each participant of a group has their own count', async () => {
        const [owner, m1, m2] = newUsers(3);
        const id = await group(app, owner, [m1, m2]);
        await send(app, owner, id, 'hello all');
        await send(app, m1, id, 'hi');
        assert.equal((await conversation(app, owner, id)).unread_count, 1);
        assert.equal((await conversation(app, m1, id)).unread_count, 1);
        assert.equal((await conversation(app, m2, id)).unread_count, 2);
      });
    });

    describe('POST /conversations/{id}/typing', () => {
      test('a participant’s typing signal is accepted with 204', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const start = await app.request(a, 'POST', `/conversations/${id}/typing`, { is_typing: true });
        assert.equal(start.status, 204);
        assert.equal((await app.request(a, 'POST', `/conversations/${id}/typing`, { is_typing: false })).status, 204);
      });

      test('is_typing is required and must be a boolean', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        for (const body of [{}, { is_typing: 'maybe' }]) {
          const res = await app.request(a, 'POST', `/conversations/${id}/typing`, body);
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.is_typing);
        }
      });
    });
  });
}
