// The outbox worker on its own (src/notifications/outbox-worker.ts): a row written in a transaction that rolls
// back is never delivered; a row that keeps failing is retried with backoff and given up past its age limit,
// with an error log and the failed metric; rows of a kind with no deliverer stay untouched.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { createOutboxWorker, retryDelayMs, type OutboxEvents } from '../../src/notifications/outbox-worker.js';
import { insertOutbox, type OutboxRow } from '../../src/store/outbox.js';
import { inTransaction } from '../../src/store/transaction.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';

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
  });
}
