// Configuration as one table (src/config/settings.ts): every setting is a row, and parsing, the errors, the
// README's table and the real-time server's defaults all come from it. The rules are the same for every row.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, describe, test } from 'node:test';
import { README, withGeneratedTable } from '../../scripts/config-docs.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { loadDevSecrets } from '../../src/config/dev-secrets.js';
import { defaultText, readSetting, readSettings, SECRET_MIN_BYTES, SETTINGS, settingDefault, type Setting, type SettingName } from '../../src/config/settings.js';
import { ROOT } from '../../testkit/root.js';
import { SECRETS } from '../../testkit/secrets.js';
import { cleanup, pusherError, RawClient, start } from '../support/realtime.js';

const rows = Object.entries(SETTINGS) as [SettingName, Setting<unknown>][];
const integerRows = rows.filter(([, s]) => typeof s.default === 'number' || s.type.startsWith('an integer') || s.type.startsWith('a port'));
const configError = (name: string) => (err: unknown) => err instanceof ConfigError && err.message.startsWith(`${name} must be `);

describe('the settings table', () => {
  test("the README's configuration table is the one generated from the rows (npm run docs:config writes it)", () => {
    const readme = readFileSync(README, 'utf8');
    assert.equal(withGeneratedTable(readme), readme, 'README.md differs from src/config/settings.ts: run npm run docs:config');
    for (const [name] of rows) assert.ok(readme.includes(`| \`${name}\` |`), `${name} has a README row`);
  });

  test('every row says its default (an empty list is "empty", never an empty code span), and an error names it in one pair of parentheses', () => {
    for (const [name, setting] of rows) {
      assert.doesNotMatch(defaultText(setting), /``/, `${name}'s Default column`);
      if (setting.default === null || setting.fix !== undefined) continue;
      const err = (() => {
        try {
          readSetting({ [name]: 'not,a\u0001valid value' }, name);
        } catch (e) {
          return e as Error;
        }
      })();
      if (err === undefined) continue; // text: anything goes
      const unset = /unset it for the default \((.*)\)\.$/.exec(err.message);
      assert.ok(unset, `${name}: ${err.message}`);
      assert.doesNotMatch(unset[1]!, /[()]/, `${name}: ${err.message}`);
    }
    assert.match(
      (() => {
        try {
          readSetting({ CHAT_JWT_MAX_TTL_S: '30' }, 'CHAT_JWT_MAX_TTL_S');
        } catch (e) {
          return (e as Error).message;
        }
        return '';
      })(),
      /or unset it for the default \(2592000, 30 days\)\.$/,
    );
  });

  test("docs/api.md's tables of limits state each setting's default as the table has it (no second set of defaults to drift)", () => {
    const api = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
    let checked = 0;
    for (const line of api.split('\n')) {
      const cells = line.split('|').map((c) => c.trim());
      // | what | default | `SETTING` | ... | and | what | per minute | `SETTING` |: one setting named in the third column.
      const named = /^`([A-Z_]+)`$/.exec(cells[3] ?? '');
      if (!line.startsWith('|') || !named || !(named[1]! in SETTINGS)) continue;
      const value = settingDefault(named[1] as SettingName);
      const numbers: string[] = (cells[2] ?? '').replaceAll(',', '').match(/\d+/g) ?? [];
      assert.ok(numbers.includes(String(value)), `docs/api.md: ${named[1]} is ${value} by default, the table says "${cells[2]}"`);
      checked++;
    }
    assert.ok(checked >= 15, `the limits tables were found (${checked} rows)`);
  });

  test("the docs that name a setting with its default state the table's (\"`SETTING` (N ... by default)\")", () => {
    const wrong: string[] = [];
    for (const doc of ['api.md', 'events.md', 'deployment.md', 'pusher-server.md', 'pusher-driver.md']) {
      const text = existsSync(join(ROOT, 'docs', doc)) ? readFileSync(join(ROOT, 'docs', doc), 'utf8') : '';
      // Tables of settings: | `SETTING` | `N` | ... |
      for (const [, name, stated] of text.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| `(\d+)` \|/gm)) {
        if (name! in SETTINGS && Number(stated) !== Number(settingDefault(name as SettingName))) wrong.push(`docs/${doc}: ${name} | ${stated} |`);
      }
      for (const [, name, stated, unit = ''] of text.matchAll(/`([A-Z][A-Z0-9_]+)`[^(\n]{0,30}\(([\d,]+)(?: (KiB|MiB|GiB))?[^)]*by default\)/g)) {
        if (!(name! in SETTINGS)) continue;
        const value = Number(stated!.replaceAll(',', '')) * ({ '': 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 } as Record<string, number>)[unit]!;
        if (value !== settingDefault(name as SettingName)) wrong.push(`docs/${doc}: ${name} (${stated} ${unit} by default)`);
      }
    }
    assert.deepEqual(wrong, []);
    // The frame limit (once "10,000 bytes" in events.md while the server's default was 20,000) is named with its setting.
    assert.match(readFileSync(join(ROOT, 'docs', 'events.md'), 'utf8'), /Client frames are limited to `BROADCAST_MAX_MESSAGE_BYTES` \(/);
  });

  test('every default is a valid value of its own row', () => {
    for (const [name, setting] of rows) {
      if (setting.default === null || Array.isArray(setting.default)) continue;
      const text = typeof setting.default === 'boolean' ? (setting.default ? 'on' : 'off') : String(setting.default);
      assert.deepEqual(setting.parse(text), setting.default, name);
    }
  });

  test('nothing under src/ reads a variable of process.env: config.ts, through the rows, is the only reader', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith('.ts') && /process\.env(\.|\[)/.test(readFileSync(path, 'utf8'))) offenders.push(path);
      }
    };
    walk(join(ROOT, 'src'));
    assert.deepEqual(offenders, []);
  });
});

describe('one rule for every row', () => {
  test('on/off settings take 1/true/yes/on and 0/false/no/off in any case; anything else is a configuration error', () => {
    const booleans = rows.filter(([, s]) => typeof s.default === 'boolean').map(([name]) => name);
    assert.ok(booleans.includes('CHAT_DEMO') && booleans.includes('BROADCAST_CLIENT_EVENTS') && booleans.includes('DATABASE_PREPARED_STATEMENTS'));
    for (const name of booleans) {
      for (const on of ['1', 'true', 'TRUE', 'True', 'yes', 'Yes', 'on', 'ON', ' on ']) assert.equal(readSetting({ [name]: on }, name), true, `${name}=${on}`);
      for (const off of ['0', 'false', 'False', 'no', 'NO', 'off', 'Off']) assert.equal(readSetting({ [name]: off }, name), false, `${name}=${off}`);
      for (const other of ['2', 'enabled', 'y', 'n', 'tru', '-1']) assert.throws(() => readSetting({ [name]: other }, name), configError(name), `${name}=${other}`);
    }
  });

  test('CHAT_DEMO=true turns the demo sign-in on, as CHAT_DEMO=1 does', () => {
    assert.equal(loadConfig({ ...SECRETS, CHAT_DEMO: 'true' }).demo, true);
    assert.equal(loadConfig({ ...SECRETS, CHAT_DEMO: '1' }).demo, true);
    assert.equal(loadConfig({ ...SECRETS, BROADCAST_CLIENT_EVENTS: 'off' }).broadcast.clientEvents, false);
  });

  test('zero: sizes, counts and durations refuse it; a row that accepts it says what it means (rate limits: off; PORT: any free port)', () => {
    for (const [name, setting] of integerRows) {
      const zero = setting.parse('0');
      if (zero === undefined) {
        assert.throws(() => readSetting({ [name]: '0' }, name), configError(name), name);
        continue;
      }
      assert.ok(name.startsWith('CHAT_RATE_') || name === 'PORT', `${name} accepts 0`);
      assert.match(`${setting.type} ${setting.meaning}`, /`0`: (off|any free port)/, `${name} says what 0 means`);
    }
    assert.equal(loadConfig({ ...SECRETS, CHAT_RATE_SENDS_PER_MINUTE: '0' }).limits.sendsPerMinute, 0);
    for (const name of ['CHAT_BODY_MAX_CHARS', 'CHAT_ATTACHMENT_MAX_BYTES', 'CHAT_GROUP_MAX_PARTICIPANTS', 'CHAT_PRESENCE_SWEEP_MS', 'CHAT_TYPING_TIMEOUT_MS', 'BROADCAST_MAX_MESSAGE_BYTES']) {
      assert.throws(() => loadConfig({ ...SECRETS, [name]: '0' }), configError(name), name);
    }
  });

  test('numbers: negative, fractional, non-numeric and out-of-range values are configuration errors naming the setting, the value and the fix', () => {
    for (const raw of ['-1', '1.5', '1e3', 'ten', '0x10', '99999999999999999999']) {
      assert.throws(() => loadConfig({ ...SECRETS, CHAT_BODY_MAX_CHARS: raw }), configError('CHAT_BODY_MAX_CHARS'), raw);
    }
    assert.throws(() => loadConfig({ ...SECRETS, PORT: '99999' }), {
      message: 'PORT must be an integer from 0 to 65535, got "99999". Fix: correct PORT, or unset it for the default (8080).',
    });
  });

  test('an empty value is unset: the default', () => {
    const config = loadConfig({ ...SECRETS, PORT: '', LOG_LEVEL: '', CHAT_DEMO: '', BROADCAST_ALLOWED_ORIGINS: '' });
    assert.deepEqual([config.port, config.logLevel, config.demo, config.broadcast.allowedOrigins], [8080, 'info', false, []]);
  });

  test('BROADCAST_WEBHOOK_URLS takes http(s) URLs, comma-separated; anything else is a configuration error', () => {
    const urls = loadConfig({ ...SECRETS, BROADCAST_WEBHOOK_URLS: 'https://app.example.com/pusher/webhook, http://10.0.0.5:8000/hook' }).broadcast.webhookUrls;
    assert.deepEqual(urls, ['https://app.example.com/pusher/webhook', 'http://10.0.0.5:8000/hook']);
    assert.deepEqual(loadConfig(SECRETS).broadcast.webhookUrls, []);
    for (const raw of ['app.example.com/hook', 'ftp://example.com/hook', 'https://ok.example.com,not a url']) {
      assert.throws(() => loadConfig({ ...SECRETS, BROADCAST_WEBHOOK_URLS: raw }), configError('BROADCAST_WEBHOOK_URLS'), raw);
    }
  });

  test('LOG_LEVEL is one of pino\'s levels', () => {
    assert.throws(() => loadConfig({ ...SECRETS, LOG_LEVEL: 'verbose' }), configError('LOG_LEVEL'));
    assert.equal(loadConfig({ ...SECRETS, LOG_LEVEL: 'debug' }).logLevel, 'debug');
  });

  test('one Redis, a Redis Cluster or a Sentinel primary: exactly one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS, and the sentinels need REDIS_SENTINEL_MASTER', () => {
    assert.equal(loadConfig({ ...SECRETS }).redis, null);
    assert.deepEqual(loadConfig({ ...SECRETS, REDIS_URL: 'redis://h:6379' }).redis, { kind: 'single', url: 'redis://h:6379' });
    assert.deepEqual(loadConfig({ ...SECRETS, REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b.internal:7001' }).redis, {
      kind: 'cluster',
      nodes: [{ host: '10.0.0.1', port: 7000 }, { host: 'redis-b.internal', port: 7001 }],
    });
    assert.deepEqual(loadConfig({ ...SECRETS, REDIS_SENTINELS: 's1:26379,s2:26379', REDIS_SENTINEL_MASTER: 'parley' }).redis, {
      kind: 'sentinel',
      sentinels: [{ host: 's1', port: 26379 }, { host: 's2', port: 26379 }],
      master: 'parley',
    });
    assert.throws(() => loadConfig({ ...SECRETS, REDIS_URL: 'redis://h:6379', REDIS_CLUSTER_NODES: 'h:7000' }), /REDIS_URL and REDIS_CLUSTER_NODES are both set/);
    assert.throws(() => loadConfig({ ...SECRETS, REDIS_CLUSTER_NODES: 'h:7000', REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_MASTER: 'm' }), /REDIS_CLUSTER_NODES and REDIS_SENTINELS are both set/);
    assert.throws(() => loadConfig({ ...SECRETS, REDIS_SENTINELS: 's:26379' }), /REDIS_SENTINELS needs REDIS_SENTINEL_MASTER/);
    assert.throws(() => loadConfig({ ...SECRETS, REDIS_SENTINEL_MASTER: 'parley' }), /REDIS_SENTINEL_MASTER is set without REDIS_SENTINELS/);
    assert.throws(() => loadConfig({ ...SECRETS, REDIS_CLUSTER_NODES: 'redis://h:7000' }), configError('REDIS_CLUSTER_NODES'));
    assert.throws(() => loadConfig({ ...SECRETS, REDIS_SENTINELS: 's:99999' }), configError('REDIS_SENTINELS'));
  });

  test('DATABASE_URL and REDIS_URL must be of their scheme; the error does not repeat the URL (it may hold a password)', () => {
    assert.throws(() => loadConfig({ ...SECRETS, DATABASE_URL: 'mysql://root:hunter2@db/x' }), (err: unknown) => {
      assert.ok(configError('DATABASE_URL')(err));
      assert.doesNotMatch((err as Error).message, /hunter2/);
      assert.match((err as Error).message, /got a mysql: URL/);
      return true;
    });
    assert.throws(() => loadConfig({ ...SECRETS, REDIS_URL: 'localhost:6379' }), configError('REDIS_URL'));
    assert.equal(loadConfig({ ...SECRETS, DATABASE_URL: 'postgresql://u:p@h:5432/d' }).databaseUrl, 'postgresql://u:p@h:5432/d');
    assert.equal(loadConfig({ ...SECRETS, REDIS_URL: 'rediss://h:6380' }).redisUrl, 'rediss://h:6380');
  });

  test('DATABASE_REPLICA_URLS: PostgreSQL URLs, not repeated in an error; refused without DATABASE_URL (the embedded database has no replicas)', () => {
    const primary = 'postgres://u:p@primary:5432/d';
    const config = loadConfig({ ...SECRETS, DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://u:p@r1:5432/d, postgresql://r2/d' });
    assert.deepEqual(config.databaseReplicaUrls, ['postgres://u:p@r1:5432/d', 'postgresql://r2/d']);
    assert.equal(config.databaseReplicaMaxLagMs, 1000);
    assert.deepEqual(loadConfig({ ...SECRETS, DATABASE_URL: primary }).databaseReplicaUrls, []);
    assert.throws(() => loadConfig({ ...SECRETS, DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://u:hunter2@r1/d,r2:5432' }), (err: unknown) => {
      assert.ok(configError('DATABASE_REPLICA_URLS')(err));
      assert.doesNotMatch((err as Error).message, /hunter2/);
      return true;
    });
    assert.throws(() => loadConfig({ ...SECRETS, DATABASE_URL: primary, DATABASE_REPLICA_MAX_LAG_MS: '0' }), configError('DATABASE_REPLICA_MAX_LAG_MS'));
    assert.throws(
      () => loadConfig({ ...SECRETS, DATABASE_REPLICA_URLS: 'postgres://r1/d' }),
      (err: unknown) => err instanceof ConfigError && /^DATABASE_REPLICA_URLS needs DATABASE_URL: the embedded database has no replicas\. Fix: /.test(err.message),
    );
  });

  test(`secrets shorter than ${SECRET_MIN_BYTES} bytes are refused with one line that does not repeat them`, () => {
    for (const name of ['CHAT_JWT_SECRET', 'CHAT_SERVER_KEY', 'BROADCAST_APP_SECRET', 'METRICS_TOKEN']) {
      const short = 's3cr3t-'.padEnd(SECRET_MIN_BYTES - 1, 'x');
      assert.throws(() => loadConfig({ ...SECRETS, [name]: short }), (err: unknown) => {
        assert.ok(configError(name)(err), String(err));
        assert.equal((err as Error).message, `${name} must be a secret of at least 32 bytes, got 31 bytes. Fix: generate one with openssl rand -hex 32.`);
        return true;
      });
      assert.doesNotThrow(() => loadConfig({ ...SECRETS, [name]: short + 'x' }));
    }
    // Bytes, not characters: 11 three-byte characters are 33 bytes.
    assert.equal(loadConfig({ ...SECRETS, CHAT_JWT_SECRET: '€'.repeat(11) }).jwtSecret, '€'.repeat(11));
  });

  test('every value of the table is read, and the configuration is frozen', () => {
    const values = readSettings({});
    assert.deepEqual(Object.keys(values), rows.map(([name]) => name));
    const config = loadConfig(SECRETS);
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.broadcast) && Object.isFrozen(config.limits) && Object.isFrozen(config.jwt));
  });
});

describe('loadConfig is pure; development secrets are a step of their own', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-config-'));
    dirs.push(dir);
    return dir;
  };
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  test('without secrets and without development secrets it is a configuration error, and it writes nothing', () => {
    const dir = dataDir();
    assert.throws(() => loadConfig({ CHAT_DATA_DIR: dir }), (err: unknown) => err instanceof ConfigError && /CHAT_JWT_SECRET, CHAT_SERVER_KEY, .* not set/.test(err.message));
    assert.deepEqual(readdirSync(dir), []);
  });

  test('loadDevSecrets generates secrets.json (0600) once, and loads the same secrets later; set values take precedence', () => {
    const dir = dataDir();
    const env = { CHAT_DATA_DIR: dir, CHAT_SERVER_KEY: SECRETS.CHAT_SERVER_KEY };
    const first = loadDevSecrets(env)!;
    assert.equal(first.created, true);
    assert.equal(first.file, join(dir, 'secrets.json'));
    assert.equal(statSync(first.file).mode & 0o777, 0o600);
    const second = loadDevSecrets(env)!;
    assert.equal(second.created, false);
    assert.deepEqual(second.secrets, first.secrets);

    const config = loadConfig(env, second.secrets);
    assert.equal(config.devSecrets, true);
    assert.equal(config.jwtSecret, first.secrets.jwtSecret);
    assert.equal(config.serverKey, SECRETS.CHAT_SERVER_KEY, 'a set value wins');
    assert.ok(Buffer.byteLength(config.broadcast.appSecret) >= SECRET_MIN_BYTES && Buffer.byteLength(config.serverKey) >= SECRET_MIN_BYTES);
  });

  test('with every secret set there are no development secrets: nothing is read or written', () => {
    const dir = dataDir();
    assert.equal(loadDevSecrets({ ...SECRETS, CHAT_DATA_DIR: dir }), null);
    assert.equal(existsSync(join(dir, 'secrets.json')), false);
    assert.equal(loadConfig({ ...SECRETS, CHAT_DATA_DIR: dir }).devSecrets, false);
  });
});

describe('the real-time server takes its defaults from the table', () => {
  afterEach(cleanup);

  test(`a frame of ${settingDefault('BROADCAST_MAX_MESSAGE_BYTES')} bytes passes a server made without options; one byte more is refused`, async () => {
    const limit = settingDefault('BROADCAST_MAX_MESSAGE_BYTES');
    const h = await start();
    const { client } = await RawClient.established(h.url());
    const ping = (size: number) => {
      const frame = JSON.stringify({ event: 'pusher:ping', data: { pad: '' } });
      return JSON.stringify({ event: 'pusher:ping', data: { pad: 'x'.repeat(size - frame.length) } });
    };
    assert.equal(ping(limit).length, limit);
    client.send(ping(limit));
    assert.equal(await client.next(), '{"event":"pusher:pong","data":{}}');
    client.send(ping(limit + 1));
    assert.equal(await client.next(), pusherError(4300, `Message too big (limit ${limit} bytes)`));
    assert.equal((await client.closed).code, 1009);
  });
});
