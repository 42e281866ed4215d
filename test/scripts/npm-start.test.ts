// `npm start` is "build what changed, then run the server". A SIGTERM to npm (docker stop, a supervisor, kill <pid>)
// must reach the server, so it shuts down gracefully and frees its port and data directory; without `exec` the
// shell between npm and the server dies of the signal and leaves the server running, orphaned, still holding the
// embedded database's lock. The test runs package.json's own start script through npm, in a scratch directory
// where the build step and the server are stand-ins: the server reports the signal it gets.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { exited, track } from '../../testkit/processes.js';
import { ROOT } from '../../testkit/root.js';
import { until } from '../../testkit/wait.js';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
const dir = mkdtempSync(join(tmpdir(), 'parley-npm-start-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a SIGTERM to `npm start` reaches the server (graceful shutdown, nothing left running)', async () => {
  assert.match(pkg.scripts.start, /node scripts\/build-if-stale\.mjs/);
  assert.match(pkg.scripts.start, /node dist\/src\/main\.js/);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'npm-start-probe', private: true, scripts: { start: pkg.scripts.start } }));
  mkdirSync(join(dir, 'scripts'));
  writeFileSync(join(dir, 'scripts', 'build-if-stale.mjs'), '');
  mkdirSync(join(dir, 'dist', 'src'), { recursive: true });
  const report = join(dir, 'signal.txt');
  writeFileSync(
    join(dir, 'dist', 'src', 'main.js'),
    `const fs = require('node:fs');
     fs.writeFileSync(${JSON.stringify(report)}, 'running ' + process.pid);
     process.on('SIGTERM', () => { fs.writeFileSync(${JSON.stringify(report)}, 'SIGTERM'); process.exit(0); });
     setTimeout(() => {}, 60000);`,
  );
  const npm = track(spawn('npm', ['start', '--silent'], { cwd: dir, stdio: 'ignore' }));
  const read = () => {
    try {
      return readFileSync(report, 'utf8');
    } catch {
      return '';
    }
  };
  await until(() => read().startsWith('running'), 30_000, () => 'the stand-in server did not start');
  const serverPid = Number(read().split(' ')[1]);
  try {
    npm.kill('SIGTERM');
    await exited(npm, 10_000);
    await until(() => read() === 'SIGTERM', 5_000, () => `the server did not get the SIGTERM (report: ${read()})`);
  } finally {
    try {
      process.kill(serverPid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
});
