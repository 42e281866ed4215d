// Starting Parley as a user does, `node --import tsx src/main.ts` with its settings in the environment: a start
// that cannot succeed prints ONE line saying what is wrong and how to fix it, exit code 2 for a configuration
// error and 1 for anything outside (a busy port, a database or Redis it cannot reach), and no stack trace unless
// LOG_LEVEL=debug. A start that succeeds prints the banner; the token line only on the embedded default with development secrets.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { freePort } from '../testkit/ports.js';
import { freshPostgres, ADMIN_DATABASE_URL } from '../testkit/postgres.js';
import { exited, track } from '../testkit/processes.js';
import { ROOT } from '../testkit/root.js';
import { SECRETS } from '../testkit/secrets.js';
import { until } from '../testkit/wait.js';

const dataDirs: string[] = [];
after(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

interface Run {
  readonly code: number | string | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawns src/main.ts with exactly env (plus PATH, HOME and a fresh data directory). */
function spawnParley(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-main-test-'));
  dataDirs.push(dataDir);
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), CHAT_DATA_DIR: dataDir, HOST: '127.0.0.1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  return { child, out, dataDir };
}

/** Runs Parley until it exits (it must, within 60 s). */
async function startAndExit(env: Record<string, string>): Promise<Run> {
  const { child, out } = spawnParley(env);
  const code = await exited(child, 60_000);
  if (code === null) child.kill('SIGKILL');
  return { code, ...out };
}

/** The run printed nothing but one line on stderr, matching line, and exited with code. */
function assertOneLine(run: Run, code: number, line: RegExp): void {
  const all = `${run.stdout}${run.stderr}`;
  assert.equal(run.code, code, `exit code; output:\n${all}`);
  assert.equal(run.stdout, '', `nothing on stdout; output:\n${all}`);
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line; output:\n${all}`);
  assert.match(lines[0], line);
  assert.doesNotMatch(all, /^\s+at /m, 'no stack trace');
}

const closedPort = freePort; // a port nothing listens on (free a moment ago)

describe('a start that fails says why in one line', () => {
  test('PORT=99999: configuration error, exit code 2', async () => {
    assertOneLine(await startAndExit({ PORT: '99999' }), 2, /^Configuration error: PORT must be an integer from 0 to 65535, got "99999"\. Fix: .*default \(8080\)/);
  });

  test('LOG_LEVEL=verbose: configuration error naming the levels, exit code 2', async () => {
    assertOneLine(await startAndExit({ LOG_LEVEL: 'verbose' }), 2, /^Configuration error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"/);
  });

  test('DATABASE_URL=mysql://x: configuration error, exit code 2, the URL not repeated', async () => {
    const run = await startAndExit({ DATABASE_URL: 'mysql://root:hunter2@x' });
    assertOneLine(run, 2, /^Configuration error: DATABASE_URL must be a URL \(postgres:\/\/ or postgresql:\/\/\), got a mysql: URL\. Fix: write it as postgres:/);
    assert.doesNotMatch(run.stderr, /hunter2/);
  });

  test('a secret shorter than 32 bytes: configuration error, exit code 2, the secret not repeated', async () => {
    const run = await startAndExit({ ...SECRETS, CHAT_SERVER_KEY: 'short-key-123' });
    assertOneLine(run, 2, /^Configuration error: CHAT_SERVER_KEY must be a secret of at least 32 bytes, got 13 bytes\. Fix: generate one with openssl rand -hex 32\.$/);
    assert.doesNotMatch(run.stderr, /short-key-123/);
  });

  test('CHAT_DEMO=maybe: configuration error listing the words for on and off', async () => {
    assertOneLine(await startAndExit({ CHAT_DEMO: 'maybe' }), 2, /^Configuration error: CHAT_DEMO must be on\/off \(1\/true\/yes\/on or 0\/false\/no\/off\), got "maybe"/);
  });

  test('CHAT_DATA_DIR naming a file: exit code 2, the path and the fix (generating development secrets, or later with every secret set)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'parley-main-file-')), 'not-a-directory');
    dataDirs.push(dirname(file));
    writeFileSync(file, 'a file, not a directory');
    assertOneLine(
      await startAndExit({ CHAT_DATA_DIR: file }),
      2,
      /^Configuration error: Cannot write the development secrets to .*not-a-directory\/secrets\.json \(EEXIST\): CHAT_DATA_DIR \(.*not-a-directory\) must be a directory Parley can read and write\. Fix: /,
    );
    const database = await freshPostgres();
    try {
      assertOneLine(
        await startAndExit({ ...SECRETS, DATABASE_URL: database.url, PORT: '0', CHAT_DATA_DIR: file }),
        2,
        /^Parley could not start: Cannot mkdir .*not-a-directory \(a file is in the way of a directory, EEXIST\)\. Fix: .*CHAT_DATA_DIR/,
      );
    } finally {
      await database.drop();
    }
  });

  test('the port in use: exit code 1, naming the port and the fix', async () => {
    const port = await freePort();
    const busy: Server = createServer().listen(port, '127.0.0.1');
    await new Promise((resolve) => busy.once('listening', resolve));
    try {
      assertOneLine(await startAndExit({ PORT: String(port) }), 1, new RegExp(`^Parley could not start: Port ${port} on 127\\.0\\.0\\.1 is in use .*Fix: .*set PORT to a free port\\.$`));
    } finally {
      busy.close();
    }
  });

  test('a DATABASE_URL naming a missing database: exit code 1, saying how to create it', async () => {
    const url = new URL(ADMIN_DATABASE_URL);
    url.pathname = '/parley_no_such_database';
    assertOneLine(
      await startAndExit({ DATABASE_URL: url.toString() }),
      1,
      /^Parley could not start: PostgreSQL at [^ ]+ has no database "parley_no_such_database"\. Fix: create it \(createdb .*parley_no_such_database\), or correct DATABASE_URL\.$/,
    );
  });

  test('PostgreSQL not reachable: exit code 1', async () => {
    const port = await closedPort();
    assertOneLine(
      await startAndExit({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/parley` }),
      1,
      new RegExp(`^Parley could not start: Cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(connection refused\\)\\. Fix: `),
    );
  });

  test('Redis not reachable (REDIS_URL on a closed port): exit code 1, at once', async () => {
    const port = await closedPort();
    // On PostgreSQL, so the time measured is Redis's: a first start of the embedded database (its initdb) alone can
    // take half a minute on a loaded machine, and the bound below is about retries, not about that.
    const database = await freshPostgres();
    try {
      const started = Date.now();
      const run = await startAndExit({ PORT: '0', DATABASE_URL: database.url, REDIS_URL: `redis://127.0.0.1:${port}` });
      assertOneLine(run, 1, new RegExp(`^Parley could not start: Cannot reach Redis at 127\\.0\\.0\\.1:${port} \\(connection refused\\)\\. Fix: start Redis there, or correct REDIS_URL`));
      assert.ok(Date.now() - started < 30_000, 'no retrying in the background first');
    } finally {
      await database.drop();
    }
  });

  test('LOG_LEVEL=debug adds the stack to the line', async () => {
    const port = await closedPort();
    const run = await startAndExit({ PORT: '0', LOG_LEVEL: 'debug', REDIS_URL: `redis://127.0.0.1:${port}` });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^Parley could not start: Cannot reach Redis/);
    assert.match(run.stderr, /^\s+at /m);
  });
});

describe('the banner', () => {
  /** Starts Parley, waits for its banner (the line after which it serves), stops it; the output. */
  async function banner(env: Record<string, string>): Promise<{ stdout: string; port: number }> {
    const port = await freePort();
    const { child, out } = spawnParley({ PORT: String(port), LOG_LEVEL: 'warn', ...env });
    try {
      // The banner is one write: once its socket line is there, all of it is.
      await until(() => out.stdout.includes('  WebSocket:') || child.exitCode !== null, 90_000, () => `no banner:\n${out.stdout}${out.stderr}`);
      assert.equal(child.exitCode, null, `${out.stdout}${out.stderr}`);
      return { stdout: out.stdout, port };
    } finally {
      child.kill('SIGTERM');
      await exited(child, 10_000);
    }
  }

  test('the embedded default with development secrets: addresses, the socket key and a token that works', async () => {
    const { stdout, port } = await banner({});
    assert.match(stdout, new RegExp(`Parley is running at http://127\\.0\\.0\\.1:${port} \\(embedded database in .*, one node\\)\\.`));
    assert.match(stdout, new RegExp(`Web client: http://127\\.0\\.0\\.1:${port}/`));
    assert.match(stdout, new RegExp(`API: +http://127\\.0\\.0\\.1:${port}/api/chat/v1`));
    assert.match(stdout, new RegExp(`WebSocket: +ws://127\\.0\\.0\\.1:${port}/app/[0-9a-f]+ +\\(Pusher protocol; key [0-9a-f]+\\)`));
    assert.match(stdout, /A token for user 1 \(Alice\), valid 24 h:\n +eyJ[\w-]+\.[\w-]+\.[\w-]+\n/);
    assert.match(stdout, /More tokens: npm run token -- <userId> --name <name>/);
  });

  test('with CHAT_DEMO on, the web client line says to sign in with any user id and name, not to paste a token', async () => {
    const { stdout, port } = await banner({ CHAT_DEMO: '1' });
    assert.match(stdout, new RegExp(`Web client: http://127\\.0\\.0\\.1:${port}/ +\\(CHAT_DEMO is on: sign in with any user id and name\\)`));
    assert.doesNotMatch(stdout, /paste a token/);
    const plain = await banner({});
    assert.match(plain.stdout, /Web client: .*\(paste a token to sign in\)/);
  });

  test('with DATABASE_URL and development secrets: the banner names the secrets file and how to mint tokens, shows no token', async () => {
    const database = await freshPostgres();
    try {
      const { stdout } = await banner({ DATABASE_URL: database.url });
      assert.match(stdout, /Development secrets in .*secrets\.json; set them for production/);
      assert.match(stdout, /Tokens: npm run token -- <userId> --name <name>/);
      assert.doesNotMatch(stdout, /A token for|eyJ/);
    } finally {
      await database.drop();
    }
  });

  test('with its secrets and DATABASE_URL set: the banner, without a token line', async () => {
    const database = await freshPostgres();
    try {
      const { stdout, port } = await banner({ ...SECRETS, DATABASE_URL: database.url });
      assert.match(stdout, new RegExp(`Parley is running at http://127\\.0\\.0\\.1:${port} \\(PostgreSQL at [^ ]+/${database.name}, one node\\)\\.`));
      assert.match(stdout, new RegExp(`WebSocket: +ws://127\\.0\\.0\\.1:${port}/app/${SECRETS.BROADCAST_APP_KEY} `));
      assert.doesNotMatch(stdout, /A token for|More tokens/);
    } finally {
      await database.drop();
    }
  });
});
