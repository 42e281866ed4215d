// A randomized mix of concurrent operations from several users over two groups and four direct conversations,
// on real PostgreSQL: sends, edits, deletes (by senders and by group moderators), reads, role changes, additions,
// removals, leaves, blocks and unblocks. Each round starts a batch of operations at once; after each round the
// invariants hold for every conversation (see invariants.ts), and no answer is a 5xx.
// The operations come from a fixed-seed PRNG (printed; CONCURRENCY_SEED=n replays another sequence of choices;
// the interleaving on the server is, of course, not replayed).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newUsers } from '../http/helpers.js';
import {
  assertInvariants,
  directConversation,
  groupOf,
  prng,
  register,
  sendOne,
  serverErrors,
  startHarness,
  together,
  type Answer,
  type Harness,
  SEED,
} from './invariants.js';

const ROUNDS = Number(process.env.CONCURRENCY_ROUNDS ?? 12);
const OPERATIONS_PER_ROUND = 40;

interface Snapshot {
  /** Per conversation: its type, and its participants with their roles (empty when it is gone). */
  conversations: Map<number, { type: string; roles: Map<number, string> }>;
  /** Per conversation: its newest messages not deleted, oldest first. */
  messages: Map<number, { id: number; sender: number }[]>;
  /** Blocks as "blocker:blocked". */
  blocks: Set<string>;
}

describe('a random mix of concurrent operations (postgres)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  /** What the operations of a round are chosen from: the database as the round starts. */
  async function snapshot(conversationIds: readonly number[]): Promise<Snapshot> {
    const conversations = new Map<number, { type: string; roles: Map<number, string> }>();
    const { rows: convs } = await h.sql.query('select id::int as id, type from conversations where id = any($1)', [conversationIds]);
    for (const c of convs) conversations.set(c.id, { type: c.type, roles: new Map() });
    const { rows: participants } = await h.sql.query(
      'select conversation_id::int as c, user_id::int as u, role from participants where conversation_id = any($1) order by joined_at, user_id',
      [conversationIds],
    );
    for (const p of participants) conversations.get(p.c)?.roles.set(p.u, p.role);
    const messages = new Map<number, { id: number; sender: number }[]>();
    const { rows: recent } = await h.sql.query(
      `select c, id, sender from (
         select conversation_id::int as c, id::int as id, sender_id::int as sender,
                row_number() over (partition by conversation_id order by id desc) as n
           from messages where conversation_id = any($1) and deleted_at is null) m
        where n <= 20 order by id`,
      [conversationIds],
    );
    for (const m of recent) {
      if (!messages.has(m.c)) messages.set(m.c, []);
      messages.get(m.c)!.push({ id: m.id, sender: m.sender });
    }
    const { rows: blockRows } = await h.sql.query('select blocker_id::int as a, blocked_id::int as b from blocks');
    return { conversations, messages, blocks: new Set(blockRows.map((b) => `${b.a}:${b.b}`)) };
  }

  test('after every round of random concurrent operations the invariants hold and nothing answered with a 5xx', async (t) => {
    t.diagnostic(`seed ${SEED} (set CONCURRENCY_SEED to choose another), ${ROUNDS} rounds of ${OPERATIONS_PER_ROUND} operations`);
    console.log(`random mix: seed ${SEED}`);
    const rand = prng(SEED);
    const users = newUsers(8);
    const [u0, u1, u2, u3, u4, u5, u6, u7] = users as [number, number, number, number, number, number, number, number];
    await register(h, ...users);
    const groups = [await groupOf(h, u0, [u1, u2, u3, u4], [u1]), await groupOf(h, u5, [u6, u0, u2, u7], [u6])];
    const directs = [
      await directConversation(h, u0, u1),
      await directConversation(h, u2, u3),
      await directConversation(h, u4, u5),
      await directConversation(h, u6, u7),
    ];
    const all = [...groups, ...directs];
    for (const id of all) {
      const first = (await snapshot([id])).conversations.get(id)!;
      for (const user of [...first.roles.keys()].slice(0, 3)) await sendOne(h, user, id, 'a start');
    }
    await assertInvariants(h, all, 'before the first round');

    const tally = new Map<string, number>();
    for (let round = 1; round <= ROUNDS; round++) {
      const state = await snapshot(all);
      const operations = Array.from({ length: OPERATIONS_PER_ROUND }, () => chooseOperation(state));
      const answers = await together(operations.map((op) => op.run));
      for (const [i, op] of operations.entries()) {
        const key = `${op.kind} ${answers[i]!.status}`;
        tally.set(key, (tally.get(key) ?? 0) + 1);
      }

      const context = `seed ${SEED}, round ${round}`;
      assert.deepEqual(serverErrors(answers), [], `${context}: no operation answers with a 5xx`);
      assert.deepEqual(
        answers.filter((a) => a.status === 429).map((a) => `${a.method} ${a.path}`),
        [],
        `${context}: the rate limits, set high, never answer`,
      );
      await assertInvariants(h, all, context);
    }
    t.diagnostic(`answers: ${[...tally].sort().map(([k, n]) => `${k} ×${n}`).join(', ')}`);

    /** One random operation, chosen from the state at the start of the round; the server may refuse it (4xx). */
    function chooseOperation(state: Snapshot): { kind: string; run: () => Promise<Answer> } {
      const live = all.filter((id) => (state.conversations.get(id)?.roles.size ?? 0) > 0);
      const id = rand.pick(live.length > 0 ? live : all);
      const conversation = state.conversations.get(id) ?? { type: 'group', roles: new Map<number, string>() };
      const members = [...conversation.roles.keys()];
      const someone = members.length > 0 ? rand.pick(members) : rand.pick(users);
      const messages = state.messages.get(id) ?? [];
      // Mostly the newest messages: where deletes move the last message while sends race them.
      const message = messages.length === 0 ? null : rand.next() < 0.7 ? rand.pick(messages.slice(-4)) : rand.pick(messages);
      const moderators = members.filter((u) => conversation.roles.get(u) !== 'member');
      const owner = members.find((u) => conversation.roles.get(u) === 'owner') ?? someone;
      const isGroup = conversation.type === 'group';
      const roll = rand.next();

      if (roll < 0.3 || message === null) {
        const body = `round message ${rand.int(1e6)}`;
        return { kind: 'send', run: () => h.call(someone, 'POST', `/conversations/${id}/messages`, { body }) };
      }
      if (roll < 0.4) {
        const body = `edited ${rand.int(1e6)}`;
        return { kind: 'edit', run: () => h.call(message.sender, 'PATCH', `/messages/${message.id}`, { body }) };
      }
      if (roll < 0.52) {
        const by = isGroup && moderators.length > 0 && rand.next() < 0.5 ? rand.pick(moderators) : message.sender;
        return { kind: 'delete', run: () => h.call(by, 'DELETE', `/messages/${message.id}`) };
      }
      if (roll < 0.64) {
        const body = rand.next() < 0.6 ? {} : { message_id: rand.pick(messages).id };
        return { kind: 'read', run: () => h.call(someone, 'POST', `/conversations/${id}/read`, body) };
      }
      if (!isGroup) {
        // Direct conversations: now and then a block between the two (or its removal by a blocker), else a send.
        const [a, b] = members.length === 2 ? (members as [number, number]) : [someone, rand.pick(users)];
        const blockers = [a, b].filter((u) => state.blocks.has(`${u}:${u === a ? b : a}`));
        if (roll < 0.72 && blockers.length > 0) {
          const blocker = rand.pick(blockers);
          return { kind: 'unblock', run: () => h.call(blocker, 'DELETE', `/blocks/${blocker === a ? b : a}`) };
        }
        if (roll < 0.72) {
          const blocker = rand.pick([a, b]);
          return { kind: 'block', run: () => h.call(blocker, 'POST', '/blocks', { user_id: blocker === a ? b : a }) };
        }
        const body = `round message ${rand.int(1e6)}`;
        return { kind: 'send', run: () => h.call(someone, 'POST', `/conversations/${id}/messages`, { body }) };
      }
      const others = members.filter((u) => u !== owner);
      if (roll < 0.74 && others.length > 0) {
        const role = rand.pick(['owner', 'admin', 'admin', 'member', 'member']);
        const target = rand.pick(others);
        return { kind: `role ${role}`, run: () => h.call(owner, 'PATCH', `/groups/${id}/participants/${target}`, { role }) };
      }
      if (roll < 0.84) {
        const by = moderators.length > 0 ? rand.pick(moderators) : owner;
        const chosen = [...new Set([rand.pick(users), rand.pick(users)])];
        return { kind: 'add', run: () => h.call(by, 'POST', `/groups/${id}/participants`, { user_ids: chosen }) };
      }
      if (roll < 0.93 && others.length > 0) {
        const by = moderators.length > 0 ? rand.pick(moderators) : owner;
        const candidates = others.filter((u) => u !== by);
        const target = candidates.length > 0 ? rand.pick(candidates) : someone;
        return { kind: 'remove', run: () => h.call(by, 'DELETE', `/groups/${id}/participants/${target}`) };
      }
      // Leaving: anyone, the owner included, while the group has a few participants.
      const leaver = members.length >= 3 ? someone : rand.pick(users);
      return { kind: 'leave', run: () => h.call(leaver, 'POST', `/groups/${id}/leave`) };
    }
  });
});
