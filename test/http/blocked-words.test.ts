// CHAT_BLOCKED_WORDS through the API (docs/api.md "Blocked words"): a message, a thread reply or an edit holding a
// blocked word or phrase as a whole word, whatever its case and accents, is refused 422 blocked_word and nothing
// is written or changed; a word that only contains one passes. The words given in the variable and those of an
// `@/path` file block alike; a file that cannot be read stops the start with a configuration error that names it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../src/config/settings.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, direct, history, newUsers, send } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'parley-blocked-'));
const file = join(dir, 'words.txt');
writeFileSync(file, 'Crème\nbad thing\n');
after(() => rmSync(dir, { recursive: true, force: true }));

// The same list given both ways: the variable's words and the file's.
const SETTINGS = { 'comma-separated': ' Crème ,bad thing', '@file': `@${file}` };

for (const database of DATABASES) {
  for (const [form, setting] of Object.entries(SETTINGS)) {
    describe(`blocked words, ${form} (${database})`, () => {
      let app: TestApp;
      before(async () => {
        app = await startTestApp({ database, env: { CHAT_BLOCKED_WORDS: setting } });
      });
      after(async () => {
        await app?.close();
      });

      test('a send holding a blocked word or phrase, in any case or accents, is refused 422 blocked_word; a word containing one passes', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a!, b!);
        for (const body of ['la CREME de la creme', 'a crème brûlée?', 'such a Bad  THING!']) {
          assertError(await app.request(a!, 'POST', `/conversations/${id}/messages`, { body }), 422, 'blocked_word');
        }
        const root = await send(app, a!, id, 'cremes and crèmerie, a bad day, one thing');
        assertError(await app.request(b!, 'POST', `/conversations/${id}/messages`, { body: 'Crème', thread_id: root.id }), 422, 'blocked_word');
        assert.deepEqual((await history(app, a!, id)).data.map((m: any) => m.body), ['cremes and crèmerie, a bad day, one thing'], 'nothing refused was written');
      });

      test('an edit bringing in a blocked word is refused 422 blocked_word and the message keeps its body', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a!, b!);
        const message = await send(app, a!, id, 'a fine body');
        assertError(await app.request(a!, 'PATCH', `/messages/${message.id}`, { body: 'a BAD thing' }), 422, 'blocked_word');
        assert.equal((await history(app, a!, id)).data[0].body, 'a fine body');
        assert.equal((await app.request(a!, 'PATCH', `/messages/${message.id}`, { body: 'a finer body' })).status, 200);
      });
    });
  }
}

test('CHAT_BLOCKED_WORDS=@ a file that cannot be read: the start stops with a configuration error naming it', async () => {
  const missing = join(dir, 'missing.txt');
  await assert.rejects(startTestApp({ env: { CHAT_BLOCKED_WORDS: `@${missing}` } }), (err: unknown) => {
    assert.ok(err instanceof ConfigError, String(err));
    assert.match(err.message, /^CHAT_BLOCKED_WORDS names a file that cannot be read: .*missing\.txt \(ENOENT\)\. Fix: /);
    return true;
  });
});
