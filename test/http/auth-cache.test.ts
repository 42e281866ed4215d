// The node's token and user cache (src/http/token-cache.ts) through the real app: a cached token still
// expires at its exp, a tampered one is still refused, new claims still update the user, and a PUT /users on
// this node is what later tokens are compared with.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { userAuthenticator } from '../../src/http/auth.js';
import { stillValid, TokenCache } from '../../src/http/token-cache.js';
import { LruCache } from '../../src/util/lru-cache.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, call, newUsers } from './helpers.js';

const sign = (secret: string, claims: Record<string, unknown>, exp: number | string = '1h') =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(exp).sign(new TextEncoder().encode(secret));

const sleepUntil = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms - Date.now())));

for (const database of DATABASES) {
  describe(`auth cache (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    const token = (claims: Record<string, unknown>, exp?: number | string) => sign(app.config.jwtSecret, claims, exp);
    const server = (method: string, path: string, body?: unknown) => call(app, null, method, path, body, { 'x-chat-server-key': app.config.serverKey });
    const stored = (id: number) => app.app.database.db.selectFrom('users').select(['name', 'avatar_url']).where('id', '=', id).executeTakeFirst();

    test('a token used again is not verified again', async () => {
      const [u] = newUsers(1);
      const cache = new TokenCache();
      const authenticate = userAuthenticator(app.config, app.app.database.db, cache);
      const request = { headers: { authorization: `Bearer ${await token({ sub: String(u), name: 'Once' })}` } } as unknown as FastifyRequest;
      for (let i = 0; i < 5; i++) {
        await authenticate(request);
        assert.equal(request.actor.userId, u);
      }
      assert.deepEqual(cache.stats, { hits: 4, misses: 1, verified: 1 });
      assert.deepEqual(await stored(u), { name: 'Once', avatar_url: null });
    });

    test('requests with a new token arriving together share one verification; a refused token refuses each of them', async () => {
      const [u] = newUsers(1);
      const cache = new TokenCache();
      const authenticate = userAuthenticator(app.config, app.app.database.db, cache);
      const request = async (jwt: string) => {
        const r = { headers: { authorization: `Bearer ${jwt}` } } as unknown as FastifyRequest;
        await authenticate(r);
        return r.actor.userId;
      };
      const jwt = await token({ sub: String(u), name: 'Together' });
      assert.deepEqual(await Promise.all([request(jwt), request(jwt), request(jwt)]), [u, u, u]);
      assert.equal(cache.stats.verified, 1);
      const forged = `${jwt.slice(0, -2)}xx`;
      const refused = await Promise.allSettled([request(forged), request(forged)]);
      assert.deepEqual(refused.map((r) => r.status), ['rejected', 'rejected']);
      assert.equal(cache.stats.verified, 1, 'a refused token is not kept');
      assert.equal(await request(jwt), u, 'and the good one still passes');
    });

    test('a cached token is refused from its exp on, as jose refuses it', async () => {
      const [u] = newUsers(1);
      const exp = Math.floor(Date.now() / 1000) + 2;
      const shortLived = await token({ sub: String(u) }, exp);
      assert.equal((await call(app, shortLived, 'GET', '/blocks')).status, 200);
      assert.equal((await call(app, shortLived, 'GET', '/blocks')).status, 200);
      await sleepUntil(exp * 1000);
      const res = await call(app, shortLived, 'GET', '/blocks');
      assertError(res, 401, 'unauthenticated');
      assert.match(res.body.message, /expired/i);
    });

    test('a token altered after the original was cached is refused', async () => {
      const [u, other] = newUsers(2);
      const original = await token({ sub: String(u), name: 'Mallory' });
      assert.equal((await call(app, original, 'GET', '/blocks')).status, 200);
      const [header, payload, signature] = original.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const otherPayload = Buffer.from(JSON.stringify({ ...claims, sub: String(other) })).toString('base64url');
      const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
      for (const tampered of [`${header}.${otherPayload}.${signature}`, `${header}.${payload}.${flipped}`, `${original}x`]) {
        assertError(await call(app, tampered, 'GET', '/blocks'), 401, 'unauthenticated');
      }
      assert.equal(await stored(other), undefined);
      assert.equal((await call(app, original, 'GET', '/blocks')).status, 200);
    });

    test('a new token with a changed name or avatar updates the stored user; the old one used again restores its own', async () => {
      const [u] = newUsers(1);
      const bob = await token({ sub: String(u), name: 'Bob' });
      await call(app, bob, 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'Bob', avatar_url: null });
      await call(app, await token({ sub: String(u), name: 'Robert', avatar_url: 'https://example.test/r.png' }), 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'Robert', avatar_url: 'https://example.test/r.png' });
      // As before the cache: claims that differ from what this node knows are written.
      await call(app, bob, 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'Bob', avatar_url: 'https://example.test/r.png' });
    });

    test('PUT /users/{id}, then a token without claims: the PUT’s profile stays', async () => {
      const [u] = newUsers(1);
      const bare = await token({ sub: String(u) });
      await call(app, bare, 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: '', avatar_url: null });
      assert.equal((await server('PUT', `/users/${u}`, { name: 'From the server', avatar_url: 'https://example.test/s.png' })).status, 200);
      await call(app, bare, 'GET', '/blocks');
      await call(app, await token({ sub: String(u) }), 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'From the server', avatar_url: 'https://example.test/s.png' });
    });

    test('PUT /users/{id} on this node, then a cached token whose claims differ from it: the claims are written again', async () => {
      const [u] = newUsers(1);
      const alice = await token({ sub: String(u), name: 'Alice' });
      await call(app, alice, 'GET', '/blocks');
      await server('PUT', `/users/${u}`, { name: 'Alicia' });
      assert.deepEqual(await stored(u), { name: 'Alicia', avatar_url: null });
      await call(app, alice, 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'Alice', avatar_url: null });
      // A token that says what the PUT said writes nothing; neither does the one after.
      await server('PUT', `/users/${u}`, { name: 'Alicia' });
      await call(app, await token({ sub: String(u), name: 'Alicia' }), 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'Alicia', avatar_url: null });
    });

    test('a write this node did not make (another node’s PUT) is not undone by claims this node already applied', async () => {
      const [u] = newUsers(1);
      const carol = await token({ sub: String(u), name: 'Carol' });
      await call(app, carol, 'GET', '/blocks');
      await app.app.database.db.updateTable('users').set({ name: 'Set elsewhere' }).where('id', '=', u).execute();
      await call(app, carol, 'GET', '/blocks');
      await call(app, await token({ sub: String(u), name: 'Carol' }), 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'Set elsewhere', avatar_url: null });
      // Claims that are news to this node are still written.
      await call(app, await token({ sub: String(u), name: 'Caroline' }), 'GET', '/blocks');
      assert.deepEqual(await stored(u), { name: 'Caroline', avatar_url: null });
    });

    test('a user the token creates exists for others at once, and keeps existing on later requests', async () => {
      const [viewer, u] = newUsers(2);
      const dave = await token({ sub: String(u), name: 'Dave' });
      for (let i = 0; i < 3; i++) assert.equal((await call(app, dave, 'GET', '/conversations')).status, 200);
      const res = await app.request(viewer, 'POST', '/conversations', { user_id: u });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.ok(res.body.data.participants_preview.some((p: any) => p.id === u && p.name === 'Dave'));
    });
  });
}

describe('auth cache: separate apps in one process', () => {
  let first: TestApp;
  let second: TestApp;
  before(async () => {
    [first, second] = await Promise.all([startTestApp(), startTestApp()]);
  });
  after(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  test('what one app knows about a user does not stand for another app’s database', async () => {
    const [viewer, u] = newUsers(2);
    const shared = await sign(first.config.jwtSecret, { sub: String(u), name: 'Twice' });
    assert.equal(first.config.jwtSecret, second.config.jwtSecret);
    assert.equal((await call(first, shared, 'GET', '/blocks')).status, 200);
    assert.equal((await call(second, shared, 'GET', '/blocks')).status, 200);
    const res = await second.request(viewer, 'POST', '/conversations', { user_id: u });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  });
});

describe('token cache pieces', () => {
  test('a cached token is valid exactly while jose accepts it', async () => {
    const secret = 'a-secret-for-the-boundary-test-of-32-bytes';
    const key = new TextEncoder().encode(secret);
    const exp = Math.floor(Date.now() / 1000) + 100;
    const jwt = await sign(secret, { sub: '1' }, exp);
    for (const nowMs of [exp * 1000 - 1001, exp * 1000 - 1, exp * 1000, exp * 1000 + 1, exp * 1000 + 999, exp * 1000 + 1000]) {
      const jose = await jwtVerify(jwt, key, { algorithms: ['HS256'], currentDate: new Date(nowMs) }).then(
        () => true,
        (err: unknown) => (err instanceof joseErrors.JWTExpired ? false : Promise.reject(err)),
      );
      assert.equal(stillValid({ userId: 1, exp, claims: {} }, nowMs), jose, `at ${nowMs - exp * 1000} ms from exp`);
    }
  });

  test('LruCache keeps the most recently used entries up to its capacity', () => {
    const cache = new LruCache<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    assert.equal(cache.get('a'), 1);
    cache.set('d', 4);
    assert.equal(cache.size, 3);
    assert.equal(cache.get('b'), undefined);
    assert.deepEqual(['a', 'c', 'd'].map((k) => cache.get(k)), [1, 3, 4]);
    cache.set('c', 30);
    cache.set('e', 5);
    assert.equal(cache.get('a'), undefined);
    assert.equal(cache.get('c'), 30);
  });

  test('the token cache is bounded', () => {
    const cache = new TokenCache(2);
    for (const t of ['t1', 't2', 't3']) cache.set(t, { userId: 1, exp: Math.floor(Date.now() / 1000) + 3600, claims: {} });
    assert.equal(cache.size, 2);
    assert.equal(cache.get('t1'), undefined);
    assert.ok(cache.get('t3'));
  });
});
