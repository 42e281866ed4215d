// BROADCAST_APPS_FILE: what a valid file gives, and the one line each mistake in it stops the start with.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { SECRETS } from '../../testkit/secrets.js';

const SECRET = 'a-secret-of-thirty-two-bytes-or-more';
const dir = mkdtempSync(join(tmpdir(), 'parley-apps-config-'));
let files = 0;

/** Writes `content` (JSON unless a string) to a fresh file and returns its path. */
function appsFile(content: unknown): string {
  const path = join(dir, `apps-${++files}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const load = (path: string, env: Record<string, string> = {}) => loadConfig({ ...SECRETS, BROADCAST_APPS_FILE: path, ...env });

/** A ConfigError of one line that names the file and says `what`. */
const refused = (what: RegExp) => (err: unknown) =>
  err instanceof ConfigError && err.message.startsWith('BROADCAST_APPS_FILE ') && !err.message.includes('\n') && what.test(err.message) && /Fix: /.test(err.message);

describe('BROADCAST_APPS_FILE', () => {
  test('unset: the default app only', () => {
    assert.deepEqual(loadConfig({ ...SECRETS }).broadcast.apps, []);
  });

  test('each app with its own credentials; what it leaves out is the default app’s setting', () => {
    const path = appsFile([
      { id: 2, key: 'key-2', secret: SECRET },
      { id: 'three', key: 'key-3', secret: SECRET, webhook_urls: ['https://hooks.example/pusher'], client_events: false, max_connections: 5 },
    ]);
    const { apps } = load(path, { BROADCAST_MAX_CONNECTIONS: '900', BROADCAST_CLIENT_EVENTS: 'on' }).broadcast;
    assert.deepEqual(apps, [
      { id: '2', key: 'key-2', secret: SECRET, webhookUrls: [], clientEvents: true, maxConnections: 900 },
      { id: 'three', key: 'key-3', secret: SECRET, webhookUrls: ['https://hooks.example/pusher'], clientEvents: false, maxConnections: 5 },
    ]);
  });

  test('a file that cannot be read, is not JSON or not an array', () => {
    assert.throws(() => load(join(dir, 'missing.json')), refused(/cannot be read \(ENOENT\)/));
    assert.throws(() => load(appsFile('[{"id": 2,')), refused(/is not valid JSON/));
    assert.throws(() => load(appsFile({ id: 2 })), refused(/must be a JSON array/));
  });

  test('each field is checked, and the message names the app', () => {
    const cases: [unknown, RegExp][] = [
      ['not an app', /app 1 is not a JSON object/],
      [{ id: 'a/b', key: 'k', secret: SECRET }, /app 1: id must be/],
      [{ id: '2', key: 'has space', secret: SECRET }, /app "2": key must be/],
      [{ id: '2', key: 'k', secret: 'short' }, /app "2": secret must be a string of at least 32 bytes/],
      [{ id: '2', key: 'k', secret: SECRET, webhook_urls: ['ftp://x'] }, /app "2": webhook_urls must be an array of http\(s\) URLs/],
      [{ id: '2', key: 'k', secret: SECRET, client_events: 'yes' }, /app "2": client_events must be true or false/],
      [{ id: '2', key: 'k', secret: SECRET, max_connections: 0 }, /app "2": max_connections must be an integer ≥ 1/],
      [{ id: '2', key: 'k', secret: SECRET, cluster: 'eu' }, /app "2" has unknown field "cluster"|app 1 has unknown field "cluster"/],
    ];
    for (const [app, what] of cases) assert.throws(() => load(appsFile([app])), refused(what), JSON.stringify(app));
  });

  test('ids and keys are unique, also against the default app’s', () => {
    assert.throws(() => load(appsFile([{ id: '2', key: 'a', secret: SECRET }, { id: '2', key: 'b', secret: SECRET }])), refused(/app "2": the id is used twice/));
    assert.throws(() => load(appsFile([{ id: '2', key: 'a', secret: SECRET }, { id: '3', key: 'a', secret: SECRET }])), refused(/app "3": the key is used twice/));
    assert.throws(() => load(appsFile([{ id: SECRETS.BROADCAST_APP_ID, key: 'a', secret: SECRET }])), refused(/the id is used twice \(or is BROADCAST_APP_ID\)/));
    assert.throws(() => load(appsFile([{ id: '2', key: SECRETS.BROADCAST_APP_KEY, secret: SECRET }])), refused(/the key is used twice \(or is BROADCAST_APP_KEY\)/));
  });

  test('only with the built-in server', () => {
    const path = appsFile([{ id: '2', key: 'a', secret: SECRET }]);
    assert.throws(() => load(path, { BROADCAST_DRIVER: 'log' }), (err: unknown) => err instanceof ConfigError && /BROADCAST_APPS_FILE needs the built-in server/.test(err.message));
  });
});
