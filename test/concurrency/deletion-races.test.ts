// Writes racing a group's deletion, on real PostgreSQL: a forward to the group and another conversation, an edit
// of a message in the group, a reply in it. Whatever the interleaving, each answer says what happened (the write
// first: 2xx; the deletion first: 404), never 5xx or 409, and a forward is all or nothing: refused, it left no
// copy in the other conversation (a client retrying it would otherwise duplicate that copy).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUsers } from '../http/helpers.js';
import { assertNoServerErrors, directConversation, groupOf, sendOne, startHarness, together, trials, type Harness } from './invariants.js';

const TRIALS = trials(60);

describe('writes racing a group deletion (postgres)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  test('a forward to the group and a direct conversation: 201 with both copies, or 404 and no copy anywhere', async () => {
    const outcomes = new Set<number>();
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [owner, forwarder, friend] = newUsers(3);
      const source = await directConversation(h, forwarder!, friend!);
      const other = await directConversation(h, forwarder!, owner!);
      const groupId = await groupOf(h, owner!, [forwarder!]);
      const message = await sendOne(h, friend!, source, 'pass it on');
      const [forward, deletion] = await together([
        () => h.call(forwarder!, 'POST', `/messages/${message}/forward`, { conversation_ids: [groupId, other] }),
        () => h.call(owner!, 'DELETE', `/groups/${groupId}`),
      ]);
      assert.equal(deletion!.status, 204, `trial ${trial}: the deletion`);
      assert.ok([201, 404].includes(forward!.status), `trial ${trial}: forward answered ${forward!.status} ${JSON.stringify(forward!.body)}`);
      outcomes.add(forward!.status);
      const copies = await h.sql.query(`select count(*)::int as n from messages where conversation_id = $1 and forwarded_from_message_id = $2`, [other, message]);
      assert.equal(copies.rows[0].n, forward!.status === 201 ? 1 : 0, `trial ${trial}: the copy in the other conversation follows the answer`);
    }
    assertNoServerErrors(h.answers);
  });

  test('a forward of a message of the group to two other conversations: 201 with both copies, or 404 and none', async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [owner, forwarder, a, b] = newUsers(4);
      const first = await directConversation(h, forwarder!, a!);
      const second = await directConversation(h, forwarder!, b!);
      const groupId = await groupOf(h, owner!, [forwarder!]);
      const message = await sendOne(h, owner!, groupId, 'worth sharing');
      const [forward, deletion] = await together([
        () => h.call(forwarder!, 'POST', `/messages/${message}/forward`, { conversation_ids: [first, second] }),
        () => h.call(owner!, 'DELETE', `/groups/${groupId}`),
      ]);
      assert.equal(deletion!.status, 204, `trial ${trial}: the deletion`);
      assert.ok([201, 404].includes(forward!.status), `trial ${trial}: forward answered ${forward!.status} ${JSON.stringify(forward!.body)}`);
      const copies = await h.sql.query(`select count(*)::int as n from messages where conversation_id = any($1::bigint[]) and sender_id = $2`, [[first, second], forwarder]);
      assert.equal(copies.rows[0].n, forward!.status === 201 ? 2 : 0, `trial ${trial}: the copies follow the answer`);
      if (forward!.status === 201) {
        const history = await h.call(a!, 'GET', `/conversations/${first}/messages`);
        assert.equal(history.status, 200, `trial ${trial}: the copy's conversation still reads`);
      }
    }
    assertNoServerErrors(h.answers);
  });

  test('an edit of a message in the group: 200 or 404', async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [owner, member] = newUsers(2);
      const groupId = await groupOf(h, owner!, [member!]);
      const message = await sendOne(h, member!, groupId, 'draft');
      const [edit] = await together([
        () => h.call(member!, 'PATCH', `/messages/${message}`, { body: 'final' }),
        () => h.call(owner!, 'DELETE', `/groups/${groupId}`),
      ]);
      assert.ok([200, 404].includes(edit!.status), `trial ${trial}: edit answered ${edit!.status} ${JSON.stringify(edit!.body)}`);
    }
    assertNoServerErrors(h.answers);
  });

  test('a reply in the group: 201 or 404', async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [owner, member] = newUsers(2);
      const groupId = await groupOf(h, owner!, [member!]);
      const message = await sendOne(h, owner!, groupId, 'question');
      const [reply] = await together([
        () => h.call(member!, 'POST', `/conversations/${groupId}/messages`, { body: 'answer', reply_to_id: message }),
        () => h.call(owner!, 'DELETE', `/groups/${groupId}`),
      ]);
      assert.ok([201, 404].includes(reply!.status), `trial ${trial}: reply answered ${reply!.status} ${JSON.stringify(reply!.body)}`);
    }
    assertNoServerErrors(h.answers);
  });
});
