// The participants table keeps room on its pages (migration 018): a send's unread counts and a read's reset are
// written beside each row, not moved to another page and indexed again (PostgreSQL's HOT updates).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';

for (const database of DATABASES) {
  describe(`participants' rows updated in place (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const db = () => app.app.database.db as unknown as Kysely<unknown>;
    /** Each member's row and the page it is on (the block of its ctid). */
    const pages = async (conversationId: number) => {
      const { rows } = await sql<{ user_id: string; page: string }>`
        select user_id, (ctid::text::point)[0]::bigint as page from participants where conversation_id = ${conversationId}`.execute(db());
      return new Map(rows.map((r) => [Number(r.user_id), Number(r.page)]));
    };

    test('a message to a group of 600 and its members\' reads leave every member\'s row on the page it was on', async () => {
      const members = Array.from({ length: 600 }, (_, i) => 1_000 + i);
      await sql`insert into users (id, name, created_at, updated_at) select g, 'Member ' || g, now(), now() from unnest(${`{${members.join(',')}}`}::bigint[]) g`.execute(db());
      const owner = members[0]!;
      const created = await app.request(owner, 'POST', '/groups', { name: 'Six hundred', user_ids: members.slice(1) });
      assert.equal(created.status, 201);
      const conversationId = (created.body as { data: { id: number } }).data.id;
      const before = await pages(conversationId);
      assert.ok(new Set(before.values()).size > 3, 'the group spans several pages');

      for (const body of ['One', 'Two']) assert.equal((await app.request(owner, 'POST', `/conversations/${conversationId}/messages`, { body })).status, 201);
      const afterSends = await pages(conversationId);
      const { rows } = await sql<{ unread: number }>`select min(unread_count) as unread from participants where conversation_id = ${conversationId} and user_id <> ${owner}`.execute(db());
      assert.equal(Number(rows[0]!.unread), 2, 'every member counts both messages');
      assert.deepEqual([...afterSends].filter(([user, page]) => before.get(user) !== page), [], 'no row moved to another page');

      for (const reader of members.slice(1, 40)) assert.ok((await app.request(reader, 'POST', `/conversations/${conversationId}/read`, {})).status < 300);
      assert.deepEqual([...(await pages(conversationId))].filter(([user, page]) => before.get(user) !== page), [], 'no row moved to another page');
    });
  });
}
