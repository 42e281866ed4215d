// The outbox worker on its own (src/delivery/outbox-worker.ts): a row written in a transaction that rolls
// back is never delivered; a row that keeps failing is retried with backoff and given up past its age limit,
// with an error log and the failed metric; rows of a kind with no deliverer stay untouched. A send's rows that
// are first in their conversation's queue are written leased to the writer and delivered from memory, without
// a claim; the others wait their turn, so a conversation's rows still arrive in order.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createOutboxWorker, retryDelayMs, type OutboxEvents } from '../../src/delivery/outbox-worker.js';
import { claimDue, insertOutbox, insertOutboxLeasingHeads, type OutboxRow } from '../../src/store/outbox.js';
import { messageSentPayload } from '../../src/events/catalog.js';
import { writeMessages, type MessageDraft } from '../../src/store/messages.js';
import { plainMessage } from '../../src/store/read-model.js';
import { inTransaction } from '../../src/store/transaction.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { direct, newUsers } from '../http/helpers.js';

test('backoff: the first retry within 10 s, then doubling with jitter, at most 30 minutes', () => {
  for (let i = 0; i < 100; i++) {
    const first = retryDelayMs(1);
    assert.ok(first >= 2_500 && first <= 5_000, String(first));
    const fifth = retryDelayMs(5);
    assert.ok(fifth >= 40_000 && fifth <= 80_000, String(fifth));
    assert.ok(retryDelayMs(40) <= 30 * 60_000);
  }
});

for (const database of DATABASES) {
  describe(`outbox worker (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const rowsOf = (kind: string) => app.app.chat.db.selectFrom('outbox').selectAll().where('kind', '=', kind).execute();

    test('a row written in a transaction that rolls back does not exist', async () => {
      await assert.rejects(
        inTransaction(app.app.chat.db, async (trx) => {
          await insertOutbox(trx, [{ kind: 'rollback-test', conversation_id: null, type: 'MessageSent', payload: {} }]);
          throw new Error('refused');
        }),
        /refused/,
      );
      assert.equal((await rowsOf('rollback-test')).length, 0);
    });

    test('failing deliveries are retried, then given up past the age limit with an error log and the failed metric', async () => {
      const counts = { delivered: 0, retried: 0, failed: 0 };
      const events: OutboxEvents = { delivered: () => counts.delivered++, retried: () => counts.retried++, failed: () => counts.failed++ };
      const lines: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
      const attempts: OutboxRow[] = [];
      const worker = createOutboxWorker({ db: app.app.chat.db, logger, events, pollMs: 50, retryBaseMs: 40, maxAgeMs: 600 });
      worker.register({
        kind: 'always-fails',
        async deliver(row) {
          attempts.push(row);
          throw new Error('HTTP 500');
        },
      });
      await insertOutbox(app.app.chat.db, [
        { kind: 'always-fails', conversation_id: null, type: 'MessageSent', payload: { n: 1 } },
        { kind: 'no-deliverer', conversation_id: null, type: 'MessageSent', payload: { n: 2 } },
      ]);
      worker.start();
      try {
        const deadline = Date.now() + 10_000;
        while (counts.failed === 0) {
          assert.ok(Date.now() < deadline, 'given up in time');
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await worker.stop();
      }
      assert.ok(attempts.length >= 2, `retried (${attempts.length} attempts)`);
      assert.deepEqual(attempts.map((r) => r.attempts), attempts.map((_, i) => i), 'attempts counted');
      assert.equal(counts.retried, attempts.length - 1);
      assert.equal(counts.delivered, 0);
      const [row] = await rowsOf('always-fails');
      assert.ok(row!.failed_at, 'kept, marked failed');
      assert.equal(row!.last_error, 'HTTP 500');
      assert.ok(lines.some((l) => JSON.parse(l).msg === 'outbox: given up after 24 h' && JSON.parse(l).level === 50), 'an error log');
      const untouched = await rowsOf('no-deliverer');
      assert.equal(untouched.length, 1);
      assert.equal(untouched[0]!.attempts, 0);
    });

    test('a row first in its conversation is written leased to the writer; a later one waits its turn', async () => {
      const db = app.app.chat.db;
      const lease = new Date(Date.now() + 60_000);
      const draft = (conversation_id: number | null, n: number) => ({ kind: 'lease-test', target: 'u', conversation_id, type: 'MessageSent', payload: { n } });
      // Two rows of conversation 901 in one statement, one of 902, one with no conversation: all first in line.
      const { leased: first, waiting } = await inTransaction(db, (trx) => insertOutboxLeasingHeads(trx, [draft(901, 1), draft(901, 2), draft(902, 3), draft(null, 4)], lease));
      assert.equal(waiting, 0);
      assert.deepEqual(first.map((r) => (r.payload as { n: number }).n), [1, 2, 3, 4]);
      assert.ok(first.every((r, i) => i === 0 || r.id > first[i - 1]!.id), 'in id order');
      // While they wait, a later row of 901 is not leased, and no claim takes any of them.
      const { leased: later, waiting: behind } = await inTransaction(db, (trx) => insertOutboxLeasingHeads(trx, [draft(901, 5), draft(903, 6)], lease));
      assert.equal(behind, 1);
      assert.deepEqual(later.map((r) => (r.payload as { n: number }).n), [6]);
      assert.deepEqual(await claimDue(db, ['lease-test'], 50, new Date(), lease), [], 'nothing claimable: leased, or behind a leased row');
      await db.deleteFrom('outbox').where('kind', '=', 'lease-test').execute();
    });

    test("a send's leased rows are the rows it stored; each webhook's data is the MessageSent the change feed holds", async () => {
      const db = app.app.chat.db;
      // Two direct conversations (made through the API), three plain messages in one batch.
      const [a, b, c, d] = newUsers(4);
      const conversations = [await direct(app, a, b), await direct(app, c, d)];
      const draft = (conversation_id: number, sender_id: number, body: string): MessageDraft => ({
        conversation_id, sender_id, body, attachment_id: null, reply_to_id: null, forwarded_from_message_id: null,
        forwarded_from_conversation_id: null, forwarded_from_sender_id: null, client_message_id: null, mentioned_user_ids: [], thread_id: null,
      });
      const drafts = [draft(conversations[0]!, a, 'first'), draft(conversations[1]!, d, 'naïve 🙂'), draft(conversations[0]!, b, 'third')];
      const now = new Date();
      // As a send builds them: each MessageSent payload before the write, which completes it with id and sender.
      const payloads = drafts.map((d) => JSON.stringify(messageSentPayload(plainMessage(0, d.conversation_id, d.body, { id: d.sender_id, name: '', avatar_url: null }, now))));
      const { leased, waiting, results } = await writeMessages(db, drafts, now, {
        payloads,
        outbox: { webhookUrls: ['https://hooks.example/a', 'https://hooks.example/b'], push: true, leaseUntil: new Date(Date.now() + 60_000) },
      });
      assert.equal(waiting, 0);
      assert.equal(leased.length, 3 * 3, 'two webhooks and a push per message');
      const stored = await db.selectFrom('outbox').select(['id', 'kind', 'target', 'conversation_id', 'type', 'payload', 'attempts', 'created_at']).where('id', 'in', leased.map((r) => r.id)).orderBy('id').execute();
      const normal = (rows: readonly object[]) =>
        rows.map((row) => {
          const r = row as Record<string, unknown>;
          return { ...r, id: Number(r.id), conversation_id: r.conversation_id === null ? null : Number(r.conversation_id), created_at: new Date(r.created_at as string).getTime() };
        });
      assert.deepEqual(normal(leased), normal(stored));
      const webhook = leased.find((r) => r.kind === 'webhook' && r.conversation_id === conversations[1])!.payload as { data: { id: number; body: string }; recipient_ids: number[] };
      assert.equal(webhook.data.body, 'naïve 🙂');
      assert.equal(webhook.data.id, results[1]!.id);
      assert.deepEqual(webhook.recipient_ids, [c]);
      for (const row of leased.filter((r) => r.kind === 'webhook')) {
        const { data } = row.payload as { data: { id: number } };
        const feed = await db.selectFrom('sync_changes').select('data').where('type', '=', 'MessageSent').where('conversation_id', '=', row.conversation_id!).execute();
        const recorded = feed.map((f) => (typeof f.data === 'string' ? JSON.parse(f.data) : f.data)).find((f: { id: number }) => f.id === data.id);
        assert.deepEqual(data, recorded, 'the webhook carries what the feed recorded');
      }
      await db.deleteFrom('outbox').where('id', 'in', leased.map((r) => r.id)).execute();
    });

    test('leased rows are delivered without a claim, in order per conversation; a failed one holds back the rest', async () => {
      const db = app.app.chat.db;
      const delivered: number[] = [];
      let failNext = true;
      const worker = createOutboxWorker({ db, logger: pino({ level: 'silent' }), pollMs: 50, retryBaseMs: 40 });
      worker.register({
        kind: 'lease-deliver',
        async deliver(row) {
          const n = (row.payload as { n: number }).n;
          if (n === 2 && failNext) {
            failNext = false;
            throw new Error('HTTP 500');
          }
          await new Promise((r) => setTimeout(r, n === 1 ? 30 : 0)); // the first is slow: the second must wait for it
          delivered.push(n);
        },
      });
      worker.start();
      try {
        const draft = (conversation_id: number | null, n: number) => ({ kind: 'lease-deliver', conversation_id, type: 'MessageSent', payload: { n } });
        const { leased } = await inTransaction(db, (trx) => insertOutboxLeasingHeads(trx, [draft(911, 1), draft(911, 2), draft(911, 3), draft(912, 4)], new Date(Date.now() + 60_000)));
        assert.equal(leased.length, 4);
        worker.deliverLeased(leased);
        const deadline = Date.now() + 10_000;
        while (delivered.length < 4) {
          assert.ok(Date.now() < deadline, `delivered ${delivered.join(',')}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await worker.stop();
      }
      const conversation = delivered.filter((n) => n <= 3);
      assert.deepEqual(conversation, [1, 2, 3], 'row 2 failed once: retried, and row 3 came after it');
      assert.equal((await db.selectFrom('outbox').select('id').where('kind', '=', 'lease-deliver').execute()).length, 0, 'delivered rows deleted');
    });
  });
}
