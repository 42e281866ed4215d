// npm start builds only what is stale (scripts/build-if-stale.mjs): the server when src/ (or the TypeScript or
// package files) changed, the web client when web/ did, nothing otherwise, so a restart costs only the
// server's own start. Run here on a copy of the script in a project of its own, whose tsc and vite record
// that they ran.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT } from '../../testkit/root.js';

describe('npm start: build only when sources changed', () => {
  let project: string;
  let clock = Date.now() / 1000;
  /** Rewrites a file with a later modification time than any before. */
  const touch = (path: string, text = 'changed') => {
    writeFileSync(join(project, path), text);
    clock += 10;
    utimesSync(join(project, path), clock, clock);
  };
  const calls = () => (existsSync(join(project, 'calls.log')) ? readFileSync(join(project, 'calls.log'), 'utf8').trim().split('\n') : []);

  function build(...args: string[]): { status: number | null; builds: string[]; output: string } {
    rmSync(join(project, 'calls.log'), { force: true });
    const result = spawnSync(process.execPath, ['scripts/build-if-stale.mjs', ...args], { cwd: project, encoding: 'utf8' });
    return { status: result.status, builds: calls(), output: result.stdout + result.stderr };
  }

  before(() => {
    project = mkdtempSync(join(tmpdir(), 'parley-build-'));
    mkdirSync(join(project, 'scripts'));
    copyFileSync(join(ROOT, 'scripts/build-if-stale.mjs'), join(project, 'scripts/build-if-stale.mjs'));
    for (const dir of ['src/http', 'web/src', 'node_modules/.bin']) mkdirSync(join(project, dir), { recursive: true });
    for (const file of ['src/main.ts', 'src/http/server.ts', 'web/index.html', 'web/src/main.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']) {
      writeFileSync(join(project, file), file);
    }
    // Stand-ins for the compilers: each records its run and writes its output (or fails when FAIL names it).
    const fake = (name: string, output: string) => {
      const path = join(project, 'node_modules/.bin', name);
      writeFileSync(path, `#!/bin/sh\n[ "$FAIL" = "${name}" ] && exit 3\necho ${name} >> calls.log\nmkdir -p $(dirname ${output}) && echo built > ${output}\n`);
      chmodSync(path, 0o755);
    };
    fake('tsc', 'dist/src/main.js');
    fake('vite', 'web/dist/index.html');
    // tsc -p packages/client/tsconfig.json: @parley/client, recorded apart from the server's build.
    const tsc = join(project, 'node_modules/.bin/tsc');
    writeFileSync(
      tsc,
      readFileSync(tsc, 'utf8').replace(
        '#!/bin/sh\n',
        '#!/bin/sh\n[ "$2" = "packages/client/tsconfig.json" ] && { echo tsc-client >> calls.log; mkdir -p packages/client/dist && echo built > packages/client/dist/index.js; exit 0; }\n',
      ),
    );
  });
  after(() => rmSync(project, { recursive: true, force: true }));

  test('the first start builds the server and the web client, and says it is the first build (not "sources changed")', () => {
    const run = build();
    assert.equal(run.status, 0, run.output);
    assert.deepEqual(run.builds, ['tsc', 'vite']);
    assert.match(run.output, /Building the server \(first build\)/);
    assert.match(run.output, /Building the web client \(first build\)/);
    assert.doesNotMatch(run.output, /changed/);
  });

  test('a restart with nothing changed builds nothing', () => {
    const run = build();
    assert.equal(run.status, 0, run.output);
    assert.deepEqual(run.builds, []);
    assert.equal(run.output, '');
  });

  test('a changed server source rebuilds the server only; a changed web source the web client only', () => {
    touch('src/http/server.ts');
    const changed = build();
    assert.deepEqual(changed.builds, ['tsc']);
    assert.match(changed.output, /Building the server \(its sources changed since the last build\)/);
    assert.deepEqual(build().builds, []);
    touch('web/src/main.ts');
    assert.deepEqual(build().builds, ['vite']);
  });

  test('package-lock.json (dependencies) concerns both', () => {
    touch('package-lock.json');
    assert.deepEqual(build().builds, ['tsc', 'vite']);
  });

  test('a file added or removed counts, and so does a file replaced by an older copy', () => {
    touch('src/new.ts');
    assert.deepEqual(build().builds, ['tsc']);
    rmSync(join(project, 'src/new.ts'));
    assert.deepEqual(build().builds, ['tsc']);
    writeFileSync(join(project, 'src/main.ts'), 'an older version');
    utimesSync(join(project, 'src/main.ts'), 1_000_000, 1_000_000);
    assert.deepEqual(build().builds, ['tsc']);
  });

  test('missing output is rebuilt even when the sources did not change', () => {
    rmSync(join(project, 'web/dist'), { recursive: true });
    assert.deepEqual(build().builds, ['vite']);
  });

  test('a failed build stops the start (its exit code) and is tried again next time', () => {
    touch('src/main.ts');
    rmSync(join(project, 'calls.log'), { force: true });
    const failed = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: project, encoding: 'utf8', env: { ...process.env, FAIL: 'tsc' } });
    assert.equal(failed.status, 3);
    assert.match(failed.stderr, /Build failed/);
    assert.deepEqual(build().builds, ['tsc']);
  });

  test('with @parley/client in packages/client: a changed client source rebuilds it, then the web client that bundles it', () => {
    mkdirSync(join(project, 'packages/client/src'), { recursive: true });
    touch('packages/client/package.json', '{}');
    touch('packages/client/src/index.ts');
    assert.deepEqual(build().builds, ['tsc-client', 'vite']);
    assert.deepEqual(build().builds, []);
    touch('packages/client/src/index.ts', 'changed again');
    const changed = build();
    assert.deepEqual(changed.builds, ['tsc-client', 'vite']);
    assert.match(changed.output, /Building the client SDK \(its sources changed since the last build\)/);
    touch('web/src/main.ts', 'the web only');
    assert.deepEqual(build().builds, ['vite']);
    rmSync(join(project, 'packages'), { recursive: true });
    assert.deepEqual(build().builds, ['vite']); // gone: nothing to build of it, and the web's inputs changed
  });

  test('--force (npm run build) builds both', () => {
    assert.deepEqual(build('--force').builds, ['tsc', 'vite']);
  });

  test('npm start runs the script, then the built server (with exec, so npm\'s signals reach it)', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(scripts.start, 'node scripts/build-if-stale.mjs && exec node dist/src/main.js');
    assert.equal(scripts.build, 'node scripts/build-if-stale.mjs --force');
  });
});
