// Groups under concurrency, on real PostgreSQL: ownership hand-overs racing each other and the owner's leaving,
// sends and other operations racing the group's deletion, and participants added, removed and leaving at once.
// Whatever the interleaving: exactly one owner while anyone is left, participant_count equals the participant
// rows, every answer is a 2xx or a 4xx (never a 5xx), and a deleted group is gone entirely.
// Each rule is tried many times over (a fresh group per trial); the assertions name only outcomes that every
// serial order of the racing requests would give.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUsers } from '../http/helpers.js';
import {
  assertInvariants,
  assertNoServerErrors,
  groupOf,
  isParticipant,
  leftovers,
  ownersOf,
  participantRows,
  register,
  sendOne,
  startHarness,
  statuses,
  together,
  type Answer,
  type Harness,
  trials,
} from './invariants.js';

const TRIALS = trials(10);
/** For the narrowest races: groups raced at the same time within one trial. */
const GROUPS_AT_ONCE = 4;

describe('groups under concurrency (postgres)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  const makeOwner = (owner: number, id: number, user: number) => () => h.call(owner, 'PATCH', `/groups/${id}/participants/${user}`, { role: 'owner' });
  const leave = (user: number, id: number) => () => h.call(user, 'POST', `/groups/${id}/leave`);
  const isClientAnswer = (a: Answer) => a.status >= 200 && a.status < 500;

  async function participantIds(id: number): Promise<number[]> {
    return (await participantRows(h.sql, id)).map((p) => p.user_id);
  }

  describe('ownership', () => {
    test('the owner handing ownership to two users at once: one hand-over succeeds, the group has exactly one owner', async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const [owner, x, y, z] = newUsers(4);
        const id = await groupOf(h, owner, [x, y, z]);
        const answers = await together([makeOwner(owner, id, x), makeOwner(owner, id, y)]);

        assert.ok(answers.every(isClientAnswer), `trial ${trial}: ${JSON.stringify(statuses(answers))}`);
        const succeeded = answers.filter((a) => a.status === 204);
        assert.equal(succeeded.length, 1, `trial ${trial}: once ownership is handed over, the former owner may not hand it over again`);
        const heir = answers[0]!.status === 204 ? x : y;
        assert.deepEqual(await ownersOf(h.sql, id), [heir], `trial ${trial}: the one owner is the user the successful hand-over named`);
        await assertInvariants(h, [id], `trial ${trial}`);
      }
      assertNoServerErrors(h.answers);
    });

    test('the owner leaving while handing ownership over: the group has exactly one owner', async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const [owner, admin, x, y] = newUsers(4);
        const id = await groupOf(h, owner, [admin, x, y], [admin]);
        const [left, handedOver] = await together([leave(owner, id), makeOwner(owner, id, x)]);

        assert.equal(left!.status, 204, `trial ${trial}: the owner leaves`);
        assert.ok(isClientAnswer(handedOver!), `trial ${trial}: the hand-over answers ${handedOver!.status}`);
        assert.equal(await isParticipant(h.sql, id, owner), false, `trial ${trial}: the owner is gone`);
        // Hand-over first: x owns it, and the former owner left as an admin. Leave first: the longest-standing admin inherits it.
        const expected = handedOver!.status === 204 ? x : admin;
        assert.deepEqual(await ownersOf(h.sql, id), [expected], `trial ${trial}: exactly one owner (hand-over answered ${handedOver!.status})`);
        await assertInvariants(h, [id], `trial ${trial}`);
      }
      assertNoServerErrors(h.answers);
    });

    test('the owner and the admin who would inherit leave at once: the longest-standing member owns the group', async () => {
      // Several groups at once per trial: this race is a narrow one.
      for (let trial = 1; trial <= TRIALS; trial++) {
        await Promise.all(
          Array.from({ length: GROUPS_AT_ONCE }, async (_, g) => {
            const context = `trial ${trial}, group ${g + 1}`;
            const [owner, admin, x, y] = newUsers(4);
            const id = await groupOf(h, owner, [admin, x, y], [admin]);
            const answers = await together([leave(owner, id), leave(admin, id)]);

            assert.deepEqual(statuses(answers), [204, 204], `${context}: both leave`);
            assert.deepEqual(await participantIds(id), [x, y].sort((a, b) => a - b), `${context}: the members remain`);
            assert.deepEqual(await ownersOf(h.sql, id), [x], `${context}: in either order, ownership ends with the longest-standing member`);
            await assertInvariants(h, [id], context);
          }),
        );
      }
      assertNoServerErrors(h.answers);
    });

    test('ownership handed to a member who is leaving at that moment: the group has exactly one owner', async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const [owner, x, y] = newUsers(3);
        const id = await groupOf(h, owner, [x, y]);
        const [handedOver, left] = await together([makeOwner(owner, id, x), leave(x, id)]);

        assert.equal(left!.status, 204, `trial ${trial}: the member leaves`);
        assert.ok(isClientAnswer(handedOver!), `trial ${trial}: the hand-over answers ${handedOver!.status}`);
        // Hand-over first: x leaves as the owner and the former owner (now an admin) inherits. Leave first: nothing is handed over.
        assert.deepEqual(await ownersOf(h.sql, id), [owner], `trial ${trial}: exactly one owner, the original one (hand-over answered ${handedOver!.status})`);
        await assertInvariants(h, [id], `trial ${trial}`);
      }
      assertNoServerErrors(h.answers);
    });
  });

  describe('deletion', () => {
    test('sends racing the group deletion: each send answers 201 or 404, and the group is gone afterwards', async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const [owner, m1, m2, m3] = newUsers(4);
        const id = await groupOf(h, owner, [m1, m2, m3]);
        await sendOne(h, m1, id);
        const send = (user: number, i: number) => () => h.call(user, 'POST', `/conversations/${id}/messages`, { body: `racing ${i}` });
        const sends = [owner, m1, m2, m3, owner, m1, m2, m3, owner, m1, m2, m3, owner, m1, m2, m3, owner, m1, m2, m3].map(send);
        const operations = [...sends.slice(0, 8), () => h.call(owner, 'DELETE', `/groups/${id}`), ...sends.slice(8)];
        const answers = await together(operations);

        const deleted = answers[8]!;
        const sent = answers.filter((_, i) => i !== 8);
        assert.equal(deleted.status, 204, `trial ${trial}: the owner deletes the group`);
        assert.deepEqual(
          sent.filter((a) => a.status !== 201 && a.status !== 404).map((a) => `${a.status} ${JSON.stringify(a.body)}`),
          [],
          `trial ${trial}: a send is written before the deletion (201) or finds no conversation (404)`,
        );
        for (const user of [owner, m1, m2, m3]) {
          assert.equal((await h.call(user, 'GET', `/conversations/${id}`)).status, 404, `trial ${trial}: the group is gone for ${user}`);
        }
        assert.deepEqual(await leftovers(h.sql, id), { conversations: 0, participants: 0, messages: 0 }, `trial ${trial}: nothing of the group is left`);
      }
      assertNoServerErrors(h.answers);
    });

    test('reads, edits, deletes, additions, role changes, renames and leaves racing the group deletion: each answers 2xx or 404', async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const [owner, admin, m1, m2, outsider] = newUsers(5);
        await register(h, outsider);
        const id = await groupOf(h, owner, [admin, m1, m2], [admin]);
        const first = await sendOne(h, m1, id);
        const second = await sendOne(h, m2, id);
        const third = await sendOne(h, admin, id);
        const operations = [
          () => h.call(m1, 'POST', `/conversations/${id}/read`, {}),
          () => h.call(m1, 'PATCH', `/messages/${first}`, { body: 'edited' }),
          () => h.call(admin, 'POST', `/groups/${id}/participants`, { user_ids: [outsider] }),
          () => h.call(m2, 'DELETE', `/messages/${second}`),
          () => h.call(owner, 'DELETE', `/groups/${id}`),
          () => h.call(owner, 'PATCH', `/groups/${id}/participants/${m1}`, { role: 'admin' }),
          () => h.call(admin, 'PATCH', `/groups/${id}`, { name: 'Renamed' }),
          () => h.call(owner, 'DELETE', `/messages/${third}`),
          () => h.call(m2, 'POST', `/groups/${id}/leave`),
          () => h.call(admin, 'POST', `/conversations/${id}/messages`, { body: 'still here?' }),
          () => h.call(owner, 'POST', `/conversations/${id}/read`, {}),
        ];
        const answers = await together(operations);

        assert.equal(answers[4]!.status, 204, `trial ${trial}: the owner deletes the group`);
        assert.deepEqual(
          answers.filter((a) => !((a.status >= 200 && a.status < 300) || a.status === 404)).map((a) => `${a.method} ${a.path} → ${a.status} ${JSON.stringify(a.body)}`),
          [],
          `trial ${trial}: every operation happens before the deletion or finds nothing (404)`,
        );
        for (const user of [owner, admin, m1, m2, outsider]) {
          assert.equal((await h.call(user, 'GET', `/conversations/${id}`)).status, 404, `trial ${trial}: the group is gone for ${user}`);
        }
        assert.deepEqual(await leftovers(h.sql, id), { conversations: 0, participants: 0, messages: 0 }, `trial ${trial}: nothing of the group is left`);
      }
      assertNoServerErrors(h.answers);
    });
  });

  describe('participants', () => {
    test('additions, removals and leaves at once: participant_count equals the participant rows, one owner, no 5xx', async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const [owner, admin, m1, m2, m3, m4, o1, o2, o3, o4] = newUsers(10);
        await register(h, o1, o2, o3, o4);
        const id = await groupOf(h, owner, [admin, m1, m2, m3, m4], [admin]);
        await sendOne(h, m1, id);
        const add = (by: number, users: number[]) => () => h.call(by, 'POST', `/groups/${id}/participants`, { user_ids: users });
        const remove = (by: number, user: number) => () => h.call(by, 'DELETE', `/groups/${id}/participants/${user}`);
        const operations = [
          add(owner, [o1, o2, o3]),
          add(admin, [o2, o3, o4]),
          remove(owner, m1),
          leave(m2, id),
          add(owner, [o1, o4]),
          remove(admin, m1),
          leave(m3, id),
          add(owner, [m2]),
          remove(admin, m4),
          leave(m3, id),
          leave(m4, id),
          () => h.call(m1, 'POST', `/conversations/${id}/messages`, { body: 'leaving soon' }),
          add(admin, [o1]),
        ];
        const answers = await together(operations);

        assert.deepEqual(
          answers.filter((a) => !isClientAnswer(a)).map((a) => `${a.method} ${a.path} → ${a.status} ${JSON.stringify(a.body)}`),
          [],
          `trial ${trial}: every answer is a 2xx or a 4xx`,
        );
        const adds = [answers[0], answers[1], answers[4], answers[12]];
        assert.ok(adds.every((a) => a!.status === 200), `trial ${trial}: adding users, present already or not, succeeds: ${adds.map((a) => a!.status)}`);
        const ids = await participantIds(id);
        for (const user of [owner, admin, o1, o2, o3, o4]) assert.ok(ids.includes(user), `trial ${trial}: ${user} is in the group`);
        for (const user of [m1, m3, m4]) assert.ok(!ids.includes(user), `trial ${trial}: ${user} was removed or left`);
        assert.deepEqual(await ownersOf(h.sql, id), [owner], `trial ${trial}: the owner still owns the group`);
        await assertInvariants(h, [id], `trial ${trial}`);
      }
      assertNoServerErrors(h.answers);
    });

    test('the same users added by the owner and an admin at once: each is added once, participant_count equals the rows', async () => {
      for (let trial = 1; trial <= TRIALS; trial++) {
        const [owner, admin, o1, o2, o3] = newUsers(5);
        await register(h, o1, o2, o3);
        const id = await groupOf(h, owner, [admin], [admin]);
        const answers = await together(
          [owner, admin, owner, admin].map((by) => () => h.call(by, 'POST', `/groups/${id}/participants`, { user_ids: [o1, o2, o3] })),
        );

        assert.deepEqual(statuses(answers), [200, 200, 200, 200], `trial ${trial}: adding users present already changes nothing and succeeds`);
        assert.equal((await participantIds(id)).length, 5, `trial ${trial}: five participants`);
        await assertInvariants(h, [id], `trial ${trial}`);
      }
      assertNoServerErrors(h.answers);
    });

    test('every participant leaving at once (some twice): each leaves once, and the group is gone', async () => {
      // Several groups at once per trial: this race is a narrow one.
      for (let trial = 1; trial <= TRIALS; trial++) {
        await Promise.all(
          Array.from({ length: GROUPS_AT_ONCE }, async (_, g) => {
            const context = `trial ${trial}, group ${g + 1}`;
            const [owner, admin, m1, m2, m3] = newUsers(5);
            const id = await groupOf(h, owner, [admin, m1, m2, m3], [admin]);
            await sendOne(h, m1, id);
            const answers = await together([owner, admin, m1, m2, m3, owner, m2, admin].map((user) => leave(user, id)));

            assert.deepEqual(statuses(answers), [204, 204, 204, 204, 204, 404, 404, 404], `${context}: each participant leaves once`);
            assert.deepEqual(await leftovers(h.sql, id), { conversations: 0, participants: 0, messages: 0 }, `${context}: the last one leaving ends the group`);
          }),
        );
      }
      assertNoServerErrors(h.answers);
    });
  });
});
