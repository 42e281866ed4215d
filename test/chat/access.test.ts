// isParticipant, the check of a conversation channel's authorization: true for a participant now, false for anyone
// else (never a member, removed, or a conversation that does not exist), and the checks of one turn of the event
// loop are one query, each still answering for its own user.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isParticipant } from '../../src/chat/access.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { counted } from '../support/statement-counter.js';

for (const database of DATABASES) {
  describe(`isParticipant (${database})`, () => {
    let app: TestApp;
    let groups: number[];
    before(async () => {
      app = await startTestApp({ database });
      for (const user of [1, 2, 3, 4, 5]) await app.request(user, 'GET', '/conversations');
      const group = async (owner: number, others: number[]) => ((await app.request(owner, 'POST', '/groups', { name: 'Access', user_ids: others })).body as { data: { id: number } }).data.id;
      groups = [await group(1, [2, 3]), await group(4, [5])];
      // User 3 was removed from the first group.
      assert.equal((await app.request(1, 'DELETE', `/groups/${groups[0]}/participants/3`)).status, 204);
    });
    after(async () => {
      await app?.close();
    });

    test('answers for each user and conversation, the checks of one turn in one query', async () => {
      const { db, counter } = counted(app.app.database.db);
      const [a, b] = groups as [number, number];
      const asked: [number, number, boolean][] = [
        [a, 1, true], [a, 2, true], [a, 3, false], [a, 4, false], [a, 5, false],
        [b, 4, true], [b, 5, true], [b, 1, false], [b, 2, false], [987_654, 1, false],
      ];
      const answers = await Promise.all(asked.map(([conversation, user]) => isParticipant(db, conversation, user)));
      assert.deepEqual(answers, asked.map(([, , expected]) => expected));
      assert.equal(counter.count, 1);
    });

    test('reads anew on every call: a participant added since is one', async () => {
      const db = app.app.database.db;
      const [, b] = groups as [number, number];
      assert.equal(await isParticipant(db, b, 2), false);
      assert.ok((await app.request(4, 'POST', `/groups/${b}/participants`, { user_ids: [2] })).status < 300);
      assert.equal(await isParticipant(db, b, 2), true);
    });
  });
}
