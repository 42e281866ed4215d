// npm run token, as a user runs it (`tsx src/cli/token.ts`): a token as Parley's own verification accepts it
// (CHAT_JWT_ISSUER / CHAT_JWT_AUDIENCE when set, at most CHAT_JWT_MAX_TTL_S), and a wrong invocation is one
// usage line with exit code 2.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { decodeJwt, jwtVerify } from 'jose';
import { exited, track } from '../../testkit/processes.js';
import { ROOT } from '../../testkit/root.js';
import { SECRETS } from '../../testkit/secrets.js';

const dataDir = mkdtempSync(join(tmpdir(), 'parley-token-cli-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

async function token(args: string[], env: Record<string, string> = SECRETS): Promise<{ code: number | string | null; stdout: string; stderr: string }> {
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', 'src/cli/token.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), CHAT_DATA_DIR: dataDir, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { code: await exited(child, 30_000), stdout, stderr };
}

const USAGE = 'Usage: npm run token -- <userId> [--name Alice] [--avatar-url URL] [--ttl seconds]';

describe('npm run token', () => {
  test('an unknown option (--nme) is one line naming it, with the usage, exit code 2', async () => {
    const run = await token(['1', '--nme', 'Alice']);
    assert.equal(run.code, 2);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, `Unknown option --nme. ${USAGE}\n`);
  });

  test('a bad user id or --ttl is one usage line, exit code 2', async () => {
    for (const args of [[], ['alice'], ['0'], ['1', '2'], ['1', '--ttl', 'long'], ['1', '--ttl', '0']]) {
      const run = await token(args);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
      assert.ok(run.stderr.includes(USAGE), run.stderr);
    }
  });

  test('a token signed with CHAT_JWT_SECRET, with iss and aud when set, living 24 h by default', async () => {
    const run = await token(['42', '--name', 'Alice'], { ...SECRETS, CHAT_JWT_ISSUER: 'https://app.example.com', CHAT_JWT_AUDIENCE: 'parley' });
    assert.equal(run.code, 0, run.stderr);
    const { payload } = await jwtVerify(run.stdout.trim(), new TextEncoder().encode(SECRETS.CHAT_JWT_SECRET), {
      issuer: 'https://app.example.com',
      audience: 'parley',
    });
    assert.equal(payload.sub, '42');
    assert.equal(payload.name, 'Alice');
    assert.equal(payload.exp! - payload.iat!, 86_400);
  });

  test('CHAT_JWT_MAX_TTL_S: the default lifetime shrinks to it, and --ttl above it is one line, exit code 2', async () => {
    const env = { ...SECRETS, CHAT_JWT_MAX_TTL_S: '3600' };
    const run = await token(['7'], env);
    assert.equal(run.code, 0, run.stderr);
    const claims = decodeJwt(run.stdout.trim());
    assert.equal(claims.exp! - claims.iat!, 3600);
    const refused = await token(['7', '--ttl', '7200'], env);
    assert.equal(refused.code, 2);
    assert.equal(refused.stderr, '--ttl must be at most 3600 seconds (CHAT_JWT_MAX_TTL_S).\n');
  });

  test('a configuration error is the same one line as at startup, exit code 2', async () => {
    const run = await token(['1'], { ...SECRETS, CHAT_JWT_SECRET: 'short' });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /^Configuration error: CHAT_JWT_SECRET must be a secret of at least 32 bytes, got 5 bytes\. Fix: .*\n$/);
  });
});
