// A token's user (store/users.ts, ensureUser): created when first seen, refreshed when the token's profile differs,
// and read once per node, however many of the user's requests arrive together (and with other users' of the moment).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { DB } from '../../src/store/database.js';
import { ensureUser } from '../../src/store/users.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { counted as countedOn } from '../support/statement-counter.js';

for (const database of DATABASES) {
  describe(`a token's user (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    /** A handle on the app's database with its own (empty) memory of users, counting its statements. */
    const counted = () => countedOn(app.app.database.db);

    test('requests of a user this node does not know, arriving together, share one read (and one write)', async () => {
      const { db, counter } = counted();
      const now = new Date();
      const standings = await Promise.all(Array.from({ length: 5 }, () => ensureUser(db, 901, { name: 'Nine' }, now)));
      assert.deepEqual(standings, ['ok', 'ok', 'ok', 'ok', 'ok']);
      assert.equal(counter.count, 2, 'one read of the user, one write creating them');
      await ensureUser(db, 901, { name: 'Nine' }, now);
      assert.equal(counter.count, 2, 'known now: no statement');
    });

    test('requests of different users arriving together share one read, and each new user is written', async () => {
      const { db, counter } = counted();
      const now = new Date();
      assert.deepEqual(await Promise.all([ensureUser(db, 903, { name: 'Three' }, now), ensureUser(db, 904, { name: 'Four' }, now)]), ['ok', 'ok']);
      assert.equal(counter.count, 3, 'one read of both users, one write creating each');
      const rows = await (app.app.database.db as DB).selectFrom('users').select(['id', 'name']).where('id', 'in', [903, 904]).orderBy('id').execute();
      assert.deepEqual(rows, [{ id: 903, name: 'Three' }, { id: 904, name: 'Four' }]);
    });
  });
}
