// Threads (docs/api.md "Threads"): a reply in a thread is sent with thread_id; it stays out of the conversation's
// history, last message and unread counts; its root shows the thread; GET /messages/{id}/thread lists the replies,
// GET /threads the caller's threads with their unread replies, POST /messages/{id}/thread/read reads one; the
// events are in /sync.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, group, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`threads (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const reply = (user: number, conversationId: number, threadId: number, body: string, extra: Record<string, unknown> = {}) =>
      app.request(user, 'POST', `/conversations/${conversationId}/messages`, { body, thread_id: threadId, ...extra });

    test('a reply: 201 with thread_id, out of history, last message and unread counts; the root shows the thread', async () => {
      const [alice, bob, carol] = newUsers(3);
      const id = await group(app, alice!, [bob!, carol!]);
      const root = await send(app, alice!, id, 'Lunch plans?');
      const unreadBefore = (await app.request(carol!, 'GET', `/conversations/${id}`)).body.data.unread_count;
      const res = await reply(bob!, id, root.id, 'Pizza');
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.data.thread_id, root.id);
      assert.equal(res.body.data.body, 'Pizza');

      const history = (await app.request(carol!, 'GET', `/conversations/${id}/messages`)).body.data;
      assert.deepEqual(history.map((m: any) => m.id), [root.id], 'the reply is not in the history');
      const item = history[0];
      assert.equal(item.thread_id, null);
      assert.equal(item.thread.reply_count, 1);
      assert.equal(item.thread.last_reply_at, res.body.data.created_at);
      assert.deepEqual(item.thread.participant_ids, [alice, bob].sort((a, b) => a! - b!));
      assert.equal(item.pinned_at, null);
      assert.equal(item.pinned_by, null);
      const view = (await app.request(carol!, 'GET', `/conversations/${id}`)).body.data;
      assert.equal(view.last_message.id, root.id, 'nor the last message');
      assert.equal(view.unread_count, unreadBefore, 'nor an unread message');
    });

    test('thread_id must be a visible message of the conversation that is not itself a reply: 422', async () => {
      const [alice, bob] = newUsers(2);
      const id = await group(app, alice!, [bob!]);
      const other = await group(app, alice!, [bob!], 'Other');
      const root = await send(app, alice!, id, 'root');
      const elsewhere = await send(app, alice!, other, 'elsewhere');
      const first = (await reply(bob!, id, root.id, 'first')).body.data;
      const refusedOn = async (res: Promise<{ status: number; body: any }>) => {
        const answer = await res;
        assertError(answer, 422);
        assert.deepEqual(Object.keys(answer.body.errors), ['thread_id']);
      };
      await refusedOn(reply(bob!, id, elsewhere.id, 'wrong conversation'));
      await refusedOn(reply(bob!, id, first.id, 'a reply to a reply'));
      assert.equal((await app.request(alice!, 'DELETE', `/messages/${root.id}`)).status, 204);
      await refusedOn(reply(bob!, id, root.id, 'to a deleted root'));
    });

    test('GET /messages/{id}/thread: the replies newest first, paged; participants only', async () => {
      const [alice, bob, stranger] = newUsers(3);
      await register(app, stranger!);
      const id = await group(app, alice!, [bob!]);
      const root = await send(app, alice!, id, 'root');
      const sent = [];
      for (let i = 0; i < 5; i++) sent.push((await reply(i % 2 ? alice! : bob!, id, root.id, `r${i}`)).body.data.id);
      const first = await app.request(alice!, 'GET', `/messages/${root.id}/thread?limit=3`);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(first.body.data.map((m: any) => m.id), sent.slice(2).reverse());
      assert.ok(first.body.data.every((m: any) => m.thread_id === root.id));
      const rest = await app.request(alice!, 'GET', `/messages/${root.id}/thread?limit=3&before=${first.body.meta.next_cursor}`);
      assert.deepEqual(rest.body.data.map((m: any) => m.id), sent.slice(0, 2).reverse());
      assert.equal(rest.body.meta.next_cursor, null);
      assertError(await app.request(stranger!, 'GET', `/messages/${root.id}/thread`), 404);
    });

    test('GET /threads: my threads, most recent reply first, with replies by others since I read; reading one', async () => {
      const [alice, bob, carol] = newUsers(3);
      const id = await group(app, alice!, [bob!, carol!]);
      const older = await send(app, alice!, id, 'older thread');
      const newer = await send(app, carol!, id, 'newer thread');
      await reply(bob!, id, older.id, 'b1');
      await reply(bob!, id, older.id, 'b2');
      await reply(alice!, id, newer.id, 'mentioning bob', { mentioned_user_ids: [bob] });

      const mine = await app.request(alice!, 'GET', '/threads');
      assert.equal(mine.status, 200, JSON.stringify(mine.body));
      assert.deepEqual(mine.body.data.map((t: any) => [t.root.id, t.reply_count, t.unread_reply_count]), [
        [newer.id, 1, 0], // she replied: read up to her reply
        [older.id, 2, 2], // her root: Bob's two replies unread
      ]);
      assert.deepEqual(Object.keys(mine.body.data[0]).sort(), ['last_reply_at', 'reply_count', 'root', 'unread_reply_count']);
      const bobs = (await app.request(bob!, 'GET', '/threads')).body.data.map((t: any) => [t.root.id, t.unread_reply_count]);
      assert.deepEqual(bobs, [[newer.id, 1], [older.id, 0]], 'mentioned in a reply: Bob takes part');

      const read = await app.request(alice!, 'POST', `/messages/${older.id}/thread/read`);
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.deepEqual(Object.keys(read.body.data).sort(), ['read_at', 'thread_id']);
      assert.equal(read.body.data.thread_id, older.id);
      const after = (await app.request(alice!, 'GET', '/threads')).body.data.find((t: any) => t.root.id === older.id);
      assert.equal(after.unread_reply_count, 0);

      const page = await app.request(alice!, 'GET', '/threads?limit=1');
      assert.equal(page.body.data.length, 1);
      const next = await app.request(alice!, 'GET', `/threads?limit=1&cursor=${encodeURIComponent(page.body.meta.next_cursor)}`);
      assert.deepEqual(next.body.data.map((t: any) => t.root.id), [older.id]);
      assertError(await app.request(alice!, 'GET', '/threads?cursor=nonsense'), 422);
    });

    test('deleting a reply: the thread is recounted; /sync carries ThreadReplySent, ThreadUpdated and ThreadRead, never MessageSent', async () => {
      const [alice, bob] = newUsers(2);
      const id = await group(app, alice!, [bob!]);
      const root = await send(app, alice!, id, 'root');
      const since = (await app.request(alice!, 'GET', '/sync')).body.data.cursor;
      const first = (await reply(bob!, id, root.id, 'one')).body.data;
      await reply(bob!, id, root.id, 'two');
      assert.equal((await app.request(bob!, 'DELETE', `/messages/${first.id}`)).status, 204);
      assert.equal((await app.request(alice!, 'POST', `/messages/${root.id}/thread/read`)).status, 200);
      const item = (await app.request(alice!, 'GET', `/conversations/${id}/messages`)).body.data[0];
      assert.equal(item.thread.reply_count, 1);

      const changes = (await app.request(alice!, 'GET', `/sync?since=${encodeURIComponent(since)}`)).body.data.changes;
      assert.deepEqual(changes.map((c: any) => c.type), ['ThreadReplySent', 'ThreadUpdated', 'ThreadReplySent', 'ThreadUpdated', 'MessageDeleted', 'ThreadUpdated', 'ThreadRead']);
      const sent = changes[0].data;
      assert.deepEqual(Object.keys(sent).sort(), ['conversation_id', 'message', 'thread_id']);
      assert.equal(sent.message.thread_id, root.id);
      assert.deepEqual(Object.keys(changes[1].data).sort(), ['conversation_id', 'last_reply_at', 'participant_ids', 'reply_count', 'thread_id']);
      assert.deepEqual(Object.keys(changes.at(-1).data).sort(), ['conversation_id', 'read_at', 'thread_id', 'user_id']);
    });

    test('search finds replies, and the item says which thread', async () => {
      const [alice, bob] = newUsers(2);
      const id = await group(app, alice!, [bob!]);
      const root = await send(app, alice!, id, 'root');
      await reply(bob!, id, root.id, 'xylophonic answer');
      const hits = (await app.request(alice!, 'GET', '/search/messages?q=xylophonic')).body.data;
      assert.equal(hits.length, 1);
      assert.equal(hits[0].thread_id, root.id);
    });
  });
}
