// The web client's structure, read from its imports (type-only imports count too): the modules form no cycle,
// views reach the shared state through the store and never through the app shell, and the store knows no view.
// And its size: the built JavaScript stays within 50 KB gzipped.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'web', 'src');
const BUDGET_GZIPPED_JS = 50 * 1024;

/** Module name (file name without .ts) → the local modules it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of readdirSync(SRC).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(join(SRC, file), 'utf8');
    const imports = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'\.\/([\w-]+)\.js'/gms)].map((m) => m[1]!);
    graph.set(file.replace(/\.ts$/, ''), [...new Set(imports)]);
  }
  return graph;
}

/** Every cycle, as a path that ends where it starts (depth-first search). */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (node: string) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'visiting') {
      found.push([...path.slice(path.indexOf(node)), node]);
      return;
    }
    state.set(node, 'visiting');
    path.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node);
  return found;
}

describe('web client: module structure', () => {
  const graph = importGraph();

  test('the imports are read (sanity: the app shell imports the store and the thread view)', () => {
    assert.ok(graph.get('app')?.includes('store') && graph.get('app')?.includes('thread'), JSON.stringify(graph.get('app')));
  });

  test('no import cycle between any two modules', () => {
    assert.deepEqual(cycles(graph).map((c) => c.join(' → ')), []);
  });

  test('only the entry point imports the app shell; views talk to the store', () => {
    const importers = [...graph].filter(([, imports]) => imports.includes('app')).map(([name]) => name);
    assert.deepEqual(importers, ['main']);
  });

  test('the store imports no view: only the API client, DOM helpers, the socket wrapper and types', () => {
    assert.deepEqual([...(graph.get('store') ?? [])].sort(), ['api', 'dom', 'realtime', 'types']);
  });

  test('the thread view is split: message list, composer and receipts in files of their own', () => {
    assert.deepEqual(['composer', 'message-list', 'receipts'].filter((part) => !graph.get('thread')?.includes(part)), []);
    const lines = readFileSync(join(SRC, 'thread.ts'), 'utf8').split('\n').length;
    assert.ok(lines < 400, `thread.ts has ${lines} lines`);
  });

  test('the built JavaScript is at most 50 KB gzipped', () => {
    const out = mkdtempSync(join(tmpdir(), 'parley-web-'));
    try {
      const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
      const result = spawnSync(process.execPath, [vite, 'build', 'web', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      const scripts = readdirSync(join(out, 'assets')).filter((f) => f.endsWith('.js'));
      const gzipped = scripts.reduce((sum, f) => sum + gzipSync(readFileSync(join(out, 'assets', f)), { level: 9 }).length, 0);
      assert.ok(scripts.length > 0 && gzipped <= BUDGET_GZIPPED_JS, `${scripts.length} script(s), ${(gzipped / 1024).toFixed(1)} KB gzipped`);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
