// Search (API v1.1): GET /search/messages (every word of q as a word prefix, case- and accent-insensitive,
// only conversations the caller is in now, deleted messages never, newest first, paged) and GET /users (the
// name search of "new chat" pickers). Every test searches for words of its own, so tests sharing an app
// stay independent.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertHistoryItem, assertKeys, direct, group, history, newUsers, register, send, USER_KEYS } from './helpers.js';

/** A word no other test uses: letters only (one token for the parser), e.g. "qzkxwbtrmd". */
function word(): string {
  return 'qz' + [...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('');
}

const enc = encodeURIComponent;

async function search(app: TestApp, userId: number, q: string, extra = ''): Promise<{ data: any[]; meta: { next_cursor: string | null } }> {
  const res = await app.request(userId, 'GET', `/search/messages?q=${enc(q)}${extra}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

const bodies = (page: { data: any[] }) => page.data.map((m) => m.body);

for (const database of DATABASES) {
  describe(`search (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    describe('GET /search/messages', () => {
      test('finds words by their beginnings, not by their middles', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const w = word();
        await send(app, a, id, `Planning the ${w} tomorrow`);
        assert.deepEqual(bodies(await search(app, b, w)), [`Planning the ${w} tomorrow`]);
        assert.equal((await search(app, b, w.slice(0, 5))).data.length, 1, 'a word prefix');
        assert.equal((await search(app, b, `${w}x`)).data.length, 0, 'longer than the word');
        assert.equal((await search(app, b, w.slice(2))).data.length, 0, 'the middle of a word');
      });

      test('every word of q is required, in any order', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const w = word();
        await send(app, a, id, `${w} apple pie`);
        await send(app, a, id, `${w} banana split`);
        await send(app, b, id, `apple crumble, no ${w.slice(0, 6)}`);
        assert.deepEqual(bodies(await search(app, a, `${w} apple`)), [`${w} apple pie`]);
        assert.deepEqual(bodies(await search(app, a, `split ${w}`)), [`${w} banana split`]);
        assert.deepEqual(bodies(await search(app, a, `  ${w}   pie  `)), [`${w} apple pie`], 'spaces around and between words');
        assert.equal((await search(app, a, `${w} apple banana`)).data.length, 0);
        assert.deepEqual(bodies(await search(app, a, w)), [`${w} banana split`, `${w} apple pie`]);
      });

      test('case- and accent-insensitive, both ways', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const w = word();
        await send(app, a, id, `Le Café ${w} est OUVERT`);
        await send(app, a, id, `plain cafe ${w}`);
        await send(app, a, id, `Straße Ærøskøbing Łódź ${w}`);
        await send(app, a, id, `De\u0301ja\u0300 vu ${w}`); // decomposed accents (NFD)
        const both = [`plain cafe ${w}`, `Le Café ${w} est OUVERT`];
        assert.deepEqual(bodies(await search(app, b, `cafe ${w}`)), both);
        assert.deepEqual(bodies(await search(app, b, `Café ${w}`)), both);
        assert.deepEqual(bodies(await search(app, b, `CAFÉ ${w.toUpperCase()}`)), both);
        assert.deepEqual(bodies(await search(app, b, `caf ${w}`)), both);
        assert.deepEqual(bodies(await search(app, b, `ouvert ${w}`)), [`Le Café ${w} est OUVERT`]);
        assert.equal((await search(app, b, `strasse aeroskobing lodz ${w}`)).data.length, 1);
        assert.equal((await search(app, b, `STRASSE ${w}`)).data.length, 1);
        assert.equal((await search(app, b, `déjà ${w}`)).data.length, 1);
        assert.equal((await search(app, b, `deja ${w}`)).data.length, 1);
      });

      test('items are history items plus highlight: ranges of the body where the words are', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const w = word();
        const sent = await send(app, a, id, `Café au lait? ${w}-style, CAFÉ ${w}s`);
        const page = await search(app, b, `caf ${w}`);
        assert.equal(page.data.length, 1);
        const [hit] = page.data;
        assertKeys(hit, [...Object.keys((await history(app, b, id)).data[0]), 'highlight'], 'search item');
        const { highlight, ...item } = hit;
        assertHistoryItem(item);
        assert.deepEqual(item, (await history(app, b, id)).data.find((m: any) => m.id === sent.id), 'the same item as history');
        for (const range of highlight) assertKeys(range, ['end', 'start'], 'highlight range');
        assert.deepEqual(
          highlight.map((r: any) => hit.body.slice(r.start, r.end)),
          ['Caf', w, 'CAF', w],
          'each word that a search word begins, up to the end of the match',
        );
        // Ranges are UTF-16 offsets: an emoji before the word shifts them by two.
        const v = word();
        await send(app, a, id, `😀 ${v}`);
        const [emoji] = (await search(app, b, v)).data;
        assert.deepEqual(emoji.highlight, [{ start: 3, end: 3 + v.length }]);
      });

      test('only the conversations the caller is in now: a member removed, or who left, finds nothing there', async () => {
        const [owner, member, leaver, outsider] = newUsers(4);
        await register(app, outsider);
        const id = await group(app, owner, [member, leaver]);
        const w = word();
        await send(app, owner, id, `group secret ${w}`);
        for (const user of [owner, member, leaver]) assert.equal((await search(app, user, w)).data.length, 1);
        assert.equal((await search(app, outsider, w)).data.length, 0, 'an outsider finds nothing');

        assert.equal((await app.request(owner, 'DELETE', `/groups/${id}/participants/${member}`)).status, 204);
        assert.equal((await search(app, member, w)).data.length, 0, 'removed: found no more');
        assertError(await app.request(member, 'GET', `/search/messages?q=${w}&conversation_id=${id}`), 404, 'not_found');

        assert.equal((await app.request(leaver, 'POST', `/groups/${id}/leave`)).status, 204);
        assert.equal((await search(app, leaver, w)).data.length, 0, 'left: found no more');
        assert.equal((await search(app, owner, w)).data.length, 1);
      });

      test('deleted messages are never found; an edit is found by its new words only', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const w = word();
        const gone = await send(app, a, id, `delete me ${w}`);
        const kept = await send(app, a, id, `keep me ${w}`);
        assert.equal((await app.request(a, 'DELETE', `/messages/${gone.id}`)).status, 204);
        assert.deepEqual((await search(app, b, w)).data.map((m) => m.id), [kept.id]);
        assert.equal((await search(app, b, `delete ${w}`)).data.length, 0);

        const v = word();
        assert.equal((await app.request(a, 'PATCH', `/messages/${kept.id}`, { body: `edited ${v}` })).status, 200);
        assert.equal((await search(app, b, w)).data.length, 0, 'the old words are gone');
        const [edited] = (await search(app, b, v)).data;
        assert.deepEqual([edited.id, edited.body, typeof edited.edited_at], [kept.id, `edited ${v}`, 'string']);
      });

      test('newest first, paged with cursor and limit', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const w = word();
        const sent = [];
        for (let i = 1; i <= 5; i++) sent.push(await send(app, i % 2 ? a : b, id, `${w} number ${i}`));
        const ids = sent.map((m) => m.id).reverse();
        const seen: number[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await search(app, a, w, `&limit=2${cursor ? `&cursor=${enc(cursor)}` : ''}`);
          assert.ok(page.data.length <= 2);
          seen.push(...page.data.map((m) => m.id));
          cursor = page.meta.next_cursor;
          pages++;
        } while (cursor !== null);
        assert.deepEqual(seen, ids);
        assert.equal(pages, 3);
        const all = await search(app, a, w);
        assert.deepEqual(all.data.map((m) => m.id), ids, 'default limit: all five, newest first');
        assert.equal(all.meta.next_cursor, null);
      });

      test('conversation_id narrows the search to one conversation', async () => {
        const [a, b, c] = newUsers(3);
        const one = await direct(app, a, b);
        const two = await direct(app, a, c);
        const w = word();
        await send(app, a, one, `${w} in one`);
        await send(app, a, two, `${w} in two`);
        assert.equal((await search(app, a, w)).data.length, 2);
        assert.deepEqual(bodies(await search(app, a, w, `&conversation_id=${one}`)), [`${w} in one`]);
        assert.deepEqual(bodies(await search(app, a, w, `&conversation_id=${two}`)), [`${w} in two`]);
      });

      test('q is words, never query syntax', async () => {
        const [a, b] = newUsers(2);
        const id = await direct(app, a, b);
        const w = word();
        await send(app, a, id, `it's ${w} (really) & more!`);
        for (const q of [`${w} & !really`, `${w}:*`, `'${w}'`, `${w} | nothing`, `"${w}" \\`, `it's ${w}`, `(${w})`, `${w}'':* | !x`]) {
          const res = await app.request(b, 'GET', `/search/messages?q=${enc(q)}`);
          assert.equal(res.status, 200, `${q}: ${JSON.stringify(res.body)}`);
        }
        assert.equal((await search(app, b, `${w} & !really`)).data.length, 1, '& and ! are not operators: "really" is required');
        assert.equal((await search(app, b, `${w} | nothing`)).data.length, 0, '| is not "or"');
        assert.equal((await search(app, b, `it's ${w}`)).data.length, 1);
      });

      test('bad input is 422; a conversation the caller is not in is 404; no token is 401', async () => {
        const [a, b, outsider] = newUsers(3);
        await register(app, outsider);
        const id = await direct(app, a, b);
        const long = 'a'.repeat(1000);
        for (const query of ['', 'q=', `q=${enc('   ')}`, `q=${enc('!!! ...')}`, `q=${long}`, `q=${enc('é'.repeat(1000))}`, 'q=a%00b', 'q=x&cursor=nope', `q=x&cursor=${Buffer.from('m-1').toString('base64url')}`,
          'q=x&limit=0', 'q=x&limit=101', 'q=x&conversation_id=abc', 'q=x&conversation_id=0']) {
          const res = await app.request(a, 'GET', `/search/messages?${query}`);
          assertError(res, 422, 'validation_failed');
        }
        assert.equal((await app.request(a, 'GET', `/search/messages?q=${'a'.repeat(999)}`)).status, 200, '999 characters are fine');
        assert.deepEqual(Object.keys((await app.request(a, 'GET', '/search/messages?q=')).body.errors), ['q']);
        assert.deepEqual(Object.keys((await app.request(a, 'GET', '/search/messages?q=x&cursor=nope')).body.errors), ['cursor']);
        assertError(await app.request(outsider, 'GET', `/search/messages?q=x&conversation_id=${id}`), 404, 'not_found');
        assertError(await app.request(a, 'GET', `/search/messages?q=x&conversation_id=999999999`), 404, 'not_found');
        assertError(await app.request(null, 'GET', '/search/messages?q=x'), 401);
      });
    });

    describe('GET /users', () => {
      /** Registers a user with a name (from the token's claims) and returns the id. */
      async function named(name: string): Promise<number> {
        const [id] = newUsers(1);
        await app.token(id, name);
        await register(app, id);
        return id;
      }
      async function find(userId: number, query: string, extra = ''): Promise<{ data: any[]; meta: { next_cursor: string | null } }> {
        const res = await app.request(userId, 'GET', `/users?query=${enc(query)}${extra}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        for (const user of res.body.data) assertKeys(user, USER_KEYS, 'UserResource');
        return res.body;
      }
      const names = (page: { data: any[] }) => page.data.map((u) => u.name);

      test('names with a word starting with each word of query, case- and accent-insensitive', async () => {
        const w = word();
        const zoe = await named(`Zoë ${w}`);
        const zoran = await named(`Zoran ${w}son`);
        await named(`Anna ${w}`);
        const [me] = newUsers(1);
        assert.deepEqual(names(await find(me, `zoe ${w}`)), [`Zoë ${w}`]);
        assert.deepEqual(names(await find(me, `ZOË ${w}`)), [`Zoë ${w}`]);
        assert.deepEqual(names(await find(me, `zo ${w}`)).sort(), [`Zoran ${w}son`, `Zoë ${w}`].sort());
        assert.deepEqual(names(await find(me, `${w}son`)), [`Zoran ${w}son`]);
        assert.equal((await find(me, w)).data.length, 3, 'any word of the name');
        assert.equal((await find(me, `${w} oran`)).data.length, 0, 'word beginnings only');
        const [found] = (await find(me, `zoe ${w}`)).data;
        assert.deepEqual(found, { id: zoe, name: `Zoë ${w}`, avatar_url: null });
        assert.ok(zoran > zoe);
      });

      test('ordered by name, paged with cursor and limit', async () => {
        const w = word();
        for (const name of ['Carla', 'álvaro', 'Bea', 'Ana', 'Ana']) await named(`${name} ${w}`);
        const [me] = newUsers(1);
        const seen: string[] = [];
        const ids: number[] = [];
        let cursor: string | null = null;
        do {
          const page = await find(me, w, `&limit=2${cursor ? `&cursor=${enc(cursor)}` : ''}`);
          seen.push(...names(page));
          ids.push(...page.data.map((u) => u.id));
          cursor = page.meta.next_cursor;
        } while (cursor !== null);
        // By the folded name: "álvaro" as "alvaro", before "ana".
        assert.deepEqual(seen, ['álvaro', 'Ana', 'Ana', 'Bea', 'Carla'].map((n) => `${n} ${w}`));
        assert.equal(new Set(ids).size, 5);
        assert.ok(ids[1]! < ids[2]!, 'equal names by id');
      });

      test('names that begin with a word of query come first, then the others; paging crosses from one to the other', async () => {
        const w = word();
        for (const name of [`Amy ${w}`, `${w}a Bob`, `${w} Zed`, `Émile ${w}`]) await named(name);
        const [me] = newUsers(1);
        const expected = [`${w} Zed`, `${w}a Bob`, `Amy ${w}`, `Émile ${w}`];
        assert.deepEqual(names(await find(me, w)), expected);
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page = await find(me, w, `&limit=1${cursor ? `&cursor=${enc(cursor)}` : ''}`);
          seen.push(...names(page));
          cursor = page.meta.next_cursor;
        } while (cursor !== null);
        assert.deepEqual(seen, expected);
      });

      test('bad input is 422; no token is 401', async () => {
        const [me] = newUsers(1);
        for (const query of ['', 'query=', `query=${enc('  ')}`, `query=${enc('--')}`, `query=${'a'.repeat(201)}`, 'query=a%00b', 'query=a&cursor=nope',
          `query=a&cursor=${Buffer.from('[1,2]').toString('base64url')}`, `query=a&cursor=${Buffer.from('[2,"a",2]').toString('base64url')}`, 'query=a&limit=0', 'query=a&limit=101']) {
          assertError(await app.request(me, 'GET', `/users?${query}`), 422, 'validation_failed');
        }
        assertError(await app.request(null, 'GET', '/users?query=a'), 401);
      });
    });
  });
}
