// Read positions under concurrency, on real PostgreSQL: a participant's read position only moves forward, also
// when two read marks of the same reader race (one with the newest message, one with an older one, as two tabs
// or a retried request would send them). Whatever the interleaving, the position ends on the newest one marked
// and the unread count matches a recount from there.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUsers } from '../http/helpers.js';
import { assertInvariants, assertNoServerErrors, directConversation, participantRows, sendOne, startHarness, statuses, together, trials, type Harness } from './invariants.js';

const TRIALS = trials(30);

describe('read positions under concurrency (postgres)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  test('two read marks at once, the newest message and an older one: the position ends on the newest', async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [sender, reader] = newUsers(2);
      const id = await directConversation(h, sender, reader);
      const sent: number[] = [];
      for (let i = 0; i < 6; i++) sent.push(await sendOne(h, sender, id));
      const newest = sent.at(-1)!;
      const older = sent[1]!;
      // The older mark first in each pair, so that a write-what-you-computed build loses to it most often.
      const marks = await together([
        () => h.call(reader, 'POST', `/conversations/${id}/read`, { message_id: older }),
        () => h.call(reader, 'POST', `/conversations/${id}/read`, { message_id: newest }),
        () => h.call(reader, 'POST', `/conversations/${id}/read`, { message_id: older }),
      ]);
      assert.deepEqual(statuses(marks), [200, 200, 200], `trial ${trial}`);
      const row = (await participantRows(h.sql, id)).find((r) => r.user_id === reader)!;
      assert.equal(row.last_read_message_id, newest, `trial ${trial}: the read position never moves back`);
      assert.equal(row.unread_count, 0, `trial ${trial}: nothing after the newest is unread`);
      await assertInvariants(h, [id], `trial ${trial}`);
    }
    assertNoServerErrors(h.answers);
  });

  test('read marks racing sends: the position only grows and the unread count is a recount', async () => {
    for (let trial = 1; trial <= Math.ceil(TRIALS / 3); trial++) {
      const [sender, reader] = newUsers(2);
      const id = await directConversation(h, sender, reader);
      const first = await sendOne(h, sender, id);
      const answers = await together([
        () => h.call(reader, 'POST', `/conversations/${id}/read`, {}),
        () => h.call(sender, 'POST', `/conversations/${id}/messages`, { body: 'more' }),
        () => h.call(reader, 'POST', `/conversations/${id}/read`, { message_id: first }),
        () => h.call(sender, 'POST', `/conversations/${id}/messages`, { body: 'and more' }),
      ]);
      assert.ok(answers.every((a) => a.status < 300), `trial ${trial}: ${JSON.stringify(statuses(answers))}`);
      const positions = answers.filter((a) => a.path.endsWith('/read')).map((a) => a.body.data.last_read_message_id as number);
      const row = (await participantRows(h.sql, id)).find((r) => r.user_id === reader)!;
      assert.equal(row.last_read_message_id, Math.max(...positions), `trial ${trial}: the stored position is the furthest one answered`);
      await assertInvariants(h, [id], `trial ${trial}`);
    }
    assertNoServerErrors(h.answers);
  });
});
