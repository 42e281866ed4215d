// Threads and pins under concurrency, on real PostgreSQL: 100 replies to one thread at once leave reply_count 100;
// 51 pins at once in a conversation with none leave exactly 50 pinned (one 409 too_many_pins), whatever the
// interleaving.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUsers } from '../http/helpers.js';
import { assertNoServerErrors, directConversation, groupOf, sendOne, startHarness, statuses, together, trials, type Harness } from './invariants.js';

describe('threads and pins under concurrency (postgres)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  test('100 concurrent replies: reply_count 100, every reply listed once', async () => {
    for (let trial = 1; trial <= trials(2); trial++) {
      const [owner, ...members] = newUsers(5);
      const id = await groupOf(h, owner!, members);
      const root = await sendOne(h, owner!, id, 'root');
      const replies = await together(Array.from({ length: 100 }, (_, i) => () => h.call(members[i % members.length]!, 'POST', `/conversations/${id}/messages`, { body: `r${i}`, thread_id: root })));
      assert.ok(replies.every((r) => r.status === 201), JSON.stringify(statuses(replies)));
      const item = (await h.call(owner!, 'GET', `/conversations/${id}/messages`)).body.data.find((m: any) => m.id === root);
      assert.equal(item.thread.reply_count, 100, `trial ${trial}`);
      assert.deepEqual(item.thread.participant_ids, [owner!, ...members].sort((a, b) => a - b));
      const { rows } = await h.sql.query('select count(*)::int as n from messages where thread_id = $1', [root]);
      assert.equal(rows[0].n, 100);
    }
    assertNoServerErrors(h.answers);
  });

  test('51 concurrent pins: exactly 50 succeed, one 409 too_many_pins', async () => {
    for (let trial = 1; trial <= trials(3); trial++) {
      const [a, b] = newUsers(2);
      const id = await directConversation(h, a!, b!);
      const ids: number[] = [];
      for (let i = 0; i < 51; i++) ids.push(await sendOne(h, i % 2 ? a! : b!, id, `m${i}`));
      const pins = await together(ids.map((m, i) => () => h.call(i % 2 ? a! : b!, 'PUT', `/messages/${m}/pin`)));
      const counted = statuses(pins).reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
      assert.deepEqual(counted, { 200: 50, 409: 1 }, `trial ${trial}`);
      assert.equal(pins.find((p) => p.status === 409)!.body.code, 'too_many_pins');
      const { rows } = await h.sql.query('select count(*)::int as n from messages where conversation_id = $1 and pinned_at is not null', [id]);
      assert.equal(rows[0].n, 50, `trial ${trial}: 50 pinned in the database`);
    }
    assertNoServerErrors(h.answers);
  });
});
