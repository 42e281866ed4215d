// The SDK's own code stays small: at most 15 KB gzipped (pusher-js, its one dependency, not counted). Built
// here from packages/client/src as `npm run build` builds it (tsc), so a stale dist/ cannot hide growth.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 15 * 1024;
const PACKAGE = new URL('../../packages/client/', import.meta.url).pathname;

function jsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? jsFiles(path) : name.endsWith('.js') ? [path] : [];
  });
}

describe('@parley/client: size', () => {
  test(`the compiled package's JavaScript is at most ${BUDGET_BYTES / 1024} KB gzipped, each file on its own`, () => {
    const out = mkdtempSync(join(tmpdir(), 'parley-client-size-'));
    try {
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      execFileSync(process.execPath, [tsc, '-p', join(PACKAGE, 'tsconfig.json'), '--outDir', out, '--declaration', 'false'], { stdio: 'inherit' });
      const files = jsFiles(out);
      assert.ok(files.some((f) => f.endsWith('client.js')), 'the build wrote the client');
      const gzipped = files.reduce((sum, file) => sum + gzipSync(readFileSync(file), { level: 9 }).length, 0);
      console.log(`@parley/client: ${files.length} files, ${gzipped} bytes gzipped (budget ${BUDGET_BYTES})`);
      assert.ok(gzipped <= BUDGET_BYTES, `${gzipped} bytes gzipped, over the budget of ${BUDGET_BYTES}`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
