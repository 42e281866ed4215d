// Moderation under concurrency, on real PostgreSQL: whatever the interleaving,
//   - a group ban racing the banned member's sends and an admin's removals and re-adds of them: once the ban has
//     answered, no message of theirs is written to the group and no add brings them back (the ban, the sends and
//     the adds all take the group's write lock, and the add checks the bans under it);
//   - slow mode under 20 sends at once by one member: exactly one is written per window, the others answer 429
//     slow_mode with Retry-After (the send function counts a member's earlier drafts of the same batch, and locks
//     the group, which orders the batches of several nodes);
//   - a service-wide ban racing the user's sends, over HTTP and below the token check: once the ban has answered,
//     no message of theirs is written (the ban takes the user's row, which each send share-locks).
// A message "written after the ban answered" is caught by counting the user's messages as soon as the ban answers
// and again once every request has settled.
// Checked against broken versions (in a copy of the tree, 10 to 25 trials): without the ban's group lock the first
// fails (a send written after the ban answered); without the send function's count of a batch's earlier drafts
// the second fails, and without its group lock the four-node one (4 sends of 20 written in one window); without
// the ban's lock on the user's row both ban races fail (a batch whose snapshot predates the ban commits after it),
// and without the send function's user_banned check the one below the token check fails.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { banUser } from '../../src/chat/user-bans.js';
import { createSendQueue, sendMessage } from '../../src/chat/messages.js';
import { newUsers } from '../http/helpers.js';
import { assertNoServerErrors, directConversation, groupOf, isParticipant, startHarness, statuses, together, trials, type Harness } from './invariants.js';

/** A send below the HTTP layer: 'written', or the code of the error that refused it. */
const outcomeOf = (send: Promise<unknown>): Promise<string> => send.then(() => 'written', (err: { code?: string }) => err.code ?? String(err));

describe('moderation under concurrency (postgres)', () => {
  let h: Harness;
  const server = (method: string, path: string, body?: unknown) => h.app.request(null, method, path, body, { 'x-chat-server-key': h.app.config.serverKey });
  const messagesOf = async (userId: number, conversationId?: number): Promise<number> => {
    const { rows } = await h.sql.query('select count(*)::int as n from messages where sender_id = $1 and ($2::bigint is null or conversation_id = $2)', [userId, conversationId ?? null]);
    return rows[0].n;
  };
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  test('a group ban racing the member\'s sends and their re-add: after it answers, nothing of theirs is written and no add lets them back', { timeout: 300_000 }, async () => {
    for (let trial = 1; trial <= trials(25); trial++) {
      const [owner, admin, member] = newUsers(3);
      const id = await groupOf(h, owner!, [admin!, member!], [admin!]);
      let writtenAtBan = -1;
      const sends = Array.from({ length: 12 }, (_, i) => () => h.call(member!, 'POST', `/conversations/${id}/messages`, { body: `race ${trial}.${i}` }));
      // The admin removes the member and adds them back, again and again, around the ban.
      const readds = Array.from({ length: 4 }, () => async () => {
        const answers = [];
        for (let round = 0; round < 4; round++) {
          answers.push(await h.call(admin!, 'DELETE', `/groups/${id}/participants/${member}`));
          answers.push(await h.call(admin!, 'POST', `/groups/${id}/participants`, { user_ids: [member] }));
        }
        return answers;
      });
      const ban = async () => {
        // Somewhere among the removals and adds.
        await new Promise((resolve) => setTimeout(resolve, (trial % 6) * 4));
        const answer = await h.call(owner!, 'POST', `/groups/${id}/bans`, { user_id: member });
        writtenAtBan = await messagesOf(member!, id);
        return answer;
      };
      const at = trial % sends.length;
      const [banned, ...rest] = await together<any>([ban, ...sends.slice(0, at), ...readds, ...sends.slice(at)]);
      assert.equal(banned.status, 201, JSON.stringify(banned.body));
      const answers = rest.flat();
      for (const a of answers) {
        const fine = a.method === 'POST' && a.path.endsWith('/messages') ? [201, 404].includes(a.status) : [200, 204, 403, 404, 422].includes(a.status);
        assert.ok(fine, `trial ${trial}: ${a.method} ${a.path} → ${a.status} ${JSON.stringify(a.body)}`);
        if (a.status === 403) assert.equal(a.body.code, 'banned');
      }
      // Adds after the ban: refused, and the member stays out.
      const late = await h.call(admin!, 'POST', `/groups/${id}/participants`, { user_ids: [member] });
      assert.equal(late.status, 403);
      assert.equal(late.body.code, 'banned');
      assert.equal(await isParticipant(h.sql, id, member!), false, `trial ${trial}: an add let the banned member back`);
      assert.equal(await messagesOf(member!, id), writtenAtBan, `trial ${trial}: a send was written after the ban answered`);
      assert.equal(writtenAtBan, answers.filter((a) => a.path.endsWith('/messages') && a.status === 201).length, 'every 201 wrote one message, every refusal none');
    }
    assertNoServerErrors(h.answers);
  });

  test('slow mode: of 20 sends at once by one member exactly one is written per window, the others 429 slow_mode with Retry-After', { timeout: 300_000 }, async () => {
    const windowS = 30;
    for (let trial = 1; trial <= trials(25); trial++) {
      const [owner, member] = newUsers(2);
      const id = await groupOf(h, owner!, [member!]);
      assert.equal((await h.call(owner!, 'PATCH', `/groups/${id}`, { slow_mode_s: windowS })).status, 200);
      // Two bursts: the second comes within the window the first opened, so all of it waits.
      for (const [burst, written] of [[1, 1], [2, 0]] as const) {
        const answers = await together(Array.from({ length: 20 }, (_, i) => () => h.app.request(member!, 'POST', `/conversations/${id}/messages`, { body: `burst ${burst}.${i}` })));
        const refused = answers.filter((a) => a.status === 429);
        assert.deepEqual(answers.map((a) => a.status).sort(), [...Array(written).fill(201), ...Array(20 - written).fill(429)], `trial ${trial}, burst ${burst}`);
        for (const a of refused) {
          assert.equal(a.body.code, 'slow_mode');
          const retryAfter = Number(a.headers.get('retry-after'));
          assert.ok(retryAfter >= 1 && retryAfter <= windowS, `Retry-After ${retryAfter}`);
        }
      }
      assert.equal(await messagesOf(member!, id), 1, `trial ${trial}: one message in the window`);
      // The owner is not held.
      const owners = await together(Array.from({ length: 5 }, (_, i) => () => h.call(owner!, 'POST', `/conversations/${id}/messages`, { body: `owner ${i}` })));
      assert.deepEqual(statuses(owners), [201, 201, 201, 201, 201]);
    }
    assertNoServerErrors(h.answers);
  });

  test('slow mode with the sends spread over four nodes\' send queues: still exactly one per window', { timeout: 300_000 }, async () => {
    // One node queues a conversation's sends in one lane, one batch after another; nodes do not share lanes, so
    // only the send function's lock on the group orders their batches.
    const ctx = h.app.app.chat;
    const nodes = Array.from({ length: 4 }, () => ({ ...ctx, sends: createSendQueue(ctx, { lanes: 1 }) }));
    for (let trial = 1; trial <= trials(25); trial++) {
      const [owner, member] = newUsers(2);
      const id = await groupOf(h, owner!, [member!]);
      assert.equal((await h.call(owner!, 'PATCH', `/groups/${id}`, { slow_mode_s: 30 })).status, 200);
      const outcomes = await together(Array.from({ length: 20 }, (_, i) => () =>
        outcomeOf(sendMessage(nodes[i % nodes.length]!, { userId: member! }, id, { body: `node ${i % nodes.length}` }))));
      assert.deepEqual(outcomes.filter((o) => o !== 'slow_mode'), ['written'], `trial ${trial}: ${JSON.stringify(outcomes)}`);
      assert.equal(await messagesOf(member!, id), 1);
    }
  });

  test('a service-wide ban racing the user\'s sends over HTTP: after its 200 nothing they send is written, and their token answers 403', { timeout: 300_000 }, async () => {
    for (let trial = 1; trial <= trials(20); trial++) {
      const [user, friend, owner] = newUsers(3);
      const dm = await directConversation(h, user!, friend!);
      const team = await groupOf(h, owner!, [user!, friend!]);
      let writtenAtBan = -1;
      const sends = Array.from({ length: 30 }, (_, i) => () => h.call(user!, 'POST', `/conversations/${i % 2 ? dm : team}/messages`, { body: `race ${trial}.${i}` }));
      const ban = async () => {
        const res = await server('PUT', `/users/${user}/ban`, { reason: 'race' });
        writtenAtBan = await messagesOf(user!);
        return { user: 0, method: 'PUT', path: `/users/${user}/ban`, status: res.status, body: res.body };
      };
      const at = trial % sends.length;
      const answers = await together([...sends.slice(0, at), ban, ...sends.slice(at)]);
      assert.ok(answers.every((a) => a.status === 201 || (a.status === 403 && a.body.code === 'user_banned') || (a.method === 'PUT' && a.status === 200)), JSON.stringify(statuses(answers)));
      const late = await h.call(user!, 'POST', `/conversations/${dm}/messages`, { body: 'after the ban' });
      assert.equal(late.status, 403);
      assert.equal(late.body.code, 'user_banned');
      assert.equal(await messagesOf(user!), writtenAtBan, `trial ${trial}: a send was written after the ban answered`);
      assert.equal(writtenAtBan, answers.filter((a) => a.status === 201).length, 'every 201 wrote one message, every 403 none');
    }
    assertNoServerErrors(h.answers);
  });

  test('below the token check: sends already past it racing the ban are written before it or refused', { timeout: 300_000 }, async () => {
    const ctx = h.app.app.chat;
    for (let trial = 1; trial <= trials(20); trial++) {
      const [user, friend, owner] = newUsers(3);
      const dm = await directConversation(h, user!, friend!);
      const team = await groupOf(h, owner!, [user!, friend!]);
      let writtenAtBan = -1;
      const sends = Array.from({ length: 30 }, (_, i) => () =>
        outcomeOf(sendMessage(ctx, { userId: user! }, i % 2 ? dm : team, { body: `late ${trial}.${i}` })));
      const ban = async () => {
        await banUser(ctx, user!, {});
        writtenAtBan = await messagesOf(user!);
        return 'banned';
      };
      const at = trial % sends.length;
      const outcomes = await together([...sends.slice(0, at), ban, ...sends.slice(at)]);
      assert.ok(outcomes.every((o) => o === 'written' || o === 'user_banned' || o === 'banned'), JSON.stringify(outcomes));
      assert.equal(await messagesOf(user!), writtenAtBan, `trial ${trial}: a send was written after the ban answered (${JSON.stringify(outcomes)})`);
      assert.equal(writtenAtBan, outcomes.filter((o) => o === 'written').length);
    }
  });
});
