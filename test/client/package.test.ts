// @parley/client as an app gets it: package.json says ESM with declarations and pusher-js as the one dependency;
// `npm pack` (its prepack builds dist/ from src/) packs the compiled JavaScript and declarations, no TypeScript
// source; and the built package loads in plain Node (no tsx), with the exports of src/index.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import * as source from '../../packages/client/src/index.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const PACKAGE = new URL('../../packages/client/', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(`${PACKAGE}package.json`, 'utf8'));
const rootManifest = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

describe('@parley/client: the package', () => {
  test('package.json: ESM with declarations, pusher-js (the version the repository pins) its only dependency, a workspace of the root', () => {
    assert.equal(manifest.name, '@parley/client');
    assert.equal(manifest.type, 'module');
    assert.deepEqual(manifest.exports['.'], { types: './dist/index.d.ts', import: './dist/index.js' });
    assert.deepEqual(manifest.dependencies, { 'pusher-js': rootManifest.devDependencies['pusher-js'] });
    assert.ok(rootManifest.workspaces.includes('packages/client'));
    assert.ok(manifest.scripts.prepare && manifest.scripts.prepack, 'npm install and npm pack build dist/');
  });

  test('npm pack packs the compiled JavaScript and its declarations, and no TypeScript source', () => {
    const [packed] = JSON.parse(execFileSync(npm, ['pack', '--dry-run', '--json'], { cwd: PACKAGE, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const files: string[] = packed.files.map((f: { path: string }) => f.path);
    for (const file of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/client.js', 'dist/generated/contract.d.ts']) assert.ok(files.includes(file), file);
    assert.deepEqual(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')), []);
  });

  test('the built package loads in plain Node, with the exports of its source', () => {
    const script = "import('@parley/client').then((m) => console.log(JSON.stringify(Object.keys(m).sort())))";
    const env = { ...process.env, NODE_OPTIONS: '' }; // no tsx: what an app's Node runs
    const names = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env, encoding: 'utf8' }));
    assert.deepEqual(names, Object.keys(source).sort());
  });
});
