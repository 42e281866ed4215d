// The server's layering, read from its imports (type-only and dynamic imports count too, with the TypeScript
// compiler's own import scanner): the layers of issue 28 and which way each may point.
//   contract < store < chat < http   a lower layer never imports a higher one (src/contract is the bottom);
//   realtime                          never imports chat or store (it speaks the Pusher protocol, not chat);
//   delivery                          never imports chat or http (chat hands it outbox rows; one direction);
//   migrations                        src/store/migrations/NNN_*.ts never import each other (each is frozen
//                                     as it ran; shared SQL lives in repeatable definitions, store/functions);
//   bench                             reaches src only through its public entry points (PUBLIC_ENTRY_POINTS),
//                                     and no benchmark or bench/lib module imports the runner bench/run.ts.
//   packages/client                   the SDK imports nothing outside its own folder (it ships alone; its types
//                                     are generated into it by scripts/client-types.ts).
// The web client's own structure is kept by test/web/structure.test.ts.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** What bench/ may import from src/: the app's composition, its configuration and the contract, nothing inside a layer. */
const PUBLIC_ENTRY_POINTS = ['src/main.ts', 'src/app/index.ts', 'src/config/index.ts', 'src/contract/index.ts'];

/** The ordered layers: a module of one may import its own and lower ones only. */
const LAYERS = ['contract', 'store', 'chat', 'http'] as const;

/**
 * Imports that break a rule today and are known to: each goes when the item of issue 28 named beside it lands.
 * Keep this list short and shrinking; a new violation fails the test, and an entry no longer found is reported
 * (as a diagnostic) so it can be removed.
 */
const KNOWN_VIOLATIONS: readonly { readonly from: string; readonly to: string; readonly item: string }[] = [];

interface Import {
  readonly from: string;
  readonly to: string;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(join(ROOT, dir))) return out;
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...filesUnder(path));
    else if (/\.m?ts$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** A relative specifier ('./x.js', '../store/index.js') as the project file it names, or null (a package). */
function resolveSpecifier(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = join(dirname(from), specifier);
  for (const candidate of [base.replace(/\.m?js$/, (ext) => (ext === '.mjs' ? '.mts' : '.ts')), base, `${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(join(ROOT, candidate)) && statSync(join(ROOT, candidate)).isFile()) return candidate;
  }
  return base; // not found on disk (a module being moved): still judged by its path
}

/** Every project import of the files under these folders (paths relative to the root, with / separators). */
function imports(...dirs: string[]): Import[] {
  const found: Import[] = [];
  for (const file of dirs.flatMap(filesUnder)) {
    const scanned = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
    for (const ref of scanned.importedFiles) {
      const to = resolveSpecifier(file, ref.fileName);
      if (to !== null) found.push({ from: slash(file), to: slash(to) });
    }
  }
  return found;
}

const slash = (path: string) => path.split('\\').join('/');
/** The top folder of a src path ('src/chat/x.ts' → 'chat'), or null outside src or for a file directly in it. */
const folderOf = (path: string) => /^src\/([^/]+)\//.exec(path)?.[1] ?? null;
const MIGRATION = /^src\/store\/migrations\/\d{3}_[^/]+\.ts$/;

/** The rule an import breaks, or null. */
function brokenRule(i: Import): string | null {
  const from = folderOf(i.from);
  const to = folderOf(i.to);
  const fromLayer = LAYERS.indexOf(from as (typeof LAYERS)[number]);
  const toLayer = LAYERS.indexOf(to as (typeof LAYERS)[number]);
  if (fromLayer >= 0 && toLayer > fromLayer) return `${from} is below ${to} (contract < store < chat < http)`;
  if (from === 'realtime' && (to === 'chat' || to === 'store')) return `realtime never imports ${to}`;
  if (from === 'delivery' && (to === 'chat' || to === 'http')) return `delivery never imports ${to}`;
  if (MIGRATION.test(i.from) && MIGRATION.test(i.to)) return 'migrations never import each other';
  if ((i.from.startsWith('bench/') || i.from.startsWith('testkit/')) && i.to.startsWith('src/') && !PUBLIC_ENTRY_POINTS.includes(i.to)) {
    return `bench reaches src only through ${PUBLIC_ENTRY_POINTS.join(', ')}${i.from.startsWith('testkit/') ? ' (this testkit module is one bench uses)' : ''}`;
  }
  if (i.from.startsWith('packages/client/') && !i.to.startsWith('packages/client/')) return 'the client package imports nothing outside packages/client';
  if (i.from.startsWith('bench/') && i.from !== 'bench/run.ts' && i.to === 'bench/run.ts') return 'only the runner imports the benchmarks, never the other way (bench/lib/benchmark.ts holds what they share)';
  return null;
}

const known = (i: Import) => KNOWN_VIOLATIONS.some((k) => k.from === i.from && k.to === i.to);

/** The testkit modules bench uses, directly or through other testkit modules: what they import, bench reaches too. */
function testkitOfBench(): Set<string> {
  const testkit = imports('testkit');
  const reached = new Set(imports('bench').filter((i) => i.to.startsWith('testkit/')).map((i) => i.to));
  for (let grown = true; grown; ) {
    grown = false;
    for (const i of testkit) {
      if (reached.has(i.from) && i.to.startsWith('testkit/') && !reached.has(i.to)) {
        reached.add(i.to);
        grown = true;
      }
    }
  }
  return reached;
}

describe('server layering (issue 28)', () => {
  const usedByBench = testkitOfBench();
  const all = [...imports('src', 'bench', 'packages/client/src'), ...imports('testkit').filter((i) => usedByBench.has(i.from))];

  test('the imports are read (sanity: src/main.ts imports something of src, bench/run.ts a benchmark)', () => {
    assert.ok(all.some((i) => i.from === 'src/main.ts' && i.to.startsWith('src/')), 'no import read from src/main.ts');
    assert.ok(all.some((i) => i.from === 'bench/run.ts' && i.to.startsWith('bench/benchmarks/')), 'no import read from bench/run.ts');
    assert.ok(all.some((i) => i.from === 'packages/client/src/index.ts'), 'no import read from packages/client/src/index.ts');
  });

  test('no import breaks a layering rule, beyond the known ones listed', (t) => {
    const broken = all.map((i) => ({ ...i, rule: brokenRule(i) })).filter((i) => i.rule !== null);
    const stale = KNOWN_VIOLATIONS.filter((k) => !broken.some((b) => b.from === k.from && b.to === k.to));
    for (const k of stale) t.diagnostic(`known violation no longer found, remove it from KNOWN_VIOLATIONS: ${k.from} → ${k.to}`);
    const unknown = broken.filter((b) => !known(b)).map((b) => `${b.from} → ${b.to}: ${b.rule}`);
    assert.deepEqual(unknown, []);
  });
});
