// The web client is built on @parley/client: the API's types come from the package (generated from src/contract
// by scripts/client-types.ts; test/client/generated-types.test.ts keeps them current), never copied into web/src;
// every call of the chat API and the socket go through the package; and no module imports server code.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from '../../testkit/root.js';

const SRC = join(ROOT, 'web', 'src');
const modules = readdirSync(SRC).filter((f) => f.endsWith('.ts'));
const source = (file: string) => readFileSync(join(SRC, file), 'utf8');

describe('web client: built on @parley/client', () => {
  test('no copy of the API types in web/src: types.ts takes them from @parley/client', () => {
    assert.deepEqual(modules.filter((f) => f.includes('generated')), []);
    assert.match(source('types.ts'), /from '@parley\/client'/);
  });

  test('the socket and the calls go through the client: no module opens pusher-js or an XMLHttpRequest, only api.ts calls fetch', () => {
    const found = modules.flatMap((f) =>
      [/from 'pusher-js'/, /\bXMLHttpRequest\b/, /\bnew WebSocket\b/, /\bfetch\(/].filter((pattern) => pattern.test(source(f))).map((pattern) => `${f}: ${pattern}`),
    );
    // api.ts: the two helpers without a token (client-config, demo sign-in), an attachment's bytes and the keepalive
    // offline signal, which the client's JSON requests do not cover.
    assert.deepEqual(found, ['api.ts: /\\bfetch\\(/']);
    assert.match(source('app.ts'), /new ParleyClient\(/);
  });

  test('no module of the web client imports server code (paths outside web/src)', () => {
    const outside = modules.flatMap((f) => [...source(f).matchAll(/\bfrom\s+'(\.\.\/[^']*)'/g)].map((m) => `${f}: ${m[1]}`));
    assert.deepEqual(outside, []);
  });
});
