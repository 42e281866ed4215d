// CHAT_BLOCKED_WORDS (chat/blocked-words.ts): whole words, folded as search folds them (case and accents aside),
// phrases of several words, a file of entries; 10,000 words cost a check well under 50 µs.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { blockedWords } from '../../src/chat/blocked-words.js';
import { loadBlockedWords } from '../../src/config/blocked-words.js';
import { ChatError } from '../../src/contract/api-errors.js';

const refused = (words: ReturnType<typeof blockedWords>, text: string): boolean => {
  try {
    words.check(text);
    return false;
  } catch (err) {
    assert.ok(err instanceof ChatError && err.code === 'blocked_word' && err.status === 422);
    return true;
  }
};

test('whole words only, whatever their case and accents; phrases word by word', () => {
  const words = blockedWords(loadBlockedWords('Crème, spam ,bad thing'));
  assert.equal(words.size, 3);
  assert.ok(refused(words, 'SPAM!'));
  assert.ok(refused(words, 'la creme de la creme'));
  assert.ok(refused(words, 'a CRÈME brûlée'));
  assert.ok(refused(words, 'such a Bad  THING'));
  assert.ok(!refused(words, 'spammers and cremes, antispam'));
  assert.ok(!refused(words, 'a bad day, a thing'));
  assert.ok(!refused(blockedWords([]), 'spam'));
});

test('@/path reads a file of entries, one a line or comma-separated', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'parley-words-')), 'words.txt');
  writeFileSync(file, 'alpha\nbeta, gamma\r\n\n');
  assert.deepEqual(loadBlockedWords(`@${file}`), ['alpha', 'beta', 'gamma']);
  assert.deepEqual(loadBlockedWords(null), []);
});

test('10,000 words: a check of a 300-character message costs under 50 µs', () => {
  const words = blockedWords(Array.from({ length: 10_000 }, (_, i) => `wørd${i}`));
  assert.equal(words.size, 10_000);
  const body = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse.';
  assert.ok(refused(words, `${body} WORD9999`));
  for (let i = 0; i < 2000; i++) words.check(body); // warm up
  const runs = 20_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) words.check(body);
  const perCheckUs = Number(process.hrtime.bigint() - start) / 1000 / runs;
  assert.ok(perCheckUs < 50, `${perCheckUs.toFixed(1)} µs per check`);
});
