// Group commit: requests that arrive together are handled as one batch, per lane, in arrival order; each
// request gets its own result or error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupCommit } from '../../src/chat/group-commit.js';

test('requests submitted together form one batch, handled in arrival order, each answered with its own result', async () => {
  const batches: number[][] = [];
  const commit = groupCommit<number, string>({
    lanes: 1,
    maxBatch: 100,
    run: async (batch) => {
      batches.push([...batch]);
      return batch.map((n) => `done ${n}`);
    },
  });
  const answers = await Promise.all([1, 2, 3, 4].map((n) => commit.submit(7, n)));
  assert.deepEqual(answers, ['done 1', 'done 2', 'done 3', 'done 4']);
  assert.deepEqual(batches, [[1, 2, 3, 4]]);
});

test('while a batch runs, the next requests wait and go together in the next batch; maxBatch caps a batch', async () => {
  const batches: number[][] = [];
  let release!: () => void;
  const firstRunning = new Promise<void>((resolve) => (release = resolve));
  const commit = groupCommit<number, number>({
    lanes: 1,
    maxBatch: 3,
    run: async (batch) => {
      batches.push([...batch]);
      if (batches.length === 1) await firstRunning;
      return batch;
    },
  });
  const first = commit.submit(1, 0);
  await new Promise((resolve) => setImmediate(resolve));
  const later = [1, 2, 3, 4, 5].map((n) => commit.submit(1, n));
  release();
  assert.deepEqual(await Promise.all([first, ...later]), [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(batches, [[0], [1, 2, 3], [4, 5]]);
});

test('an Error in a batch’s results rejects only its own request; a throwing batch rejects all of its requests', async () => {
  let fail = false;
  const commit = groupCommit<number, number>({
    lanes: 1,
    maxBatch: 10,
    run: async (batch) => {
      if (fail) throw new Error('database down');
      return batch.map((n) => (n < 0 ? new Error(`refused ${n}`) : n));
    },
  });
  const results = await Promise.allSettled([commit.submit(1, 1), commit.submit(1, -2), commit.submit(1, 3)]);
  assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), [1, 'refused -2', 3]);
  fail = true;
  const down = await Promise.allSettled([commit.submit(1, 4), commit.submit(1, 5)]);
  assert.deepEqual(down.map((r) => r.status === 'rejected' && (r.reason as Error).message), ['database down', 'database down']);
});

test('keys spread over lanes: two lanes run batches at once; one key always uses the same lane, in order', async () => {
  const running = new Set<number>();
  let most = 0;
  const seen: number[] = [];
  const commit = groupCommit<{ key: number; n: number }, number>({
    lanes: 2,
    maxBatch: 1,
    run: async (batch) => {
      const { key } = batch[0]!;
      running.add(key % 2);
      most = Math.max(most, running.size);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running.delete(key % 2);
      seen.push(...batch.filter((r) => r.key === 4).map((r) => r.n));
      return batch.map((r) => r.n);
    },
  });
  await Promise.all([4, 5, 4, 5, 4].map((key, n) => commit.submit(key, { key, n })));
  assert.equal(most, 2, 'the two lanes overlapped');
  assert.deepEqual(seen, [0, 2, 4], 'key 4 handled in the order submitted');
});
