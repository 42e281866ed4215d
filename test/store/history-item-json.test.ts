// A history item lives twice: historyItem() builds it in TypeScript for every read of the API, and
// historyItemJsonRows (src/store/read-model.ts) builds the same item as JSON text in SQL for a user's export,
// which passes it on without parsing it. Here both read the same messages, one of each kind a history item can
// be (attachment with and without a thumbnail, reply, reply to a deleted message, forward, reactions, mentions,
// thread root and reply, pin, edit, a body with quotes, backslashes, control characters and emoji, a sender with
// an avatar), and must give equal items.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { givenIds, historyItemJsonRows, loadHistoryItems } from '../../src/store/read-model.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { direct, group, newUsers, send, upload } from '../http/helpers.js';

for (const database of DATABASES) {
  describe(`history items in SQL and in TypeScript (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('historyItemJsonRows gives the item historyItem() gives, for every kind of message', async () => {
      const [ann, bob, cid] = newUsers(3);
      const ok = async (res: Promise<{ status: number; body: any }>, status = 200) => {
        const r = await res;
        assert.equal(r.status, status, JSON.stringify(r.body));
        return r.body?.data;
      };
      const server = (method: string, path: string, body: unknown) =>
        app.request(null, method, path, body, { 'x-chat-server-key': app.config.serverKey });
      assert.ok([200, 201].includes((await server('PUT', `/users/${ann}`, { name: 'Ann "the" \\ Admin', avatar_url: 'https://example.test/ann.png' })).status));
      const dm = await direct(app, ann!, bob!);
      const team = await group(app, ann!, [bob!, cid!], 'Team');

      const png = await sharp({ create: { width: 320, height: 200, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer();
      const picture = await ok(upload(app, ann!, new Uint8Array(png), 'picture.png', 'image/png'), 201);
      const text = await ok(upload(app, bob!, 'notes', 'notes.txt'), 201);
      assert.ok(picture.thumbnail_url, 'the picture has a thumbnail');

      const ids: number[] = [];
      const keep = (message: { id: number }) => (ids.push(message.id), message);
      const plain = keep(await send(app, ann!, dm, 'quotes " and \\ backslash\nnew line \u0001 control, emoji 😀 and é'));
      keep(await send(app, ann!, team, { body: 'a picture', attachment_id: picture.id }));
      keep(await send(app, bob!, team, { body: null, attachment_id: text.id }));
      const doomed = await send(app, bob!, dm, 'to be deleted');
      keep(await send(app, ann!, dm, { body: 'reply to plain', reply_to_id: plain.id }));
      keep(await send(app, ann!, dm, { body: 'reply to the deleted one', reply_to_id: doomed.id }));
      await ok(app.request(bob!, 'DELETE', `/messages/${doomed.id}`), 204);
      keep((await ok(app.request(bob!, 'POST', `/messages/${plain.id}/forward`, { conversation_ids: [team] }), 201))[0]);
      const root = keep(await send(app, cid!, team, { body: '@ann @bob look', mentioned_user_ids: [bob, ann] }));
      keep(await send(app, bob!, team, { body: 'first reply', thread_id: root.id }));
      keep(await send(app, ann!, team, { body: 'second reply', thread_id: root.id }));
      for (const [user, emoji] of [[ann, 'thumbs_up'], [bob, 'thumbs_up'], [cid, 'heart']] as const) {
        await ok(app.request(user!, 'PUT', `/messages/${root.id}/reactions/${emoji}`));
      }
      await ok(app.request(ann!, 'PUT', `/messages/${root.id}/pin`));
      await ok(app.request(ann!, 'PATCH', `/messages/${plain.id}`, { body: 'edited: "quotes" \\ and\ttab' }));

      const db = app.app.chat.db;
      const expected = await loadHistoryItems(db, ids);
      const { rows } = await historyItemJsonRows(givenIds(ids)).execute(db);
      assert.equal(rows.length, ids.length);
      for (const row of rows) {
        const item = JSON.parse(row.item) as object;
        const want = expected.get(Number(row.id));
        assert.ok(want, `message ${row.id} is read by loadHistoryItems too`);
        assert.deepEqual(item, want, `message ${row.id}`);
        assert.deepEqual(Object.keys(item), Object.keys(want), `message ${row.id}: the same keys in the same order`);
      }
      // The cases above are all there (a fixture that lost one would prove less).
      const items = [...expected.values()];
      assert.ok(items.some((m) => m.attachment?.thumbnail_url) && items.some((m) => m.attachment && !m.attachment.thumbnail_url));
      assert.ok(items.some((m) => m.reply_to?.deleted) && items.some((m) => m.reply_to && !m.reply_to.deleted));
      assert.ok(items.some((m) => m.forwarded_from) && items.some((m) => m.thread) && items.some((m) => m.thread_id));
      assert.ok(items.some((m) => m.reactions.length === 2) && items.some((m) => m.mentioned_user_ids.length === 2));
      assert.ok(items.some((m) => m.pinned_at) && items.some((m) => m.edited_at) && items.some((m) => m.sender.avatar_url));
    });
  });
}
