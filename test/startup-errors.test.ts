// What main.ts prints for a failed start (src/startup-errors.ts), for the errors no process test reaches
// easily: one line each, with its exit code, the stack only in debug.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../src/config/index.js';
import { databaseStartupError, describeStartupFailure, listenStartupError, redisStartupError, StartupError } from '../src/startup-errors.js';

const systemError = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('startup failures in one line', () => {
  test('a configuration error: exit code 2, no stack even in debug', () => {
    assert.deepEqual(describeStartupFailure(new ConfigError('PORT must be ...'), true), { text: 'Configuration error: PORT must be ...', exitCode: 2 });
  });

  test("another module's error that explains itself (an exitCode, as the data directory lock's) passes through every wrapper unchanged", () => {
    class Locked extends Error {
      readonly exitCode = 1;
    }
    const locked = new Locked('The data directory /srv/data is in use by another Parley process (pid 42). Stop that process first.');
    assert.equal(databaseStartupError(locked, null, '/srv/data'), locked);
    assert.equal(redisStartupError(locked, 'redis://r:6379'), locked);
    assert.deepEqual(describeStartupFailure(locked, false), { text: `Parley could not start: ${locked.message}`, exitCode: 1 });
  });

  test('an unexpected error: its message, a hint that LOG_LEVEL=debug shows where, exit code 1; in debug the stack', () => {
    const err = new Error('something odd');
    assert.deepEqual(describeStartupFailure(err, false), { text: 'Parley could not start: something odd (LOG_LEVEL=debug shows where)', exitCode: 1 });
    const debug = describeStartupFailure(err, true);
    assert.match(debug.text, /^Parley could not start: something odd\nError: something odd\n\s+at /);
  });

  test('a wrapped error shows the stack of its cause in debug', () => {
    const wrapped = databaseStartupError(systemError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.5:5432'), 'postgres://u:secret@10.0.0.5:5432/parley', '/d');
    assert.ok(wrapped instanceof StartupError);
    const { text } = describeStartupFailure(wrapped, true);
    assert.match(text, /^Parley could not start: Cannot reach PostgreSQL at 10\.0\.0\.5:5432 \(connection refused\)\. Fix: /);
    assert.match(text, /\nError: connect ECONNREFUSED 10\.0\.0\.5:5432\n/);
    assert.doesNotMatch(text, /secret/);
  });

  test('a file Parley keeps in its data directory that cannot be made (a file in the way, no permission, read-only): one line naming the path and CHAT_DATA_DIR, exit code 2', () => {
    const err = Object.assign(new Error("EEXIST: file already exists, mkdir '/srv/data'"), { code: 'EEXIST', syscall: 'mkdir', path: '/srv/data' });
    assert.deepEqual(describeStartupFailure(err, false), {
      text: 'Parley could not start: Cannot mkdir /srv/data (a file is in the way of a directory, EEXIST). Fix: give Parley a directory it can write: correct CHAT_DATA_DIR (default ./data), or that directory\'s permissions.',
      exitCode: 2,
    });
    const denied = Object.assign(new Error('EACCES'), { code: 'EACCES', syscall: 'open', path: '/srv/data/vapid.json' });
    assert.match(describeStartupFailure(denied, false).text, /^Parley could not start: Cannot open \/srv\/data\/vapid\.json \(permission denied, EACCES\)\. Fix: /);
    assert.match(describeStartupFailure(denied, true).text, /\nError: EACCES\n/, 'the stack in debug');
    // The embedded database's directory: the same line and exit code.
    assert.equal((databaseStartupError(err, null, '/srv/data') as StartupError).exitCode, 2);
    assert.match(databaseStartupError(err, null, '/srv/data').message, /^Cannot mkdir \/srv\/data \(a file is in the way of a directory, EEXIST\)\. Fix: .*CHAT_DATA_DIR/);
    // A network error is not a file's: it keeps its own line.
    assert.equal(describeStartupFailure(systemError('ECONNREFUSED'), false).exitCode, 1);
  });

  test('PostgreSQL: a refused password, an unknown host; the embedded database: its directory', () => {
    const auth = databaseStartupError(Object.assign(new Error('password authentication failed for user "u"'), { code: '28P01' }), 'postgres://u:pw@db:5432/x', '/d');
    assert.match(auth.message, /^PostgreSQL at db:5432 refused the connection: password authentication failed for user "u"\. Fix: correct the user or password in DATABASE_URL/);
    assert.match(databaseStartupError(systemError('ENOTFOUND'), 'postgres://db.invalid/x', '/d').message, /^Cannot reach PostgreSQL at db\.invalid:5432 \(host not found\)/);
    assert.match(databaseStartupError(systemError('EACCES', "EACCES: permission denied, mkdir '/root/x'"), null, '/root/x').message, /^Cannot open the embedded database in \/root\/x: EACCES: permission denied.*Fix: /);
  });

  test('Redis: a refused password', () => {
    assert.match(redisStartupError(new Error('WRONGPASS invalid username-password pair'), 'redis://:x@r:6380').message, /^Redis at r:6380 refused the connection: WRONGPASS .*Fix: correct the password in REDIS_URL\.$/);
  });

  test('Redis Cluster and Sentinel: the addresses tried and the settings to correct', () => {
    const cluster = redisStartupError(new Error('Failed to refresh slots cache.'), { kind: 'cluster', nodes: [{ host: 'r1', port: 7000 }, { host: 'r2', port: 7001 }] });
    assert.match(cluster.message, /^Cannot reach the Redis Cluster at r1:7000, r2:7001 \(Failed to refresh slots cache\.\)\. Fix: .*REDIS_CLUSTER_NODES\.$/);
    const sentinel = redisStartupError(new Error('All sentinels are unreachable.'), { kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }], master: 'parley' });
    assert.match(sentinel.message, /^Cannot reach Redis primary "parley" through the sentinels at s1:26379 .*Fix: .*REDIS_SENTINELS and REDIS_SENTINEL_MASTER\.$/);
  });

  test('listening: not allowed (EACCES) is exit code 1, a HOST that is not an address here (EADDRNOTAVAIL) is a setting to fix: 2', () => {
    assert.equal(listenStartupError(systemError('EACCES'), '0.0.0.0', 80).exitCode, 1);
    const host = listenStartupError(systemError('EADDRNOTAVAIL'), '10.9.9.9', 8080);
    assert.equal(host.exitCode, 2);
    assert.match(host.message, /^HOST 10\.9\.9\.9 is not an address of this machine\. Fix: /);
  });
});
