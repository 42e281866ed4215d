// The web client's types come from the server's contract (src/contract) by generation, never by hand: the file
// scripts/web-types.ts writes is the one in the tree, and the client reaches the contract only through it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { WEB_CONTRACT_FILE, webContractTypes } from '../../scripts/web-types.js';

describe('web client: the contract types', () => {
  test('web/src/contract.generated.ts is what scripts/web-types.ts writes from src/contract (npm run web-types)', () => {
    assert.equal(readFileSync(WEB_CONTRACT_FILE, 'utf8'), webContractTypes());
  });

  test('the generated file is types only: nothing of it reaches the bundle', () => {
    const code = readFileSync(WEB_CONTRACT_FILE, 'utf8').split('\n').filter((line) => /^export (?!interface |type )/.test(line));
    assert.deepEqual(code, []);
  });

  test('no module of the web client imports server code (paths outside web/src)', () => {
    const src = join(WEB_CONTRACT_FILE, '..');
    const outside = readdirSync(src)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => [...readFileSync(join(src, f), 'utf8').matchAll(/\bfrom\s+'(\.\.\/[^']*)'/g)].map((m) => `${f}: ${m[1]}`));
    assert.deepEqual(outside, []);
  });
});
