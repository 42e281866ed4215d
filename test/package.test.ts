// The Node.js versions Parley supports (package.json engines: 20.19+, 22.12+ and 24) are ones every installed
// dependency accepts, so `npm install` prints no EBADENGINE warning on any of them. content-disposition 3 and
// cookie 2 (of @fastify/static and fastify's light-my-request) want Node 22: package.json overrides them with
// content-disposition 2.0.1 and cookie 1.1.1, the same API (create; stringifySetCookie) for Node 18 and up.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from '../testkit/root.js';

type Version = [number, number, number];

const parse = (v: string): (number | null)[] => v.replace(/^v/, '').split('.').map((p) => (p === 'x' || p === '*' || p === '' ? null : Number(p)));
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/** Does version satisfy one comparator of an npm range (">=20.19", "^22.12.0", "20", "4.x", "<25")? */
function satisfiesComparator(version: Version, comparator: string): boolean {
  const [, op = '', rest] = /^(>=|<=|>|<|=|\^|~)?(.*)$/.exec(comparator)!;
  const parts = parse(rest);
  const known = parts.findIndex((p) => p === null);
  const given = known < 0 ? parts.length : known;
  const low = [0, 1, 2].map((i) => (i < given ? (parts[i] as number) : 0)) as Version;
  switch (op) {
    case '>=':
      return compare(version, low) >= 0;
    case '>':
      return compare(version, low) > 0;
    case '<':
      return compare(version, low) < 0;
    case '<=':
      return compare(version, low) <= 0;
    case '^':
      return compare(version, low) >= 0 && version[0] === low[0];
    case '~':
      return compare(version, low) >= 0 && version[0] === low[0] && (given < 2 || version[1] === low[1]);
    default: // "20", "4.x", "1.2.3": the versions that start so
      return [0, 1, 2].every((i) => i >= given || version[i] === low[i]);
  }
}

/** npm's range: alternatives split by ||, each a list of comparators that must all hold. */
export function satisfies(version: string, range: string): boolean {
  const v = parse(version) as Version;
  return range
    .split('||')
    .map((alternative) => alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1'))
    .some((alternative) => alternative === '' || alternative === '*' || alternative.split(/\s+/).every((c) => satisfiesComparator(v, c)));
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string }; overrides: Record<string, string> };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};

/** The first and a late release of each supported line. */
const SUPPORTED = ['20.19.0', '20.20.2', '22.12.0', '22.20.0', '24.0.0', '24.11.0'];
const UNSUPPORTED = ['18.20.0', '20.18.3', '21.7.0', '22.11.0', '23.5.0', '25.0.0'];

describe('Node.js versions', () => {
  test('the range checker reads npm ranges as npm does', () => {
    assert.ok(satisfies('20.19.0', '^20.19.0 || >=22.12.0'));
    assert.ok(!satisfies('21.0.0', '^20.19.0 || >=22.12.0'));
    assert.ok(satisfies('22.12.0', '^20.19.0 || >=22.12.0'));
    assert.ok(!satisfies('20.20.2', '>=22'));
    assert.ok(satisfies('20.20.2', '18 || 20 || >=22') && !satisfies('21.1.0', '18 || 20 || >=22'));
    assert.ok(satisfies('24.0.0', '>= 10.x') && satisfies('6.1.0', '4.x || >=6.0.0') && !satisfies('5.0.0', '4.x || >=6.0.0'));
    assert.ok(satisfies('16.0.0', '>=16 || 14 >=14.17') && !satisfies('14.16.0', '>=16 || 14 >=14.17'));
  });

  test('engines names Node 20 (20.19+), 22 (22.12+) and 24, and this process runs on one of them', () => {
    for (const version of SUPPORTED) assert.ok(satisfies(version, pkg.engines.node), `${version} is supported`);
    for (const version of UNSUPPORTED) assert.ok(!satisfies(version, pkg.engines.node), `${version} is not`);
    assert.ok(satisfies(process.versions.node, pkg.engines.node), `this Node.js (${process.versions.node})`);
  });

  test('every installed dependency accepts every supported version: no EBADENGINE warning from npm install', () => {
    const refusals: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
      // Optional packages of other platforms (rolldown's bindings for macOS, Windows, WebAssembly) are not installed here.
      if (path === '' || range === undefined || !existsSync(join(ROOT, path))) continue;
      for (const version of SUPPORTED) if (!satisfies(version, range)) refusals.push(`${path}@${entry.version} wants node ${range}, not ${version}`);
    }
    assert.deepEqual(refusals, []);
  });

  test('the overridden packages still have what their users import', () => {
    assert.deepEqual(pkg.overrides, { 'content-disposition': '2.0.1', cookie: '1.1.1' });
    const fromStatic = createRequire(join(ROOT, 'node_modules/@fastify/static/index.js'));
    assert.equal(typeof (fromStatic('content-disposition') as { create: unknown }).create, 'function');
    const fromInject = createRequire(join(ROOT, 'node_modules/light-my-request/lib/cookies.js'));
    assert.equal(typeof (fromInject('cookie') as { stringifySetCookie: unknown }).stringifySetCookie, 'function');
  });
});
