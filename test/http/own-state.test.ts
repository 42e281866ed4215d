// Each user's own conversation state (docs/api.md "A user's own conversation state"): archive, pin, clear and
// delete for me, each for the caller alone, told to their own channel only (ConversationStateChanged,
// MessageHidden), as /sync shows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, direct, group, newUsers, register, send } from './helpers.js';

for (const database of DATABASES) {
  describe(`own conversation state (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const inboxIds = async (user: number, query = '') => (await app.request(user, 'GET', `/conversations${query}`)).body.data.map((c: any) => c.id);

    test('archive: out of the inbox, listed with archived=true, still archived when a message arrives; DELETE brings it back', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a!, b!);
      await send(app, b!, id, 'hello');
      const archived = await app.request(a!, 'PUT', `/conversations/${id}/archive`);
      assert.equal(archived.status, 200, JSON.stringify(archived.body));
      assert.match(archived.body.data.archived_at, /Z$/);
      assert.equal(archived.body.data.pinned_at, null);
      assert.ok(!(await inboxIds(a!)).includes(id));
      assert.deepEqual(await inboxIds(a!, '?archived=true'), [id]);
      assert.ok((await inboxIds(b!)).includes(id), 'only for the one who archived it');
      await send(app, b!, id, 'still there?');
      assert.ok(!(await inboxIds(a!)).includes(id), 'a new message does not unarchive');
      const back = await app.request(a!, 'DELETE', `/conversations/${id}/archive`);
      assert.equal(back.body.data.archived_at, null);
      assert.ok((await inboxIds(a!)).includes(id));
    });

    test('pin: pinned conversations first, most recently pinned first; at most 10 (409 too_many_pins)', async () => {
      const [me, ...others] = newUsers(12);
      await register(app, ...others);
      const ids: number[] = [];
      for (const other of others) ids.push(await direct(app, me!, other!));
      for (const id of ids) await send(app, me!, id, 'hi'); // the newest activity last
      assert.equal((await app.request(me!, 'PUT', `/conversations/${ids[0]}/pin`)).status, 200);
      assert.equal((await app.request(me!, 'PUT', `/conversations/${ids[1]}/pin`)).status, 200);
      const inbox = await inboxIds(me!);
      assert.deepEqual(inbox.slice(0, 3), [ids[1], ids[0], ids[10]]);
      // Paged across the pinned and the others, each once.
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res: any = await app.request(me!, 'GET', `/conversations?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        seen.push(...res.body.data.map((c: any) => c.id));
        cursor = res.body.meta.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, inbox);
      for (const id of ids.slice(2, 10)) assert.equal((await app.request(me!, 'PUT', `/conversations/${id}/pin`)).status, 200);
      assertError(await app.request(me!, 'PUT', `/conversations/${ids[10]}/pin`), 409, 'too_many_pins');
      assert.equal((await app.request(me!, 'DELETE', `/conversations/${ids[0]}/pin`)).body.data.pinned_at, null);
    });

    test('clear: the history so far hidden for me only, nothing unread, out of my inbox until a new message', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a!, b!);
      await send(app, b!, id, 'old one');
      await send(app, b!, id, 'old two');
      const cleared = await app.request(a!, 'POST', `/conversations/${id}/clear`);
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      assert.match(cleared.body.data.cleared_at, /Z$/);
      assert.equal(cleared.body.data.unread_count, 0);
      assert.equal(cleared.body.data.last_message, null);
      assert.deepEqual((await app.request(a!, 'GET', `/conversations/${id}/messages`)).body.data, []);
      assert.equal((await app.request(b!, 'GET', `/conversations/${id}/messages`)).body.data.length, 2, 'the other side keeps it');
      assert.ok(!(await inboxIds(a!)).includes(id));
      assert.equal((await app.request(a!, 'GET', '/search/messages?q=old')).body.data.length, 0, 'search leaves it out');
      const fresh = await send(app, b!, id, 'new one');
      assert.ok((await inboxIds(a!)).includes(id), 'back with a new message');
      assert.deepEqual((await app.request(a!, 'GET', `/conversations/${id}/messages`)).body.data.map((m: any) => m.id), [fresh.id]);
    });

    test('delete for me: hidden everywhere I read, not for others, no longer unread; 404 for strangers', async () => {
      const [a, b, stranger] = newUsers(3);
      await register(app, stranger!);
      const id = await group(app, a!, [b!]);
      const kept = await send(app, b!, id, 'keep me');
      const gone = await send(app, b!, id, 'hide me');
      const before = (await app.request(a!, 'GET', `/conversations/${id}`)).body.data;
      assert.equal(before.unread_count, 2);
      assertError(await app.request(stranger!, 'DELETE', `/messages/${gone.id}?for=me`), 404);
      assert.equal((await app.request(a!, 'DELETE', `/messages/${gone.id}?for=me`)).status, 204);
      assert.deepEqual((await app.request(a!, 'GET', `/conversations/${id}/messages`)).body.data.map((m: any) => m.id), [kept.id]);
      assert.equal((await app.request(b!, 'GET', `/conversations/${id}/messages`)).body.data.length, 2);
      const view = (await app.request(a!, 'GET', `/conversations/${id}`)).body.data;
      assert.equal(view.unread_count, 1);
      assert.equal(view.last_message.id, kept.id, 'my last message is the newest I still see');
      assertError(await app.request(a!, 'DELETE', `/messages/${gone.id}?for=everyone`), 422);
    });

    test('ConversationStateChanged and MessageHidden reach my own feed only', async () => {
      const [a, b] = newUsers(2);
      const id = await direct(app, a!, b!);
      const m = await send(app, b!, id, 'x');
      const sinceA = (await app.request(a!, 'GET', '/sync')).body.data.cursor;
      const sinceB = (await app.request(b!, 'GET', '/sync')).body.data.cursor;
      await app.request(a!, 'PUT', `/conversations/${id}/mute`, { until: null });
      await app.request(a!, 'PUT', `/conversations/${id}/archive`);
      await app.request(a!, 'DELETE', `/messages/${m.id}?for=me`);
      const mine = (await app.request(a!, 'GET', `/sync?since=${encodeURIComponent(sinceA)}`)).body.data.changes;
      const states = mine.filter((c: any) => c.type === 'ConversationStateChanged');
      assert.equal(states.length, 2);
      assert.deepEqual(Object.keys(states[0].data).sort(), ['archived_at', 'cleared_at', 'conversation_id', 'muted', 'muted_until', 'pinned_at']);
      assert.equal(states[0].data.muted, true);
      assert.notEqual(states[1].data.archived_at, null);
      const hidden = mine.find((c: any) => c.type === 'MessageHidden');
      assert.deepEqual(hidden.data, { conversation_id: id, message_id: m.id });
      const theirs = (await app.request(b!, 'GET', `/sync?since=${encodeURIComponent(sinceB)}`)).body.data.changes;
      assert.ok(!theirs.some((c: any) => c.type === 'ConversationStateChanged' || c.type === 'MessageHidden'), JSON.stringify(theirs.map((c: any) => c.type)));
    });
  });
}
