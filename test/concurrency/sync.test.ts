// The change feed under concurrency, on real PostgreSQL with two nodes on one database: senders on both nodes,
// every participant syncing in a loop on either node while they send, a member removed midway. Transactions take
// their feed positions before they commit and commit out of order; whatever the interleaving:
//   - every message answered 201 is in every participant's feed exactly once (no gap, no repeat), in the order
//     the messages were written in their conversation;
//   - a member removed midway gets a prefix of the group's messages and nothing of the group after the removal.
// Nothing is timed; each trial is a fresh group, repeated so that a race showing one time in several fails.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUsers } from '../http/helpers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { assertNoServerErrors, groupOf, startHarness, trials, UNLIMITED, type Answer, type Harness } from './invariants.js';

const TRIALS = trials(4);
const SENDERS = 4;
const SENDS_EACH = 40;
/** Groups of the same members: their sends run in transactions side by side, which commit out of order. */
const GROUPS = 4;

describe('change feed under concurrency (postgres, two nodes)', () => {
  let h: Harness;
  let second: TestApp;
  const answers: Answer[] = [];
  before(async () => {
    h = await startHarness();
    // A second node on the same database (its own process state: send queue, lanes, pool).
    second = await startTestApp({ database: 'pglite', env: { ...UNLIMITED, DATABASE_URL: h.app.config.databaseUrl! } });
  });
  after(async () => {
    await second?.close();
    await h?.close();
  });

  /** A request on node 0 (the harness's) or node 1. */
  async function on(node: number, user: number, method: string, path: string, body?: unknown) {
    if (node === 0) return h.call(user, method, path, body);
    const res = await second.request(user, method, path, body);
    const answer = { user, method, path, status: res.status, body: res.body };
    answers.push(answer);
    return answer;
  }

  test('every 201 is in every participant’s feed exactly once, in write order; nothing of a group after a removal', async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const [owner, leaver, ...senders] = newUsers(2 + SENDERS);
      const groups: number[] = [];
      for (let g = 0; g < GROUPS; g++) groups.push(await groupOf(h, owner, [leaver, ...senders!]));
      const groupId = groups[0]!;
      const readers = [owner, leaver, ...senders];
      const cursors = new Map<number, string>();
      for (const r of readers) cursors.set(r, (await on(r % 2, r, 'GET', '/sync')).body.data.cursor);
      const feeds = new Map<number, any[]>(readers.map((r) => [r, []]));

      let sending = true;
      const syncOnce = async (reader: number, node: number) => {
        for (;;) {
          const res = await on(node, reader, 'GET', `/sync?since=${cursors.get(reader)}&limit=7`);
          assert.equal(res.status, 200, JSON.stringify(res.body));
          feeds.get(reader)!.push(...res.body.data.changes);
          cursors.set(reader, res.body.data.cursor);
          if (!res.body.data.has_more) return;
        }
      };
      const syncing = readers.map(async (reader, i) => {
        let node = i % 2;
        while (sending) {
          await syncOnce(reader, node);
          node = 1 - node;
        }
      });

      const sent = new Map<number, number[]>(groups.map((g) => [g, []]));
      const sends = senders.map(async (sender, i) => {
        for (let n = 0; n < SENDS_EACH; n++) {
          const to = groups[(i + n) % GROUPS]!;
          const res = await on((i + n) % 2, sender, 'POST', `/conversations/${to}/messages`, { body: `${sender}:${n}` });
          assert.equal(res.status, 201, JSON.stringify(res.body));
          sent.get(to)!.push(res.body.data.id);
        }
      });
      const removal = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 20 + trial * 15));
        const res = await on(trial % 2, owner, 'DELETE', `/groups/${groupId}/participants/${leaver}`);
        assert.equal(res.status, 204, JSON.stringify(res.body));
      })();
      await Promise.all([...sends, removal]);
      sending = false;
      await Promise.all(syncing);
      for (const r of readers) await syncOnce(r, 0);

      for (const g of groups) {
        const all = [...sent.get(g)!].sort((a, b) => a - b);
        for (const reader of [owner, ...senders]) {
          const ids = feeds.get(reader)!.filter((c) => c.type === 'MessageSent' && c.conversation_id === g).map((c) => c.data.id);
          assert.deepEqual(ids, all, `trial ${trial}: user ${reader} has every message of group ${g} once, in write order`);
        }
      }
      const all = [...sent.get(groupId)!].sort((a, b) => a - b);
      const leavers = feeds.get(leaver)!.filter((c) => c.conversation_id === groupId);
      const revokedAt = leavers.findIndex((c) => c.type === 'GroupMembershipRevoked');
      assert.ok(revokedAt >= 0, `trial ${trial}: the removed member is told`);
      assert.equal(revokedAt, leavers.length - 1, `trial ${trial}: nothing of the group after the removal`);
      const theirs = leavers.filter((c) => c.type === 'MessageSent').map((c) => c.data.id);
      assert.deepEqual(theirs, all.slice(0, theirs.length), `trial ${trial}: the removed member has exactly the messages written before the removal`);
      assert.ok(theirs.length < all.length, `trial ${trial}: the removal landed before the last send`);
    }
    assertNoServerErrors([...h.answers, ...answers]);
  });
});
