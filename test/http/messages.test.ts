// Messages over HTTP: send (body, attachment, reply, client_message_id), history paging, edit, soft delete,
// forward, and how each moves last_message and unread counts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import {
  assertError,
  assertHistoryItem,
  assertMessage,
  conversation,
  direct,
  group,
  history,
  ISO_UTC,
  newUsers,
  send,
  upload,
} from './helpers.js';

for (const database of DATABASES) {
  describe(`messages (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const user = (id: number) => ({ id, name: `User ${id}`, avatar_url: null });

    describe('POST /conversations/{id}/messages', () => {
      test('a text message is created with 201 as a full MessageResource and becomes the last message', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const res = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'Hello, Bob' });
        assert.equal(res.status, 201);
        const message = res.body.data;
        assertMessage(message);
        assert.deepEqual(
          { ...message, id: 0, created_at: '' },
          {
            id: 0,
            conversation_id: id,
            body: 'Hello, Bob',
            attachment: null,
            sender: user(a),
            reply_to: null,
            forwarded_from: null,
            created_at: '',
            edited_at: null,
          },
        );
        assert.ok(Number.isInteger(message.id) && message.id > 0);
        assert.deepEqual((await conversation(app, b, id)).last_message, message);
      });

      test('a message needs a body or an attachment', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        for (const body of [{}, { body: '' }, { body: '   ' }, { body: null }]) {
          const res = await app.request(a, 'POST', `/conversations/${id}/messages`, body);
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.body);
        }
      });

      test('an uploaded attachment can be sent alone, and the message carries it', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const uploaded = await upload(app, a, 'file contents', 'report.txt', 'text/plain');
        assert.equal(uploaded.status, 201);
        const message = await send(app, a, id, { attachment_id: uploaded.body.data.id });
        assertMessage(message);
        assert.equal(message.body, null);
        assert.deepEqual(message.attachment, uploaded.body.data);
        assert.deepEqual(message.attachment, {
          id: uploaded.body.data.id,
          name: 'report.txt',
          mime_type: 'text/plain',
          size: 13,
          url: `/api/chat/v1/attachments/${uploaded.body.data.id}`,
          width: null,
          height: null,
          thumbnail_url: null,
        });
      });

      test('only one’s own uploads can be attached (422 naming attachment_id)', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const theirs = await upload(app, b, 'not yours');
        for (const attachmentId of [theirs.body.data.id, 987_654_321]) {
          const res = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'see', attachment_id: attachmentId });
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.attachment_id);
        }
      });

      test('a reply carries a preview of the message it answers', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const original = await send(app, a, id, 'Lunch?');
        const reply = await send(app, b, id, { body: 'Yes!', reply_to_id: original.id });
        assertMessage(reply);
        assert.deepEqual(reply.reply_to, { id: original.id, body: 'Lunch?', sender: user(a), deleted: false });
      });

      test('a reply must answer a message of the same conversation (422 naming reply_to_id)', async () => {
        const [a, b, c] = newUsers(3);
        const id = await direct(app, a, b);
        const elsewhere = await send(app, a, await direct(app, a, c), 'other room');
        for (const replyTo of [elsewhere.id, 987_654_321]) {
          const res = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 're', reply_to_id: replyTo });
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.reply_to_id);
        }
      });

      test('a repeated client_message_id returns the stored message with 200 and stores nothing new', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const first = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'once', client_message_id: 'c-1' });
        assert.equal(first.status, 201);
        const retry = await app.request(a, 'POST', `/conversations/${id}/messages`, { body: 'once', client_message_id: 'c-1' });
        assert.equal(retry.status, 200);
        assert.deepEqual(retry.body.data, first.body.data);
        assert.deepEqual((await history(app, a, id)).data.map((m) => m.id), [first.body.data.id]);
        assert.equal((await conversation(app, b, id)).unread_count, 1);
      });

      test('a client_message_id is scoped to its sender and conversation', async () => {
        const [a, b, c] = newUsers(3);
        const ab = await direct(app, a, b);
        const ac = await direct(app, a, c);
        const mine = await app.request(a, 'POST', `/conversations/${ab}/messages`, { body: 'x', client_message_id: 'same' });
        const theirs = await app.request(b, 'POST', `/conversations/${ab}/messages`, { body: 'y', client_message_id: 'same' });
        const otherRoom = await app.request(a, 'POST', `/conversations/${ac}/messages`, { body: 'z', client_message_id: 'same' });
        assert.deepEqual([mine.status, theirs.status, otherRoom.status], [201, 201, 201]);
        assert.notEqual(mine.body.data.id, theirs.body.data.id);
      });
    });

    describe('GET /conversations/{id}/messages', () => {
      test('is newest first and pages back with before and meta.next_cursor', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const sent = [];
        for (let i = 1; i <= 5; i++) sent.push(await send(app, i % 2 ? a : b, id, `m${i}`));
        const ids = sent.map((m) => m.id);

        const all = await history(app, a, id);
        assert.deepEqual(all.data.map((m) => m.id), [...ids].reverse());
        assert.equal(all.meta.next_cursor, null);
        all.data.forEach(assertHistoryItem);

        const page1 = await history(app, a, id, '?limit=2');
        assert.deepEqual(page1.data.map((m) => m.body), ['m5', 'm4']);
        assert.equal(page1.meta.next_cursor, String(ids[3]));
        const page2 = await history(app, a, id, `?limit=2&before=${page1.meta.next_cursor}`);
        assert.deepEqual(page2.data.map((m) => m.body), ['m3', 'm2']);
        const page3 = await history(app, a, id, `?limit=2&before=${page2.meta.next_cursor}`);
        assert.deepEqual(page3.data.map((m) => m.body), ['m1']);
        assert.equal(page3.meta.next_cursor, null);
      });

      test('catches up with after: the messages right after a known one, newest first, cursor to pass as after', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const sent = [];
        for (let i = 1; i <= 5; i++) sent.push(await send(app, a, id, `m${i}`));

        const page1 = await history(app, b, id, `?limit=2&after=${sent[0].id}`);
        assert.deepEqual(page1.data.map((m) => m.body), ['m3', 'm2']);
        assert.equal(page1.meta.next_cursor, String(sent[2].id));
        const page2 = await history(app, b, id, `?limit=2&after=${page1.meta.next_cursor}`);
        assert.deepEqual(page2.data.map((m) => m.body), ['m5', 'm4']);
        assert.equal(page2.meta.next_cursor, null);
        assert.deepEqual((await history(app, b, id, `?after=${sent[4].id}`)).data, []);
      });

      test('before and after together are refused', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        assertError(await app.request(a, 'GET', `/conversations/${id}/messages?before=10&after=1`), 422, 'validation_failed');
      });

      test('before, after and limit must be in range (422 naming the parameter)', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        for (const [query, field] of [
          ['before=0', 'before'],
          ['before=abc', 'before'],
          ['after=-1', 'after'],
          ['after=99999999999999999999', 'after'],
          ['after=1e30', 'after'],
          ['limit=0', 'limit'],
          ['limit=101', 'limit'],
        ]) {
          const res = await app.request(a, 'GET', `/conversations/${id}/messages?${query}`);
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors[field!], `${query} names ${field}`);
        }
      });
    });

    describe('PATCH /messages/{id}', () => {
      test('the sender edits the body; edited_at is set and history shows the new body', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const message = await send(app, a, id, 'teh typo');
        const res = await app.request(a, 'PATCH', `/messages/${message.id}`, { body: 'the typo' });
        assert.equal(res.status, 200);
        assertMessage(res.body.data);
        assert.deepEqual({ ...res.body.data, edited_at: null }, { ...message, body: 'the typo' });
        assert.match(res.body.data.edited_at, ISO_UTC);
        assert.deepEqual((await history(app, b, id)).data[0], { ...res.body.data, reactions: [], mentioned_user_ids: [], thread_id: null, thread: null, pinned_at: null, pinned_by: null });
        assert.deepEqual((await conversation(app, b, id)).last_message, res.body.data);
      });

      test('anyone but the sender is refused with 403 not_sender', async () => {
        const [owner, member] = newUsers(2);
        const id = await group(app, owner, [member]);
        const message = await send(app, member, id, 'mine');
        assertError(await app.request(owner, 'PATCH', `/messages/${message.id}`, { body: 'hijacked' }), 403, 'not_sender');
        assert.equal((await history(app, owner, id)).data[0].body, 'mine');
      });

      test('a non-participant gets 404, and an empty body is refused', async () => {
        const [a, b, outsider] = newUsers(3);
        const id = await direct(app, a, b);
        const message = await send(app, a, id, 'text');
        assertError(await app.request(outsider, 'PATCH', `/messages/${message.id}`, { body: 'x' }), 404, 'not_found');
        const empty = await app.request(a, 'PATCH', `/messages/${message.id}`, { body: ' ' });
        assertError(empty, 422, 'validation_failed');
        assert.ok(empty.body.errors.body);
      });
    });

    describe('DELETE /messages/{id}', () => {
      test('the sender deletes: gone from history, and last_message falls back to the previous message', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const first = await send(app, a, id, 'first');
        const second = await send(app, a, id, 'second');
        const res = await app.request(a, 'DELETE', `/messages/${second.id}`);
        assert.equal(res.status, 204);
        assert.deepEqual((await history(app, b, id)).data.map((m) => m.id), [first.id]);
        assert.deepEqual((await conversation(app, b, id)).last_message, first);

        await app.request(a, 'DELETE', `/messages/${first.id}`);
        assert.equal((await conversation(app, b, id)).last_message, null);
      });

      test('a deleted message can be neither edited nor deleted again (404)', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const message = await send(app, a, id, 'bye');
        await app.request(a, 'DELETE', `/messages/${message.id}`);
        assertError(await app.request(a, 'PATCH', `/messages/${message.id}`, { body: 'x' }), 404, 'not_found');
        assertError(await app.request(a, 'DELETE', `/messages/${message.id}`), 404, 'not_found');
      });

      test('a reply to a deleted message keeps a preview with deleted: true and body: null', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const original = await send(app, a, id, 'regrettable');
        const reply = await send(app, b, id, { body: 'wow', reply_to_id: original.id });
        await app.request(a, 'DELETE', `/messages/${original.id}`);
        const [shown] = (await history(app, b, id)).data;
        assert.equal(shown.id, reply.id);
        assert.deepEqual(shown.reply_to, { id: original.id, body: null, sender: user(a), deleted: true });
        // And nobody can reply to it any more.
        const late = await app.request(b, 'POST', `/conversations/${id}/messages`, { body: 're', reply_to_id: original.id });
        assertError(late, 422, 'validation_failed');
      });

      test('in a direct conversation the other participant may not delete (403 not_sender)', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const message = await send(app, a, id, 'keep');
        assertError(await app.request(b, 'DELETE', `/messages/${message.id}`), 403, 'not_sender');
      });

      test('in a group the owner and admins may delete anyone’s message, members only their own', async () => {
        const [owner, admin, member, other] = newUsers(4);
        const id = await group(app, owner, [admin, member, other]);
        await app.request(owner, 'PATCH', `/groups/${id}/participants/${admin}`, { role: 'admin' });
        const m1 = await send(app, other, id, 'spam 1');
        const m2 = await send(app, other, id, 'spam 2');
        const m3 = await send(app, other, id, 'spam 3');

        assertError(await app.request(member, 'DELETE', `/messages/${m1.id}`), 403, 'not_sender');
        assert.equal((await app.request(admin, 'DELETE', `/messages/${m1.id}`)).status, 204);
        assert.equal((await app.request(owner, 'DELETE', `/messages/${m2.id}`)).status, 204);
        assert.deepEqual((await history(app, member, id)).data.map((m) => m.id), [m3.id]);
      });

      test('a non-participant gets 404', async () => {
        const [a, b, outsider] = newUsers(3);
        const id = await direct(app, a, b);
        const message = await send(app, a, id, 'secret');
        assertError(await app.request(outsider, 'DELETE', `/messages/${message.id}`), 404, 'not_found');
      });

      test('deleting an unread message takes it off the unread count; a read one changes nothing', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const m1 = await send(app, a, id, 'one');
        const m2 = await send(app, a, id, 'two');
        const m3 = await send(app, a, id, 'three');
        assert.equal((await conversation(app, b, id)).unread_count, 3);

        await app.request(a, 'DELETE', `/messages/${m3.id}`);
        assert.equal((await conversation(app, b, id)).unread_count, 2);

        await app.request(b, 'POST', `/conversations/${id}/read`, { message_id: m1.id });
        assert.equal((await conversation(app, b, id)).unread_count, 1);
        await app.request(a, 'DELETE', `/messages/${m1.id}`);
        assert.equal((await conversation(app, b, id)).unread_count, 1);
        await app.request(a, 'DELETE', `/messages/${m2.id}`);
        assert.equal((await conversation(app, b, id)).unread_count, 0);
        assert.equal((await conversation(app, a, id)).unread_count, 0);
      });
    });

    describe('POST /messages/{id}/forward', () => {
      test('forwards to several conversations at once, each copy naming its origin in forwarded_from', async () => {
        const [a, b, c, d] = newUsers(4);
        const source = await direct(app, a, b);
        const toC = await direct(app, b, c);
        const toGroup = await group(app, b, [c, d]);
        const original = await send(app, a, source, 'pass it on');

        const res = await app.request(b, 'POST', `/messages/${original.id}/forward`, { conversation_ids: [toC, toGroup] });
        assert.equal(res.status, 201);
        assert.equal(res.body.data.length, 2);
        res.body.data.forEach(assertMessage);
        assert.deepEqual(res.body.data.map((m: any) => m.conversation_id), [toC, toGroup]);
        for (const copy of res.body.data) {
          assert.equal(copy.body, 'pass it on');
          assert.deepEqual(copy.sender, user(b));
          assert.deepEqual(copy.forwarded_from, { message_id: original.id, conversation_id: source, sender: user(a) });
        }
        assert.deepEqual((await conversation(app, c, toC)).last_message, res.body.data[0]);
        assert.equal((await conversation(app, d, toGroup)).unread_count, 1);
      });

      test('a forward of a forward still names the original message', async () => {
        const [a, b, c] = newUsers(3);
        const source = await direct(app, a, b);
        const middle = await direct(app, b, c);
        const last = await group(app, c, [a]);
        const original = await send(app, a, source, 'origin');
        const [hop] = (await app.request(b, 'POST', `/messages/${original.id}/forward`, { conversation_ids: [middle] })).body.data;
        const res = await app.request(c, 'POST', `/messages/${hop.id}/forward`, { conversation_ids: [last] });
        assert.equal(res.status, 201);
        assert.deepEqual(res.body.data[0].forwarded_from, { message_id: original.id, conversation_id: source, sender: user(a) });
      });

      test('forwarding an attachment forwards the attachment too', async () => {
        const [a, b, c] = newUsers(3);
        const source = await direct(app, a, b);
        const target = await direct(app, b, c);
        const uploaded = (await upload(app, a, 'bytes', 'pic.png', 'image/png')).body.data;
        const original = await send(app, a, source, { attachment_id: uploaded.id });
        const res = await app.request(b, 'POST', `/messages/${original.id}/forward`, { conversation_ids: [target] });
        assert.deepEqual(res.body.data[0].attachment, uploaded);
      });

      test('every target must be one of the forwarder’s conversations: otherwise 404 and nothing is sent', async () => {
        const [a, b, c, d] = newUsers(4);
        const source = await direct(app, a, b);
        const mine = await direct(app, b, c);
        const notMine = await direct(app, c, d);
        const original = await send(app, a, source, 'hello');
        assertError(await app.request(b, 'POST', `/messages/${original.id}/forward`, { conversation_ids: [mine, notMine] }), 404, 'not_found');
        assert.deepEqual((await history(app, c, mine)).data, []);
        assert.deepEqual((await history(app, c, notMine)).data, []);
      });

      test('the source must be a message the forwarder can see (404)', async () => {
        const [a, b, c] = newUsers(3);
        const source = await direct(app, a, b);
        const target = await direct(app, c, a);
        const original = await send(app, a, source, 'between a and b');
        assertError(await app.request(c, 'POST', `/messages/${original.id}/forward`, { conversation_ids: [target] }), 404, 'not_found');
      });

      test('conversation_ids must list 1 to 20 conversation ids', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const message = await send(app, a, id, 'x');
        for (const body of [{}, { conversation_ids: [] }, { conversation_ids: Array.from({ length: 21 }, (_, i) => i + 1) }, { conversation_ids: ['x'] }]) {
          const res = await app.request(a, 'POST', `/messages/${message.id}/forward`, body);
          assertError(res, 422, 'validation_failed');
          assert.ok(Object.keys(res.body.errors).some((k) => k.startsWith('conversation_ids')), JSON.stringify(res.body.errors));
        }
      });
    });
  });
}
