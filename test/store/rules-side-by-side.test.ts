// Rules that live twice, for speed: the send function (src/store/functions/send.ts) checks in SQL who may
// send where, and the use cases check the same in TypeScript (src/chat/access.ts) for edits, reactions, typing and
// the rest. Both run here on the same fixtures, and must agree on every case: the participant rule (only a
// participant acts in a conversation) and the block rule (in a direct conversation, a block either way stops
// both; groups do not care). Unread counts too: the counters that sends (in SQL), deletes and read marks move are a
// cache of one definition, the recount (store/messages.ts, countUnread: visible messages after the read position
// that others sent, and those that mention the reader); after a seeded mix of them, every counter equals it. And
// threads: the send function grows each thread's counts and repliers as it writes replies; a reply's delete
// recounts them (store/threads.ts, recountThread); after bursts of replies, both give the same thread. And pages:
// history and thread pages are read by a database function (store/functions/message-page.ts) that applies the
// viewer's clear and hides as ownMessageFilter (store/own-state.ts) does for every other read.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChatError } from '../../src/contract/api-errors.js';
import { refuseIfDirectBlocked, requireParticipant } from '../../src/chat/access.js';
import { countUnread, writeMessages, type MessageDraft } from '../../src/store/messages.js';
import { pageMessageIds } from '../../src/store/read-model.js';
import { ownMessageFilter } from '../../src/store/own-state.js';
import { recountThread } from '../../src/store/threads.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { direct, group, newUsers, register, send } from '../http/helpers.js';
import { prng } from '../concurrency/invariants.js';

type Verdict = 'ok' | 'not_participant' | 'blocked';

const draft = (conversationId: number, senderId: number): MessageDraft => ({
  conversation_id: conversationId,
  sender_id: senderId,
  body: 'probe',
  attachment_id: null,
  reply_to_id: null,
  forwarded_from_message_id: null,
  forwarded_from_conversation_id: null,
  forwarded_from_sender_id: null,
  client_message_id: null,
  mentioned_user_ids: [],
  thread_id: null,
});

/** Rolls the probe back: a check must not leave a message behind. */
class Probe extends Error {
  constructor(readonly verdict: Verdict) {
    super('probe');
  }
}

for (const database of DATABASES) {
  describe(`rules in SQL and in TypeScript agree (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    async function inSql(conversationId: number, senderId: number): Promise<Verdict> {
      try {
        await app.app.database.db.transaction().execute(async (trx) => {
          const written = await writeMessages(trx, [draft(conversationId, senderId)], new Date());
          const outcome = written.results[0]!.outcome;
          throw new Probe(outcome === 'written' ? 'ok' : (outcome as Verdict));
        });
      } catch (err) {
        if (err instanceof Probe) return err.verdict;
        throw err;
      }
      assert.fail('unreachable');
    }

    async function inTypeScript(conversationId: number, senderId: number): Promise<Verdict> {
      const db = app.app.database.db;
      try {
        const membership = await requireParticipant(db, conversationId, senderId);
        await refuseIfDirectBlocked(db, membership, senderId);
        return 'ok';
      } catch (err) {
        if (err instanceof ChatError && err.code === 'not_found') return 'not_participant';
        if (err instanceof ChatError && err.code === 'blocked') return 'blocked';
        throw err;
      }
    }

    test('every sender in every conversation: the send function and access.ts give the same verdict', async () => {
      const [alice, bob, carol, dave, eve] = newUsers(5);
      await register(app, alice, bob, carol, dave, eve);
      const ab = await direct(app, alice, bob);
      const ac = await direct(app, alice, carol);
      const ad = await direct(app, alice, dave);
      const team = await group(app, alice, [bob, carol]);
      // Bob blocks Alice; Alice blocks Carol; Dave and Alice block each other; nobody blocks in the group.
      for (const [blocker, blocked] of [[bob, alice], [alice, carol], [dave, alice], [alice, dave]] as const) {
        assert.equal((await app.request(blocker, 'POST', '/blocks', { user_id: blocked })).status, 200);
      }
      const cases: { conversation: number; sender: number; expected: Verdict }[] = [
        { conversation: ab, sender: alice, expected: 'blocked' },
        { conversation: ab, sender: bob, expected: 'blocked' },
        { conversation: ac, sender: alice, expected: 'blocked' },
        { conversation: ac, sender: carol, expected: 'blocked' },
        { conversation: ad, sender: dave, expected: 'blocked' },
        { conversation: team, sender: alice, expected: 'ok' },
        { conversation: team, sender: bob, expected: 'ok' },
        { conversation: team, sender: carol, expected: 'ok' },
        { conversation: team, sender: eve, expected: 'not_participant' },
        { conversation: ab, sender: eve, expected: 'not_participant' },
        { conversation: ad, sender: bob, expected: 'not_participant' },
      ];
      for (const c of cases) {
        const [sqlVerdict, tsVerdict] = [await inSql(c.conversation, c.sender), await inTypeScript(c.conversation, c.sender)];
        assert.deepEqual({ sql: sqlVerdict, ts: tsVerdict }, { sql: c.expected, ts: c.expected }, `user ${c.sender} in conversation ${c.conversation}`);
      }
      // Unblocked, both rules let them talk again.
      assert.equal((await app.request(bob, 'DELETE', `/blocks/${alice}`)).status, 200);
      assert.deepEqual([await inSql(ab, alice), await inTypeScript(ab, alice)], ['ok', 'ok']);
    });

    test('unread counts: after sends (with mentions), deletes and read marks, each counter is the recount', async () => {
      const users = newUsers(4);
      await register(app, ...users);
      const team = await group(app, users[0]!, users.slice(1));
      const pair = await direct(app, users[0]!, users[1]!);
      const random = prng(20261126);
      const sent: { id: number; conversation: number; sender: number }[] = [];
      for (let step = 0; step < 60; step++) {
        const conversation = random.pick([team, team, pair]);
        const members = conversation === team ? users : users.slice(0, 2);
        const user = random.pick(members);
        const roll = random.next();
        if (roll < 0.55) {
          const mentioned = members.filter((u) => u !== user && random.next() < 0.3);
          const message = await send(app, user!, conversation, { body: `step ${step}`, mentioned_user_ids: mentioned });
          sent.push({ id: message.id, conversation, sender: user! });
        } else if (roll < 0.7 && sent.length > 0) {
          const mine = sent.filter((m) => m.sender === user && m.conversation === conversation);
          if (mine.length > 0) {
            const victim = random.pick(mine);
            sent.splice(sent.indexOf(victim), 1);
            assert.equal((await app.request(user!, 'DELETE', `/messages/${victim.id}`)).status, 204);
          }
        } else {
          const here = sent.filter((m) => m.conversation === conversation);
          const body = here.length > 0 && random.next() < 0.5 ? { message_id: random.pick(here).id } : {};
          assert.equal((await app.request(user!, 'POST', `/conversations/${conversation}/read`, body)).status, 200);
        }
      }
      const db = app.app.database.db;
      for (const conversation of [team, pair]) {
        const rows = await db.selectFrom('participants').select(['user_id', 'unread_count', 'unread_mention_count', 'last_read_message_id']).where('conversation_id', '=', conversation).execute();
        for (const row of rows) {
          const recount = await countUnread(db, conversation, row.user_id, row.last_read_message_id);
          assert.deepEqual(
            { unread: row.unread_count, mentions: row.unread_mention_count },
            { unread: recount.unread, mentions: recount.mentions },
            `user ${row.user_id} in conversation ${conversation}`,
          );
        }
      }
    });

    test('threads: after bursts of replies (plain and quoting, written in batches), each thread is its recount', async () => {
      const users = newUsers(12);
      await register(app, ...users);
      const team = await group(app, users[0]!, users.slice(1));
      const roots = [await send(app, users[0]!, team, 'first root'), await send(app, users[1]!, team, 'second root')];
      const random = prng(20261127);
      for (let burst = 0; burst < 8; burst++) {
        // Sent at once, so that the send queue writes several replies of one thread in one statement.
        await Promise.all(
          Array.from({ length: 6 }, async (_, i) => {
            const root = random.pick(roots);
            const body = { body: `burst ${burst} reply ${i}`, thread_id: root.id, ...(random.next() < 0.3 ? { reply_to_id: root.id } : {}) };
            const res = await app.request(random.pick(users)!, 'POST', `/conversations/${team}/messages`, body);
            assert.equal(res.status, 201, JSON.stringify(res.body));
          }),
        );
      }
      const db = app.app.database.db;
      for (const root of roots) {
        const kept = await db.selectFrom('threads').select(['reply_count', 'last_reply_at', 'repliers']).where('root_id', '=', root.id).executeTakeFirstOrThrow();
        const recount = (await recountThread(db, root.id))!;
        assert.deepEqual(
          { reply_count: kept.reply_count, last_reply_at: kept.last_reply_at, repliers: kept.repliers.map(Number) },
          { reply_count: recount.reply_count, last_reply_at: recount.last_reply_at, repliers: [...recount.repliers] },
          `thread ${root.id}`,
        );
      }
    });

    test('pages: the page function (history and threads, both ways) lists exactly what ownMessageFilter lets the viewer see', async () => {
      const [alice, bob] = newUsers(2);
      await register(app, alice!, bob!);
      const team = await group(app, alice!, [bob!]);
      const root = await send(app, alice!, team, 'root');
      const random = prng(20261128);
      const ids: number[] = [];
      for (let i = 0; i < 40; i++) {
        const inThread = random.next() < 0.5;
        ids.push((await send(app, random.pick([alice!, bob!]), team, { body: `message ${i}`, ...(inThread ? { thread_id: root.id } : {}) })).id);
        if (i === 12) assert.equal((await app.request(bob!, 'POST', `/conversations/${team}/clear`)).status, 200);
      }
      for (const id of ids.filter(() => random.next() < 0.2)) await app.request(bob!, 'DELETE', `/messages/${id}?for=me`);
      for (const id of ids.filter(() => random.next() < 0.1)) await app.request(alice!, 'DELETE', `/messages/${id}`);
      const db = app.app.database.db;
      for (const viewer of [alice!, bob!]) {
        for (const threadId of [undefined, root.id]) {
          const bounds: { before?: number; after?: number }[] = [{}, { before: ids[25]! }, { after: ids[5]! }, { after: 0 }];
          for (const bound of bounds) {
            const forward = bound.after !== undefined;
            let reference = db.selectFrom('messages').select('id').where('deleted_at', 'is', null).where(ownMessageFilter(viewer)).orderBy('id', forward ? 'asc' : 'desc').limit(7);
            reference = threadId === undefined ? reference.where('conversation_id', '=', team).where('thread_id', 'is', null) : reference.where('thread_id', '=', threadId);
            if (bound.before !== undefined) reference = reference.where('id', '<', bound.before);
            if (bound.after !== undefined) reference = reference.where('id', '>', bound.after);
            const expected = (await reference.execute()).map((r) => Number(r.id));
            const got = await pageMessageIds(db, { conversationId: team, threadId }, { ...bound, limit: 7, viewerId: viewer });
            assert.deepEqual(got, expected, `viewer ${viewer}, thread ${threadId}, ${JSON.stringify(bound)}`);
          }
        }
      }
    });
  });
}
