// Erasure racing the erased user's own sends, on real PostgreSQL: whatever the interleaving, once the erasure has
// completed nothing of theirs is left (no message of theirs visible or with a body), every send answered 201
// (written before the mark, then erased) or 401 (refused after it), and no request answers 5xx. The send function
// share-locks its sender's row and the mark takes it for update: a send either commits before the mark (and the
// erasure, which reads after the mark, finds its message) or sees the mark.
//
// Two races: over HTTP (the DELETE among the sends, the job run by the worker), and below the HTTP layer's token
// check (sends already past it, the job run at once beside them), where only the send function stands between a
// late send and a message left behind. Checked: without the send function's erased check the second fails in
// every trial (messages written after the erasure passed); without its share lock alone the window (a send's
// snapshot before the mark, its commit after the job's last read) was too narrow to hit here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { requestErasure, runErasure } from '../../src/chat/erasure.js';
import { sendMessage } from '../../src/chat/messages.js';
import { localDiskStorage } from '../../src/store/attachment-storage.js';
import { newUsers } from '../http/helpers.js';
import { until } from '../../testkit/wait.js';
import { assertNoServerErrors, directConversation, groupOf, startHarness, together, trials, type Harness } from './invariants.js';

describe('erasure under concurrency (postgres)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  test('erasure racing the user\'s own sends: nothing of theirs is left', { timeout: 300_000 }, async () => {
    for (let trial = 1; trial <= trials(20); trial++) {
      const [vera, finn, ada] = newUsers(3);
      const dm = await directConversation(h, vera!, finn!);
      const team = await groupOf(h, ada!, [vera!, finn!]);
      const sends = Array.from({ length: 30 }, (_, i) => () => h.call(vera!, 'POST', `/conversations/${i % 2 ? dm : team}/messages`, { body: `race ${trial}.${i}` }));
      const erase = async () => {
        const res = await h.app.request(null, 'DELETE', `/users/${vera}`, undefined, { 'x-chat-server-key': h.app.config.serverKey });
        return { user: 0, method: 'DELETE', path: `/users/${vera}`, status: res.status, body: res.body };
      };
      // The DELETE somewhere among the sends.
      const at = trial % sends.length;
      const answers = await together([...sends.slice(0, at), erase, ...sends.slice(at)]);
      assert.ok(answers.every((a) => a.status === 201 || a.status === 401 || (a.method === 'DELETE' && a.status === 202)), JSON.stringify(answers.map((a) => a.status)));
      await until(async () => (await h.sql.query('select completed_at from erasure_jobs where user_id = $1', [vera])).rows[0]?.completed_at != null, 30_000, () => `erasure of ${vera} not complete`);
      const { rows } = await h.sql.query('select count(*)::int as n from messages where sender_id = $1 and (deleted_at is null or body is not null)', [vera]);
      assert.equal(rows[0].n, 0, `trial ${trial}: a message of theirs outlived the erasure`);
      const sent = await h.sql.query('select count(*)::int as n from messages where sender_id = $1', [vera]);
      assert.equal(sent.rows[0].n, answers.filter((a) => a.status === 201).length, `trial ${trial}: every 201 wrote one message, every 401 none`);
    }
    assertNoServerErrors(h.answers);
  });

  test('below the token check: sends racing the erasure job itself leave nothing behind', { timeout: 300_000 }, async () => {
    const ctx = h.app.app.chat;
    const storage = localDiskStorage(join(h.app.config.dataDir, 'attachments'));
    for (let trial = 1; trial <= trials(20); trial++) {
      const [vera, finn] = newUsers(2);
      const dm = await directConversation(h, vera!, finn!);
      const sends = Array.from({ length: 30 }, (_, i) => () =>
        sendMessage(ctx, { userId: vera! }, dm, { body: `late ${trial}.${i}` }).then(() => 201, (err: { status?: number }) => err.status ?? 500));
      const erase = async () => {
        await requestErasure(ctx, vera!, 'erase');
        // Run here at once (the worker may take a step of it too: each step is the job's row's alone).
        await runErasure(ctx, storage, vera!);
        await until(async () => (await h.sql.query('select completed_at from erasure_jobs where user_id = $1', [vera])).rows[0]?.completed_at != null, 30_000, () => 'erasure not complete');
        return 202;
      };
      const at = trial % sends.length;
      const outcomes = await together([...sends.slice(0, at), erase, ...sends.slice(at)]);
      assert.ok(outcomes.every((s) => s === 201 || s === 202 || s === 401), JSON.stringify(outcomes));
      // The job as run above may have finished before the last send committed: a late message would be left.
      const { rows } = await h.sql.query('select count(*)::int as n from messages where sender_id = $1 and (deleted_at is null or body is not null)', [vera]);
      assert.equal(rows[0].n, 0, `trial ${trial}: a message of theirs outlived the erasure (${JSON.stringify(outcomes)})`);
    }
  });
});
