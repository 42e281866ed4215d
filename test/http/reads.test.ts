// Read tracking over HTTP: POST /conversations/{id}/read moves the caller's read position (forward only), and
// unread_count is what lies after it, sent by others, not deleted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertKeys, conversation, direct, group, ISO_UTC, newUsers, register, send } from './helpers.js';

const READ_POSITION_KEYS = ['last_read_at', 'last_read_message_id', 'user_id'];

for (const database of DATABASES) {
  describe(`reads (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('without a message_id, marks everything up to the latest message read', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      await send(app, a, id, 'one');
      const latest = await send(app, a, id, 'two');

      const res = await app.request(b, 'POST', `/conversations/${id}/read`);
      assert.equal(res.status, 200);
      assertKeys(res.body, ['data']);
      assertKeys(res.body.data, ['conversation_id', 'last_read_message_id', 'read_at', 'user_id']);
      assert.equal(res.body.data.conversation_id, id);
      assert.equal(res.body.data.user_id, b);
      assert.equal(res.body.data.last_read_message_id, latest.id);
      assert.match(res.body.data.read_at, ISO_UTC);

      const seen = await conversation(app, b, id);
      assert.equal(seen.unread_count, 0);
      assert.equal(seen.last_read_at, res.body.data.read_at);
    });

    test('an empty JSON object body reads the same as no body', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const latest = await send(app, a, id, 'x');
      const res = await app.request(b, 'POST', `/conversations/${id}/read`, {});
      assert.equal(res.status, 200);
      assert.equal(res.body.data.last_read_message_id, latest.id);
    });

    test('with a message_id, the messages after it stay unread', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await send(app, a, id, 'one');
      await send(app, a, id, 'two');
      await send(app, a, id, 'three');
      const res = await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
      assert.equal(res.body.data.last_read_message_id, first.id);
      assert.equal((await conversation(app, b, id)).unread_count, 2);
    });

    test('the read position only moves forward', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await send(app, a, id, 'one');
      const second = await send(app, a, id, 'two');
      await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: second.id });
      const back = await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
      assert.equal(back.status, 200);
      assert.equal(back.body.data.last_read_message_id, second.id);
      assert.equal((await conversation(app, b, id)).unread_count, 0);
    });

    test('one’s own messages are never unread', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const theirs = await send(app, a, id, 'question');
      await send(app, b, id, 'answer 1');
      await send(app, b, id, 'answer 2');
      await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: theirs.id });
      assert.equal((await conversation(app, b, id)).unread_count, 0);
      assert.equal((await conversation(app, a, id)).unread_count, 2);
    });

    test('a reader’s position does not change anyone else’s count', async () => {
      const [owner, m1, m2] = newUsers(3);
      const id = await group(app, owner, [m1, m2]);
      await send(app, owner, id, 'a');
      await send(app, owner, id, 'b');
      await app.request(m1, 'POST', `/conversations/${id}/read`);
      assert.equal((await conversation(app, m1, id)).unread_count, 0);
      assert.equal((await conversation(app, m2, id)).unread_count, 2);
      assert.equal((await conversation(app, m2, id)).last_read_at, null);
    });

    test('deleted messages after the position are not counted', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await send(app, a, id, 'one');
      const gone = await send(app, a, id, 'two');
      await send(app, a, id, 'three');
      await app.request(a, 'DELETE', `/messages/${gone.id}`);
      await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
      assert.equal((await conversation(app, b, id)).unread_count, 1);
    });

    test('a conversation without messages reads at position 0', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const res = await app.request(a, 'POST', `/conversations/${id}/read`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.last_read_message_id, 0);
      assert.equal((await conversation(app, a, id)).unread_count, 0);
    });

    test('participants added to a group start with its history read', async () => {
      const [owner, early, late] = newUsers(3);
      const id = await group(app, owner, [early]);
      await send(app, owner, id, 'before you came');
      await register(app, late);
      assert.equal((await app.request(owner, 'POST', `/groups/${id}/participants`, { user_ids: [late] })).status, 200);
      assert.equal((await conversation(app, late, id)).unread_count, 0);
      assert.equal((await conversation(app, early, id)).unread_count, 1);
      await send(app, owner, id, 'welcome');
      assert.equal((await conversation(app, late, id)).unread_count, 1);
    });

    test('message_id must be a message of this conversation (422 naming message_id)', async () => {
      const [a, b, c] = newUsers(3);
      const id = await direct(app, a, b);
      const elsewhere = await send(app, a, await direct(app, a, c), 'other');
      for (const messageId of [elsewhere.id, 987_654_321]) {
        const res = await app.request(a, 'POST', `/conversations/${id}/read`, { message_id: messageId });
        assertError(res, 422, 'validation_failed');
        assert.ok(res.body.errors.message_id);
      }
      const wrongType = await app.request(a, 'POST', `/conversations/${id}/read`, { message_id: 'latest' });
      assertError(wrongType, 422, 'validation_failed');
      assert.ok(wrongType.body.errors.message_id);
    });

    test('a non-participant gets 404', async () => {
      const [a, b, outsider] = newUsers(3);
      const id = await direct(app, a, b);
      await send(app, a, id, 'x');
      assertError(await app.request(outsider, 'POST', `/conversations/${id}/read`), 404, 'not_found');
    });

    // GET /conversations/{id}/reads (v1.1): every participant's read position, so receipts survive a reload.

    async function reads(userId: number, conversationId: number, query = ''): Promise<{ data: any[]; meta: { next_cursor: string | null } }> {
      const res = await app.request(userId, 'GET', `/conversations/${conversationId}/reads${query}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assertKeys(res.body, ['data', 'meta']);
      assertKeys(res.body.meta, ['next_cursor']);
      for (const position of res.body.data) assertKeys(position, READ_POSITION_KEYS, 'read position');
      return res.body;
    }

    test('GET reads lists every participant’s position by ascending user id, those who never read at 0 and null', async () => {
      const [owner, m1, m2] = newUsers(3);
      const id = await group(app, owner, [m2, m1]);
      await send(app, owner, id, 'one');
      const second = await send(app, owner, id, 'two');
      const marked = await app.request(m1, 'POST', `/conversations/${id}/read`, { message_id: second.id });

      const page = await reads(m2, id);
      assert.deepEqual(page, {
        data: [
          { user_id: owner, last_read_message_id: 0, last_read_at: null },
          { user_id: m1, last_read_message_id: second.id, last_read_at: marked.body.data.read_at },
          { user_id: m2, last_read_message_id: 0, last_read_at: null },
        ],
        meta: { next_cursor: null },
      });
      assert.match(page.data[1].last_read_at, ISO_UTC);
    });

    test('GET reads shows positions that only move forward, and members added later at the history they joined with', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a, b);
      const first = await send(app, a, id, 'one');
      const second = await send(app, a, id, 'two');
      await app.request(b, 'POST', `/conversations/${id}/read`);
      await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: first.id });
      const [, theirs] = (await reads(a, id)).data;
      assert.deepEqual([theirs.user_id, theirs.last_read_message_id], [b, second.id]);

      const [owner, late] = newUsers(2);
      const groupId = await group(app, owner, []);
      const before = await send(app, owner, groupId, 'before you came');
      await register(app, late);
      assert.equal((await app.request(owner, 'POST', `/groups/${groupId}/participants`, { user_ids: [late] })).status, 200);
      assert.deepEqual((await reads(late, groupId)).data.find((p) => p.user_id === late), { user_id: late, last_read_message_id: before.id, last_read_at: null });
    });

    test('GET reads pages by user id: limit, next_cursor (the last user id) passed back as cursor', async () => {
      const [owner, ...members] = newUsers(7);
      const id = await group(app, owner, members);
      const everyone = [owner, ...members].sort((x, y) => x - y);
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await reads(members[3]!, id, `?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`);
        assert.ok(page.data.length <= 3);
        seen.push(...page.data.map((p) => p.user_id));
        cursor = page.meta.next_cursor;
        if (cursor !== null) assert.equal(cursor, String(page.data.at(-1).user_id));
        pages++;
      } while (cursor !== null);
      assert.deepEqual(seen, everyone);
      assert.equal(pages, 3);
      // A cursor past everyone is an empty last page.
      assert.deepEqual(await reads(owner, id, `?cursor=${everyone.at(-1)}`), { data: [], meta: { next_cursor: null } });
    });

    test('GET reads returns 100 by default and up to 1000 with limit', async () => {
      const [owner, ...members] = newUsers(105);
      const id = await group(app, owner, members);
      const first = await reads(owner, id);
      assert.equal(first.data.length, 100);
      assert.equal(first.meta.next_cursor, String(first.data[99].user_id));
      const rest = await reads(owner, id, `?cursor=${first.meta.next_cursor}`);
      assert.equal(rest.data.length, 5);
      assert.equal(rest.meta.next_cursor, null);
      const all = await reads(owner, id, '?limit=1000');
      assert.equal(all.data.length, 105);
      assert.equal(all.meta.next_cursor, null);
    });

    test('GET reads: bad limit or cursor is 422; a non-participant, a former member or an unknown conversation gets 404', async () => {
      const [owner, member, outsider] = newUsers(3);
      await register(app, outsider);
      const id = await group(app, owner, [member]);
      for (const query of ['?limit=0', '?limit=1001', '?limit=many', '?cursor=abc', '?cursor=0', '?cursor=-5']) {
        const res = await app.request(owner, 'GET', `/conversations/${id}/reads${query}`);
        assertError(res, 422, 'validation_failed');
        assert.ok(res.body.errors.limit ?? res.body.errors.cursor, `${query}: ${JSON.stringify(res.body)}`);
      }
      assertError(await app.request(outsider, 'GET', `/conversations/${id}/reads`), 404, 'not_found');
      assertError(await app.request(owner, 'GET', '/conversations/987654321/reads'), 404, 'not_found');
      assert.equal((await app.request(member, 'POST', `/groups/${id}/leave`)).status, 204);
      assertError(await app.request(member, 'GET', `/conversations/${id}/reads`), 404, 'not_found');
      assertError(await app.request(null, 'GET', `/conversations/${id}/reads`), 401, 'unauthenticated');
    });
  });
}
