// The embedded database (PGlite in CHAT_DATA_DIR) with real processes: one process per data directory (a second
// one exits with one line naming the directory and the other's pid, the first is unaffected, a SIGKILL leaves
// no stale lock), and acknowledged writes on disk before the answer (its WAL synced before the 201; a message
// answered 201 survives a SIGKILL right after, time after time).
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs, { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { sql } from 'kysely';
import { DataDirLockedError, lockDataDir } from '../../src/store/data-dir-lock.js';
import { openDatabase } from '../../src/store/database.js';
import { requestJson, statusOf } from '../../testkit/http.js';
import { ParleyNode } from '../../testkit/parley-node.js';
import { freePort } from '../../testkit/ports.js';
import { exited, track } from '../../testkit/processes.js';
import { ROOT } from '../../testkit/root.js';
import { SECRETS } from '../../testkit/secrets.js';
import { until } from '../../testkit/wait.js';

const dirs: string[] = [];
after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-embedded-'));
  dirs.push(dir);
  return dir;
}

/** A node on the embedded default in dir (a directory it does not delete). */
const nodeOn = (dir: string, name = 'embedded') => ParleyNode.start(name, { CHAT_DATA_DIR: dir });

/** src/main.ts on dir until it exits (within 60 s): its exit code and output. */
async function runToExit(dir: string): Promise<{ code: number | string | null; stdout: string; stderr: string }> {
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...SECRETS, CHAT_DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const code = await exited(child, 60_000);
  if (code === null) child.kill('SIGKILL');
  return { code, ...out };
}

async function sendAndCheck(node: ParleyNode, body: string): Promise<{ conversationId: number; messageId: number }> {
  assert.equal((await node.request(2, 'GET', '/conversations')).status, 200, 'user 2 signs in');
  const conversation = await node.request(1, 'POST', '/conversations', { user_id: 2 });
  assert.ok([200, 201].includes(conversation.status), JSON.stringify(conversation.body));
  const sent = await node.request(1, 'POST', `/conversations/${conversation.body.data.id}/messages`, { body });
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  return { conversationId: conversation.body.data.id, messageId: sent.body.data.id };
}

async function history(node: ParleyNode, conversationId: number): Promise<string[]> {
  const res = await node.request(2, 'GET', `/conversations/${conversationId}/messages?limit=100`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return (res.body.data as { body: string }[]).map((m) => m.body).reverse();
}

describe('one process per data directory', { timeout: 240_000 }, () => {
  test('in one process: the lock is exclusive until released, and names its holder', () => {
    const dir = dataDir();
    const lock = lockDataDir(dir);
    assert.equal(lock.kind, 'flock', 'an OS lock is available here (flock, perl or python3)');
    assert.throws(() => lockDataDir(dir), (err: unknown) => {
      assert.ok(err instanceof DataDirLockedError);
      assert.equal(err.exitCode, 1);
      assert.equal(err.owner?.pid, process.pid);
      assert.ok(err.message.includes(dir) && err.message.includes(`pid ${process.pid}`), err.message);
      return true;
    });
    lock.release();
    lockDataDir(dir).release();
  });

  test('a second process exits with one line naming the directory and the first one; the first carries on; a SIGKILL leaves nothing stale', async () => {
    const dir = dataDir();
    const first = await nodeOn(dir, 'first');
    try {
      const { conversationId } = await sendAndCheck(first, 'before the second start');

      const second = await runToExit(dir);
      assert.equal(second.code, 1, `exit code; output:\n${second.stdout}${second.stderr}`);
      assert.equal(second.stdout, '', `nothing on stdout:\n${second.stdout}`);
      const lines = second.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line:\n${second.stderr}`);
      assert.match(lines[0]!, new RegExp(`^Parley could not start: The data directory ${dir.replaceAll('/', '\\/')} is in use by another Parley process \\(pid ${first.pid}, started `));
      assert.match(lines[0]!, /Stop that process first, or give this one another CHAT_DATA_DIR/);

      // The first one did not notice.
      assert.equal(await first.ready(), 200);
      await sendAndCheck(first, 'after the second start');
      assert.deepEqual(await history(first, conversationId), ['before the second start', 'after the second start']);

      first.kill(); // SIGKILL: no clean-up of any kind
      await exited(first.child, 10_000);
      assert.equal(JSON.parse(readFileSync(join(dir, 'pglite.lock'), 'utf8')).pid, first.pid, 'the lock file still names the dead process');
      const restarted = await nodeOn(dir, 'restarted');
      try {
        assert.deepEqual(await history(restarted, conversationId), ['before the second start', 'after the second start']);
      } finally {
        await restarted.close();
      }
    } finally {
      first.kill();
    }
  });
});

describe('acknowledged writes on the embedded database are on disk', { timeout: 300_000 }, () => {
  test('a commit syncs its WAL to disk before it resolves; PostgreSQL runs with fsync on', async () => {
    const dir = dataDir();
    const database = await openDatabase({ databaseUrl: null, dataDir: dir });
    const synced: string[] = [];
    const original = fs.fdatasyncSync;
    try {
      const settings = await sql<{ fsync: string }>`show fsync`.execute(database.db);
      assert.equal(settings.rows[0]?.fsync, 'on');
      await sql`create table notes (id serial primary key, body text)`.execute(database.db);
      fs.fdatasyncSync = (fd: number) => {
        synced.push(fs.readlinkSync(`/proc/self/fd/${fd}`));
        original(fd);
      };
      for (let i = 0; i < 3; i++) {
        synced.length = 0;
        await sql`insert into notes (body) values (${`note ${i}`})`.execute(database.db);
        assert.ok(synced.some((path) => path.startsWith(join(dir, 'pglite', 'pg_wal'))), `the WAL was synced before the insert resolved: ${synced}`);
      }
    } finally {
      fs.fdatasyncSync = original;
      await database.close();
    }
  });

  test('the WAL reaches the disk before the 201 goes out (strace of a real node)', async (t) => {
    if (spawnSync('strace', ['-V']).status !== 0) return t.skip('strace is not installed');
    const dir = dataDir();
    const trace = join(dir, 'strace.txt');
    const port = await freePort();
    // Traced: the syncs and the writes, with the paths of their descriptors (-y) and the start of what is written.
    const child = track(
      spawn('strace', ['-f', '-y', '-s', '16', '--seccomp-bpf', '-e', 'trace=fdatasync,fsync,write,writev', '-o', trace, process.execPath, '--import', 'tsx', 'src/main.ts'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...SECRETS, CHAT_DATA_DIR: dir, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    try {
      await until(async () => (await statusOf(`${base}/readyz`)) === 200 || child.exitCode !== null, 120_000, () => `the traced node is ready:\n${stderr}`, 200);
      if (child.exitCode !== null && /ptrace|not permitted/i.test(stderr)) return t.skip(`strace cannot trace here: ${stderr.trim()}`);
      assert.equal(await statusOf(`${base}/readyz`), 200, stderr);
      const server = { 'x-chat-server-key': SECRETS.CHAT_SERVER_KEY };
      const token = (await requestJson(`${base}/api/chat/v1/users/1/tokens`, { method: 'POST', headers: server, body: {} })).body.token as string;
      await requestJson(`${base}/api/chat/v1/users/2`, { method: 'PUT', headers: server, body: { name: 'Bob' } });
      const conversation = await requestJson(`${base}/api/chat/v1/conversations`, { method: 'POST', token, body: { user_id: 2 } });
      const sent = await requestJson(`${base}/api/chat/v1/conversations/${conversation.body.data.id}/messages`, { method: 'POST', token, body: { body: 'traced' } });
      assert.equal(sent.status, 201, JSON.stringify(sent.body));

      const lines = readFileSync(trace, 'utf8').split('\n');
      const answers = lines.flatMap((line, i) => (/^\d+\s+writev?\(\d+<(socket|TCP)/.test(line) && line.includes('HTTP/1.1 ') ? [i] : []));
      const answer = answers.at(-1)!;
      assert.match(lines[answer]!, /HTTP\/1\.1 201/, 'the last answer is the send’s 201');
      // Between the answer before it (the conversation's) and the 201: the send's commit synced the WAL.
      const during = lines.slice(answers.at(-2)! + 1, answer);
      assert.ok(
        during.some((line) => /^\d+\s+fdatasync\(\d+<[^>]*\/pg_wal\//.test(line)),
        `a WAL fdatasync between the previous answer and the 201:\n${during.filter((l) => /sync/.test(l)).join('\n')}`,
      );
    } finally {
      // strace, killed, would leave the node running: stop the node itself (the lock file names it).
      const owner = JSON.parse(readFileSync(join(dir, 'pglite.lock'), 'utf8') || '{}') as { pid?: number };
      if (owner.pid) process.kill(owner.pid, 'SIGTERM');
      if ((await exited(child, 30_000)) === null) child.kill('SIGKILL');
    }
  });

  test('a message answered 201 is there after a SIGKILL right after the answer, every time', async () => {
    const dir = dataDir();
    const bodies: string[] = [];
    let conversationId = 0;
    for (let round = 0; round < 5; round++) {
      const node = await nodeOn(dir, `round${round}`);
      try {
        if (round > 0) assert.deepEqual(await history(node, conversationId), bodies, `round ${round}: every acknowledged message is back`);
        const body = `acknowledged ${round}`;
        ({ conversationId } = await sendAndCheck(node, body));
        bodies.push(body);
      } finally {
        node.kill(); // at once after the 201
      }
      await exited(node.child, 10_000);
    }
    const last = await nodeOn(dir, 'last');
    try {
      assert.deepEqual(await history(last, conversationId), bodies);
    } finally {
      await last.close();
    }
  });
});
