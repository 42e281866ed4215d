// The inbox entries a sync renders: the syncs asked in one turn of the event loop share their reads (five queries
// for all of them), and each entry is what the user would get alone: their unread count, the last message as they
// see it (none past a cleared history, the one before a message they hid), none for a conversation they are not in.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { inboxEntries } from '../../src/chat/inbox-entries.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { counted } from '../support/statement-counter.js';

for (const database of DATABASES) {
  describe(`inbox entries of syncs (${database})`, () => {
    let app: TestApp;
    let group: number;
    let first: number;
    let last: number;
    const members = Array.from({ length: 30 }, (_, i) => 1 + i);
    before(async () => {
      app = await startTestApp({ database });
      for (const user of members) await app.request(user, 'GET', '/conversations');
      const created = await app.request(1, 'POST', '/groups', { name: 'Batch', user_ids: members.slice(1) });
      group = (created.body as { data: { id: number } }).data.id;
      const sent = async (body: string) => ((await app.request(1, 'POST', `/conversations/${group}/messages`, { body })).body as { data: { id: number } }).data.id;
      first = await sent('first');
      last = await sent('second');
      // User 3 cleared the history; user 4 hid the last message.
      assert.equal((await app.request(3, 'POST', `/conversations/${group}/clear`)).status, 200);
      assert.equal((await app.request(4, 'DELETE', `/messages/${last}?for=me`)).status, 204);
    });
    after(async () => {
      await app?.close();
    });

    test('the entries of the users asked in one turn take five queries, not five each', async () => {
      // User 4 hid the last message: finding the one before is two queries of its own, so it is left out here.
      const users = members.filter((user) => user !== 4);
      const { db, counter } = counted(app.app.database.db);
      const entries = await Promise.all(users.map((user) => inboxEntries(db, user, [group])));
      assert.equal(counter.count, 5, 'conversations, previews, last messages, read states, cleared or hidden');
      assert.deepEqual(entries.map((e) => e.size), users.map(() => 1));
    });

    test('each entry is the user\'s own: unread count and the last message as they see it', async () => {
      const { db } = counted(app.app.database.db);
      const together = await Promise.all(members.map((user) => inboxEntries(db, user, [group])));
      const alone: typeof together = [];
      for (const user of members) alone.push(await inboxEntries(db, user, [group]));
      assert.deepEqual(together, alone, 'the same entries loaded together as one by one');
      const entry = (user: number) => together[members.indexOf(user)]!.get(group)!;
      assert.equal(entry(1).unread_count, 0, 'the sender read their own messages');
      assert.equal(entry(2).unread_count, 2);
      assert.equal(entry(2).last_message?.id, last);
      assert.equal(entry(3).last_message, null, 'cleared past the last message');
      assert.equal(entry(4).last_message?.id, first, 'hid the last one: the one before');
    });

    test('no entry for a conversation the user is not in, and none for one that does not exist', async () => {
      const { db } = counted(app.app.database.db);
      const [outsider, member] = await Promise.all([inboxEntries(db, 999, [group]), inboxEntries(db, 2, [group, 987_654])]);
      assert.equal(outsider.size, 0);
      assert.deepEqual([...member.keys()], [group]);
    });
  });
}
