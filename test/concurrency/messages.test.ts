// Messages under concurrency, on real PostgreSQL: deletes racing each other, and sends racing deletes, edits and
// reads of the same conversation. Whatever the interleaving, each message is deleted once, and afterwards every
// participant's unread count equals a recount and the last message is the newest one still there.
// Each rule is tried many times over (a fresh conversation per trial): a race that shows one time in two fails
// the test with near certainty; a correct implementation passes every trial, whatever the interleaving.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUsers } from '../http/helpers.js';
import {
  assertInvariants,
  assertNoServerErrors,
  directConversation,
  groupOf,
  prng,
  sendOne,
  startHarness,
  statuses,
  together,
  type Answer,
  type Harness,
  SEED,
  trials,
} from './invariants.js';

const TRIALS = trials(10);
const BURST_TRIALS = trials(6);

describe('messages under concurrency (postgres)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  async function unreadOf(user: number, conversationId: number): Promise<number> {
    const res = await h.call(user, 'GET', `/conversations/${conversationId}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.unread_count;
  }

  test('eight concurrent deletes of one message: one succeeds, the unread count drops by exactly one', async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [sender, recipient] = newUsers(2);
      const id = await directConversation(h, sender, recipient);
      const sent = [];
      for (let i = 0; i < 3; i++) sent.push(await sendOne(h, sender, id));
      assert.equal(await unreadOf(recipient, id), 3);

      const target = sent[2]!; // the last message: the conversation's last message falls back to the one before
      const deletes = await together(Array.from({ length: 8 }, () => () => h.call(sender, 'DELETE', `/messages/${target}`)));

      assert.deepEqual(statuses(deletes), [204, 404, 404, 404, 404, 404, 404, 404], `trial ${trial}: exactly one delete succeeds`);
      assert.equal(await unreadOf(recipient, id), 2, `trial ${trial}: the recipient's unread count drops by exactly one`);
      const view = (await h.call(recipient, 'GET', `/conversations/${id}`)).body.data;
      assert.equal(view.last_message?.id, sent[1], `trial ${trial}: the last message falls back to the one before`);
      await assertInvariants(h, [id], `trial ${trial}`);
    }
    assertNoServerErrors(h.answers);
  });

  test('the sender, the owner and an admin deleting one group message at once: one succeeds, each unread count drops by one', async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [owner, admin, sender, reader] = newUsers(4);
      const id = await groupOf(h, owner, [admin, sender, reader], [admin]);
      const target = await sendOne(h, sender, id);
      await sendOne(h, sender, id);
      const deleters = [sender, owner, admin, sender, owner, admin];
      const deletes = await together(deleters.map((user) => () => h.call(user, 'DELETE', `/messages/${target}`)));

      assert.deepEqual(statuses(deletes), [204, 404, 404, 404, 404, 404], `trial ${trial}: exactly one delete succeeds`);
      for (const user of [owner, admin, reader]) {
        assert.equal(await unreadOf(user, id), 1, `trial ${trial}: user ${user} has one unread message left`);
      }
      await assertInvariants(h, [id], `trial ${trial}`);
    }
    assertNoServerErrors(h.answers);
  });

  /**
   * One burst on one conversation: 40 sends (10 of them deleted and 5 edited by their sender as soon as they
   * are written), 10 deletes and 5 edits of the newest earlier messages, and reads by every participant
   * (to the latest message, or to a given one), all started at once in a shuffled order.
   */
  async function burst(
    conversationId: number,
    participants: readonly number[],
    moderator: number | null,
    rand: ReturnType<typeof prng>,
    trial: number,
  ): Promise<void> {
    const earlier: { id: number; sender: number }[] = [];
    for (let i = 0; i < 20; i++) {
      const sender = participants[i % participants.length]!;
      earlier.push({ id: await sendOne(h, sender, conversationId, `earlier ${i}`), sender });
    }
    const newestEarlier = earlier.slice(-10);

    const sends: (() => Promise<Answer>)[] = [];
    const chained: (() => Promise<Answer[]>)[] = [];
    for (let i = 0; i < 40; i++) {
      const sender = participants[i % participants.length]!;
      const path = `/conversations/${conversationId}/messages`;
      if (i % 4 === 0) {
        // Sent, then deleted at once by its sender.
        chained.push(async () => {
          const sent = await h.call(sender, 'POST', path, { body: `burst ${i}` });
          return sent.status === 201 ? [sent, await h.call(sender, 'DELETE', `/messages/${sent.body.data.id}`)] : [sent];
        });
      } else if (i % 8 === 1) {
        // Sent, then edited at once by its sender.
        chained.push(async () => {
          const sent = await h.call(sender, 'POST', path, { body: `burst ${i}` });
          return sent.status === 201 ? [sent, await h.call(sender, 'PATCH', `/messages/${sent.body.data.id}`, { body: `burst ${i}, edited` })] : [sent];
        });
      } else {
        sends.push(() => h.call(sender, 'POST', path, { body: `burst ${i}` }));
      }
    }
    const deletes = newestEarlier.map(({ id, sender }, i) => {
      // In a group, every other one is deleted by the owner (a moderator) instead of its sender.
      const by = moderator !== null && i % 2 === 1 ? moderator : sender;
      return () => h.call(by, 'DELETE', `/messages/${id}`);
    });
    const edits = newestEarlier
      .filter((_, i) => i % 2 === 0)
      .map(({ id, sender }) => () => h.call(sender, 'PATCH', `/messages/${id}`, { body: 'edited while deleted' }));
    const reads: (() => Promise<Answer>)[] = [];
    for (let i = 0; i < 10; i++) {
      const reader = participants[i % participants.length]!;
      const body = i % 3 === 2 ? { message_id: rand.pick(earlier.slice(0, 10)).id } : {};
      reads.push(() => h.call(reader, 'POST', `/conversations/${conversationId}/read`, body));
    }

    type Kind = 'send' | 'chained' | 'delete' | 'edit' | 'read';
    const operations: { kind: Kind; run: () => Promise<Answer | Answer[]> }[] = rand.shuffle([
      ...sends.map((run) => ({ kind: 'send' as Kind, run })),
      ...chained.map((run) => ({ kind: 'chained' as Kind, run })),
      ...deletes.map((run) => ({ kind: 'delete' as Kind, run })),
      ...edits.map((run) => ({ kind: 'edit' as Kind, run })),
      ...reads.map((run) => ({ kind: 'read' as Kind, run })),
    ]);
    const results = await together(operations.map((op) => op.run));

    const byKind = (kind: Kind) => results.filter((_, i) => operations[i]!.kind === kind).flat();
    const context = `trial ${trial}`;
    assertNoServerErrors(results.flat());
    assert.ok(byKind('send').every((a) => a.status === 201), `${context}: every send is written`);
    assert.deepEqual(
      byKind('chained').map((a) => a.status).sort(),
      [...Array(15).fill(201), ...Array(10).fill(204), ...Array(5).fill(200)].sort(),
      `${context}: every send is written, then deleted or edited by its sender`,
    );
    assert.ok(byKind('delete').every((a) => a.status === 204), `${context}: each earlier message is deleted once`);
    assert.ok(byKind('edit').every((a) => a.status === 200 || a.status === 404), `${context}: an edit racing a delete succeeds or finds nothing`);
    assert.ok(byKind('read').every((a) => a.status === 200), `${context}: every read is recorded`);

    const visible = await h.sql.query('select count(*)::int as n from messages where conversation_id = $1 and deleted_at is null', [conversationId]);
    assert.equal(visible.rows[0].n, 20 + 40 - 20, `${context}: 20 earlier and 40 new messages, 20 of them deleted`);
    await assertInvariants(h, [conversationId], context);
  }

  test('sends racing deletes, edits and reads in a direct conversation: unread counts equal a recount, the last message is the newest one left', async (t) => {
    t.diagnostic(`seed ${SEED}`);
    const rand = prng(SEED);
    for (let trial = 1; trial <= BURST_TRIALS; trial++) {
      const [a, b] = newUsers(2);
      const id = await directConversation(h, a, b);
      await burst(id, [a, b], null, rand, trial);
    }
  });

  test('sends racing deletes (by senders and by a moderator), edits and reads in a group: unread counts equal a recount, the last message is the newest one left', async (t) => {
    t.diagnostic(`seed ${SEED + 1}`);
    const rand = prng(SEED + 1);
    for (let trial = 1; trial <= BURST_TRIALS; trial++) {
      const [owner, admin, m1, m2] = newUsers(4);
      const id = await groupOf(h, owner, [admin, m1, m2], [admin]);
      await burst(id, [owner, admin, m1, m2], owner, rand, trial);
    }
  });
});
