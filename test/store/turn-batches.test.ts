// Reads of a turn made together (store/turn-batches.ts): a lone load is read at once, without waiting for the rest
// of the turn; loads asked while a read runs wait for the end of the turn and are read in one batch, each answered
// in its order; a failed batch fails each of its loads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DB } from '../../src/store/database.js';
import { turnBatched } from '../../src/store/turn-batches.js';

/** A loader over a read that records its batches and answers each when told to. */
function recordingLoader() {
  const batches: number[][] = [];
  const answers: ((fail?: Error) => void)[] = [];
  const loaderOf = turnBatched(async (_db, keys: readonly number[]) => {
    batches.push([...keys]);
    await new Promise<void>((resolve, reject) => answers.push((fail) => (fail ? reject(fail) : resolve())));
    return keys.map((k) => k * 10);
  });
  return { loader: loaderOf({} as DB), batches, answers };
}

test('a lone load is read before the turn ends, the keys its caller asked together in one read', async () => {
  const { loader, batches, answers } = recordingLoader();
  const order: string[] = [];
  setImmediate(() => order.push('end of turn'));
  const loaded = loader.loadMany([1, 2]);
  await new Promise((resolve) => process.nextTick(resolve));
  order.push(`read ${JSON.stringify(batches)}`);
  await nextTurn();
  assert.deepEqual(order, ['read [[1,2]]', 'end of turn']);
  answers[0]!();
  assert.deepEqual(await loaded, [10, 20]);
});

test('while a read runs, the loads of a turn wait for its end and are read together, each answered in order', async () => {
  const { loader, batches, answers } = recordingLoader();
  const first = loader.load(1);
  await new Promise((resolve) => process.nextTick(resolve));
  assert.deepEqual(batches, [[1]]);
  // Asked from different callbacks of one turn, as requests parsed one after the other are.
  const asked: Promise<number>[] = [];
  await new Promise<void>((resolve) => {
    setImmediate(() => asked.push(loader.load(2)));
    setImmediate(() => asked.push(loader.load(3)));
    setImmediate(() => asked.push(loader.load(4)));
    setImmediate(resolve);
  });
  assert.deepEqual(batches, [[1]], 'nothing more is read within the turn');
  await nextTurn();
  assert.deepEqual(batches, [[1], [2, 3, 4]]);
  answers[1]!();
  assert.deepEqual(await Promise.all(asked), [20, 30, 40]);
  answers[0]!();
  assert.equal(await first, 10);
  // With no read running any more, a lone load is read at once again.
  const later = loader.load(5);
  await new Promise((resolve) => process.nextTick(resolve));
  assert.deepEqual(batches.at(-1), [5]);
  answers[2]!();
  assert.equal(await later, 50);
});

test('a batch that fails fails each of its loads with the same error', async () => {
  const { loader, answers } = recordingLoader();
  const first = loader.load(1);
  await new Promise((resolve) => process.nextTick(resolve));
  const together = [loader.load(2), loader.load(3)];
  await nextTurn();
  const failure = new Error('database away');
  answers[1]!(failure);
  for (const p of together) await assert.rejects(p, (err) => err === failure);
  answers[0]!();
  assert.equal(await first, 10);
});
