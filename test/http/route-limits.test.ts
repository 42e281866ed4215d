// Rate limits over HTTP: every write of the user API, and each read that costs (searches, history pages), counts against a per-user limit (429 rate_limited with
// Retry-After and the error body once over it, nothing done), each from its own setting; failed authentications
// count per address (429 instead of 401 once over it, while requests that authenticate carry on); behind a proxy
// named in CHAT_TRUSTED_PROXIES the address is the forwarded client's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { API_PREFIX } from '../../src/http/server.js';
import { READ_LIMITS, WRITE_LIMITS, addressOf, limitOf } from '../../src/http/route-limits.js';
import { SECRETS } from '../../testkit/secrets.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { assertError, call, direct, group, newUsers, register, send, upload } from './helpers.js';

const LIMIT = 3;
const ENV = {
  CHAT_RATE_EDITS_PER_MINUTE: String(LIMIT),
  CHAT_RATE_READS_PER_MINUTE: String(LIMIT),
  CHAT_RATE_CONVERSATIONS_PER_MINUTE: String(LIMIT),
  CHAT_RATE_UPLOADS_PER_MINUTE: String(LIMIT),
  CHAT_RATE_BLOCKS_PER_MINUTE: String(LIMIT),
  CHAT_RATE_OTHER_WRITES_PER_MINUTE: String(LIMIT),
  CHAT_RATE_HEARTBEATS_PER_MINUTE: String(LIMIT),
  CHAT_RATE_AUTH_FAILURES_PER_MINUTE: String(LIMIT),
  CHAT_RATE_SEARCHES_PER_MINUTE: String(LIMIT),
  CHAT_RATE_HISTORY_PAGES_PER_MINUTE: String(LIMIT),
  CHAT_TRUSTED_PROXIES: '127.0.0.1',
};

/** A 429 as docs/api.md describes it, with a Retry-After of 1 to 60 seconds. */
function assertLimited(res: { status: number; body: any; headers: Headers }, what: string): void {
  assert.equal(res.status, 429, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
  assertError(res, 429, 'rate_limited');
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `${what}: Retry-After ${res.headers.get('retry-after')}`);
}

describe('rate limits over HTTP', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: ENV });
  });
  after(async () => {
    await app?.close();
  });

  test('a burst of edits: the first N pass, then 429 with Retry-After and nothing edited; others are not limited', async () => {
    const [a, b] = newUsers(2);
    const id = await direct(app, a, b);
    const message = await send(app, a, id, 'v0');
    for (let i = 1; i <= LIMIT; i++) assert.equal((await app.request(a, 'PATCH', `/messages/${message.id}`, { body: `v${i}` })).status, 200);
    const refused = await app.request(a, 'PATCH', `/messages/${message.id}`, { body: 'too many' });
    assertLimited(refused, 'the edit over the limit');
    assert.match(refused.body.message, /edits/);
    const stored = (await app.request(b, 'GET', `/conversations/${id}/messages`)).body.data[0];
    assert.equal(stored.body, `v${LIMIT}`, 'the refused edit changed nothing');
    // Deleting counts against the same limit; the other user's quota is untouched.
    assertLimited(await app.request(a, 'DELETE', `/messages/${message.id}`), 'a delete after the edits');
    const theirs = await send(app, b, id, 'mine');
    assert.equal((await app.request(b, 'PATCH', `/messages/${theirs.id}`, { body: 'edited' })).status, 200);
  });

  test('each write counts against its own limit', async () => {
    // Each: a fresh user, a request made LIMIT times and then once more.
    const fixtures = async (user: number) => {
      const [other, third] = newUsers(2);
      await register(app, user, other!, third!);
      const directId = await direct(app, other!, user); // opened by the other: not the user's quota
      return { other: other!, third: third!, directId };
    };
    const table: { what: string; setup: (user: number) => Promise<(i: number) => Promise<{ status: number; body: any; headers: Headers }>> }[] = [
      { what: 'read marks', setup: async (user) => { const f = await fixtures(user); return () => app.request(user, 'POST', `/conversations/${f.directId}/read`, {}); } },
      { what: 'opening direct conversations', setup: async (user) => {
        const others = newUsers(LIMIT + 1);
        await register(app, ...others);
        return (i) => app.request(user, 'POST', '/conversations', { user_id: others[i] });
      } },
      { what: 'creating groups', setup: async (user) => { const f = await fixtures(user); return () => app.request(user, 'POST', '/groups', { name: 'G', user_ids: [f.other] }); } },
      { what: 'group changes', setup: async (user) => {
        const f = await fixtures(user);
        const id = await group(app, f.other, [user, f.third]); // someone else's group: its creation is not the user's
        await app.request(f.other, 'PATCH', `/groups/${id}/participants/${user}`, { role: 'admin' });
        return (i) => app.request(user, 'PATCH', `/groups/${id}`, { name: `Name ${i}` });
      } },
      { what: 'blocks', setup: async (user) => { const f = await fixtures(user); return (i) => (i % 2 === 0 ? app.request(user, 'POST', '/blocks', { user_id: f.third }) : app.request(user, 'DELETE', `/blocks/${f.third}`)); } },
      { what: 'uploads', setup: async (user) => async () => ({ ...(await upload(app, user, 'x')), headers: new Headers() }) },
      { what: 'offline signals', setup: async (user) => { await register(app, user); return () => app.request(user, 'POST', '/presence/offline'); } },
      { what: 'message searches', setup: async (user) => { await fixtures(user); return () => app.request(user, 'GET', '/search/messages?q=hello'); } },
      { what: 'user searches (the same limit as message searches)', setup: async (user) => {
        await fixtures(user);
        return (i) => app.request(user, 'GET', i === 0 ? '/search/messages?q=hello' : '/users?query=ali');
      } },
      { what: 'history pages', setup: async (user) => { const f = await fixtures(user); return () => app.request(user, 'GET', `/conversations/${f.directId}/messages`); } },
      { what: 'reactions (another write)', setup: async (user) => {
        const f = await fixtures(user);
        const message = await send(app, f.other, f.directId, 'react to me');
        return (i) => app.request(user, i % 2 === 0 ? 'PUT' : 'DELETE', `/messages/${message.id}/reactions/${encodeURIComponent('👍')}`);
      } },
    ];
    for (const { what, setup } of table) {
      const [user] = newUsers(1);
      const request = await setup(user!);
      for (let i = 0; i < LIMIT; i++) {
        const res = await request(i);
        assert.ok(res.status < 300, `${what} #${i + 1}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      const refused = await request(LIMIT);
      if (what === 'uploads') {
        assert.equal(refused.status, 429, `${what} over the limit: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.code, 'rate_limited');
      } else {
        assertLimited(refused, `${what} over the limit`);
      }
    }
  });

  test('every write route is in the table or counts as another write; the tables name no route that does not exist', () => {
    for (const key of [...Object.keys(WRITE_LIMITS), ...Object.keys(READ_LIMITS)]) {
      const [method, path] = key.split(' ') as [string, string];
      assert.ok(app.app.http.hasRoute({ method: method as 'POST', url: `${API_PREFIX}${path}` }), `${key} is a route`);
    }
    assert.equal(limitOf('GET', '/conversations'), null, 'cheap reads are not limited');
    assert.equal(limitOf('GET', '/search/messages'), 'search');
    assert.equal(limitOf('PUT', '/some/new/endpoint'), 'write', 'an unlisted write counts as another write');
    assert.equal(limitOf('POST', '/conversations/:id/messages'), null, 'sends count in their use case');
  });

  test('failed authentications from one address: 401 up to the limit, then 429; a valid token from it still works', async () => {
    const address = '203.0.113.7';
    const from = { 'x-forwarded-for': address };
    for (let i = 0; i < LIMIT; i++) assertError(await call(app, 'not-a-token', 'GET', '/conversations', undefined, from), 401);
    assertLimited(await call(app, 'not-a-token', 'GET', '/conversations', undefined, from), 'a bad token over the limit');
    assertLimited(await call(app, null, 'GET', '/conversations', undefined, from), 'no token at all, from the same address');
    const server = { ...from, 'x-chat-server-key': 'wrong'.repeat(10) };
    assertLimited(await call(app, null, 'PUT', '/users/5', { name: 'X' }, server), 'a bad server key, from the same address');
    const [user] = newUsers(1);
    assert.equal((await call(app, await app.token(user!), 'GET', '/conversations', undefined, from)).status, 200, 'a valid token is never refused');
    assert.equal(
      (await call(app, null, 'PUT', `/users/${user}`, { name: 'Y' }, { ...from, 'x-chat-server-key': SECRETS.CHAT_SERVER_KEY })).status,
      200,
      'nor a valid server key',
    );
    // Another client behind the same (trusted) proxy has a count of its own.
    assertError(await call(app, 'not-a-token', 'GET', '/conversations', undefined, { 'x-forwarded-for': '203.0.113.8' }), 401);
  });

  test('the address: IPv4 as it is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
    const of = (ip: string) => addressOf({ ip } as never);
    assert.equal(of('203.0.113.7'), '203.0.113.7');
    assert.equal(of('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(of('2001:db8:0:12:aaaa::1'), '2001:db8:0:12::/64');
    assert.equal(of('2001:0db8:0000:0012:ffff:1:2:3'), '2001:db8:0:12::/64');
    assert.equal(of('::1'), '0:0:0:0::/64');
  });
});
