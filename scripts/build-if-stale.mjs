// npm start's build step: builds the server (tsc → dist/), @parley/client (tsc → packages/client/dist/, which the
// web client bundles) and the web client (vite → web/dist/) only when their sources changed since the last build,
// so a restart costs the server's own start, not a build. "Changed": the
// list of input files with their sizes and modification times differs from the one recorded at the last
// successful build (a file added, removed, edited or replaced by an older copy all count).
//
//   node scripts/build-if-stale.mjs           build what is stale
//   node scripts/build-if-stale.mjs --force   build all
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const force = process.argv.includes('--force');

/** Every file under the given paths (files or directories), skipping build output and dependencies. */
function files(paths) {
  const out = [];
  const walk = (path) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (!stat.isDirectory()) return void out.push(path);
    for (const entry of readdirSync(path)) if (entry !== 'node_modules' && entry !== 'dist') walk(join(path, entry));
  };
  paths.forEach((p) => walk(join(ROOT, p)));
  return out.sort();
}

/** What the build's output depends on, as one hash: each file's path, size and modification time. */
function fingerprint(paths) {
  const hash = createHash('sha256');
  for (const file of files(paths)) {
    const { size, mtimeMs } = statSync(file);
    hash.update(`${relative(ROOT, file)}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`Build failed: ${command} ${args.join(' ')} (exit code ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

const bin = (name) => join(ROOT, 'node_modules', '.bin', name);

const TARGETS = [
  {
    name: 'server',
    inputs: ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'],
    output: 'dist/src/main.js',
    stamp: 'dist/.build-server',
    // src/ only (tsconfig.build.json), incremental: after a small change tsc rechecks little.
    build: () => run(bin('tsc'), ['-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', 'dist/.tsbuildinfo']),
  },
  {
    // @parley/client (npm install builds it too): the web client is bundled from its dist/.
    name: 'client SDK',
    inputs: ['packages/client', 'package-lock.json'],
    output: 'packages/client/dist/index.js',
    stamp: 'dist/.build-client',
    present: 'packages/client/package.json',
    build: () => run(bin('tsc'), ['-p', 'packages/client/tsconfig.json']),
  },
  {
    name: 'web client',
    inputs: ['web', 'packages/client', 'package.json', 'package-lock.json'],
    output: 'web/dist/index.html',
    stamp: 'dist/.build-web',
    build: () => run(bin('vite'), ['build', 'web', '--logLevel', 'warn']),
  },
];

for (const target of TARGETS) {
  if (target.present && !existsSync(join(ROOT, target.present))) continue;
  const stampFile = join(ROOT, target.stamp);
  const current = fingerprint(target.inputs);
  const built = existsSync(join(ROOT, target.output)) && existsSync(stampFile);
  if (!force && built && readFileSync(stampFile, 'utf8') === current) continue;
  const started = Date.now();
  // Why, in words that are true: a fresh clone has had no build, so nothing "changed since" one.
  const reason = force ? 'as asked' : built ? 'its sources changed since the last build' : 'first build';
  console.log(`Building the ${target.name} (${reason})...`);
  target.build();
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, current);
  console.log(`Built the ${target.name} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}
