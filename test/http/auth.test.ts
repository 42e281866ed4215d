// Identity and auth over HTTP: user requests carry an HS256 JWT (sub = user id, optional name and avatar_url
// claims, exp honoured); the host app's backend uses X-Chat-Server-Key for PUT /users/{id} and token minting.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT, decodeJwt } from 'jose';
import { createTokenIssuer, type TokenIssuer } from '../../src/http/auth.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, assertKeys, call, ISO_UTC, newUsers, USER_KEYS } from './helpers.js';

for (const database of DATABASES) {
  describe(`auth (${database})`, () => {
    let app: TestApp;
    let issuer: TokenIssuer;
    before(async () => {
      app = await startTestApp({ database });
      issuer = createTokenIssuer(app.config.jwtSecret);
    });
    after(async () => {
      await app?.close();
    });

    const sign = (claims: Record<string, unknown>, secret = app.config.jwtSecret, exp: number | string = '1h') =>
      new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime(exp).sign(new TextEncoder().encode(secret));
    const server = (method: string, path: string, body?: unknown, key: string | null = app.config.serverKey) =>
      call(app, null, method, path, body, key === null ? {} : { 'x-chat-server-key': key });
    /** The peer's profile as the other side of a direct conversation sees it. */
    async function profileSeenBy(viewer: number, userId: number): Promise<unknown> {
      // Not through the direct() helper: it would make userId known with the harness's own token (and name).
      const res = await app.request(viewer, 'POST', '/conversations', { user_id: userId });
      assert.ok(res.status === 201 || res.status === 200, JSON.stringify(res.body));
      return res.body.data.participants_preview.find((p: any) => p.id === userId);
    }

    describe('user tokens', () => {
      test('a request without a token is 401 unauthenticated', async () => {
        assertError(await call(app, null, 'GET', '/conversations'), 401, 'unauthenticated');
        assertError(await call(app, null, 'GET', '/conversations', undefined, { authorization: 'Basic dXNlcjpwYXNz' }), 401, 'unauthenticated');
        assertError(await call(app, null, 'GET', '/conversations', undefined, { authorization: 'Bearer' }), 401, 'unauthenticated');
      });

      test('a malformed token or one signed with another secret is 401', async () => {
        const [u] = newUsers(1);
        assertError(await call(app, 'not-a-jwt', 'GET', '/conversations'), 401, 'unauthenticated');
        assertError(await call(app, await sign({ sub: String(u) }, 'some-other-secret-entirely'), 'GET', '/conversations'), 401, 'unauthenticated');
        const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub: String(u) })).toString('base64url')}.`;
        assertError(await call(app, unsigned, 'GET', '/conversations'), 401, 'unauthenticated');
      });

      test('an expired token is 401 and says so', async () => {
        const [u] = newUsers(1);
        const expired = await sign({ sub: String(u) }, app.config.jwtSecret, Math.floor(Date.now() / 1000) - 3600);
        const res = await call(app, expired, 'GET', '/conversations');
        assertError(res, 401, 'unauthenticated');
        assert.match(res.body.message, /expired/i);
      });

      test('sub must be a positive integer user id', async () => {
        for (const claims of [{}, { sub: '0' }, { sub: '-5' }, { sub: 'alice' }, { sub: '1.5' }, { sub: '99999999999999999999' }, { sub: 42 }]) {
          assertError(await call(app, await sign(claims), 'GET', '/conversations'), 401, 'unauthenticated');
        }
      });

      test('a valid token works, and the user seen first in it is created from its claims', async () => {
        const [viewer, u] = newUsers(2);
        const { token } = await issuer.issue(u, { name: 'Alice', avatarUrl: 'https://example.test/alice.png' });
        const res = await call(app, token, 'GET', '/conversations');
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.data, []);
        assert.equal(res.body.meta.next_cursor, null);
        assert.deepEqual(await profileSeenBy(viewer, u), { id: u, name: 'Alice', avatar_url: 'https://example.test/alice.png', role: 'member' });
      });

      test('a later token’s name claim updates the stored user; a token without one leaves it', async () => {
        const [viewer, u] = newUsers(2);
        await call(app, (await issuer.issue(u, { name: 'Bob' })).token, 'GET', '/blocks');
        await call(app, (await issuer.issue(u, { name: 'Robert' })).token, 'GET', '/blocks');
        assert.deepEqual(await profileSeenBy(viewer, u), { id: u, name: 'Robert', avatar_url: null, role: 'member' });
        await call(app, (await issuer.issue(u)).token, 'GET', '/blocks');
        assert.deepEqual(await profileSeenBy(viewer, u), { id: u, name: 'Robert', avatar_url: null, role: 'member' });
      });

      test('a NUL character in a claim cannot break the request', async () => {
        const [viewer, u] = newUsers(2);
        const res = await call(app, await sign({ sub: String(u), name: 'Eve\u0000' }), 'GET', '/conversations');
        assert.equal(res.status, 200);
        assert.deepEqual(await profileSeenBy(viewer, u), { id: u, name: 'Eve', avatar_url: null, role: 'member' });
      });

      test('a name claim longer than PUT /users takes (200 characters) is cut to 200; an avatar_url claim too long is ignored', async () => {
        const [viewer, u, v] = newUsers(3);
        // 9,000 characters (a token must fit in 16 KiB of headers); the 200th is two UTF-16 units, so the cut is between characters, not inside one.
        const long = `${'a'.repeat(199)}\u{1F600}${'b'.repeat(8_800)}`;
        const first = await call(app, await sign({ sub: String(u), name: long, avatar_url: `https://example.test/${'a'.repeat(2100)}` }), 'GET', '/blocks');
        assert.equal(first.status, 200);
        assert.deepEqual(await profileSeenBy(viewer, u), { id: u, name: `${'a'.repeat(199)}\u{1F600}`, avatar_url: null, role: 'member' });
        // The same claim again is the profile as stored: nothing to write.
        assert.equal((await call(app, await sign({ sub: String(u), name: long }), 'GET', '/blocks')).status, 200);
        // At the limit, nothing is cut.
        await call(app, await sign({ sub: String(v), name: 'n'.repeat(200), avatar_url: 'https://example.test/v.png' }), 'GET', '/blocks');
        assert.deepEqual(await profileSeenBy(viewer, v), { id: v, name: 'n'.repeat(200), avatar_url: 'https://example.test/v.png', role: 'member' });
      });

      test('a user token does not open server routes', async () => {
        const [u] = newUsers(1);
        const token = await app.token(u);
        assertError(await call(app, token, 'PUT', `/users/${u}`, { name: 'Self-made' }), 401, 'unauthenticated');
        assertError(await call(app, token, 'POST', `/users/${u}/tokens`, {}), 401, 'unauthenticated');
      });
    });

    describe('server routes (X-Chat-Server-Key)', () => {
      test('PUT /users/{id} creates a user with 201, then updates it with 200', async () => {
        const [u] = newUsers(1);
        const created = await server('PUT', `/users/${u}`, { name: 'Carol', avatar_url: 'https://example.test/c.png' });
        assert.equal(created.status, 201);
        assertKeys(created.body, ['data']);
        assertKeys(created.body.data, USER_KEYS, 'UserResource');
        assert.deepEqual(created.body.data, { id: u, name: 'Carol', avatar_url: 'https://example.test/c.png' });

        const renamed = await server('PUT', `/users/${u}`, { name: 'Caroline' });
        assert.equal(renamed.status, 200);
        assert.deepEqual(renamed.body.data, { id: u, name: 'Caroline', avatar_url: 'https://example.test/c.png' });

        const cleared = await server('PUT', `/users/${u}`, { name: 'Caroline', avatar_url: null });
        assert.equal(cleared.status, 200);
        assert.deepEqual(cleared.body.data, { id: u, name: 'Caroline', avatar_url: null });
      });

      test('a user made by the server is known to others at once', async () => {
        const [viewer, u] = newUsers(2);
        await server('PUT', `/users/${u}`, { name: 'Dave' });
        const res = await app.request(viewer, 'POST', '/conversations', { user_id: u });
        assert.equal(res.status, 201);
        assert.ok(res.body.data.participants_preview.some((p: any) => p.id === u && p.name === 'Dave'));
      });

      test('POST /users/{id}/tokens mints a token with 201 that works as that user', async () => {
        const [u] = newUsers(1);
        const res = await server('POST', `/users/${u}/tokens`, { ttl_seconds: 600 });
        assert.equal(res.status, 201);
        assertKeys(res.body, ['expires_at', 'token']);
        assert.match(res.body.expires_at, ISO_UTC);
        const claims = decodeJwt(res.body.token);
        assert.equal(claims.sub, String(u));
        assert.equal(claims.exp, Math.floor(Date.parse(res.body.expires_at) / 1000));
        assert.equal(claims.exp! - claims.iat!, 600);

        const used = await call(app, res.body.token, 'GET', '/conversations');
        assert.equal(used.status, 200);
      });

      test('the token body is optional; ttl_seconds must be between 60 s and CHAT_JWT_MAX_TTL_S, with one message above it', async () => {
        const [u] = newUsers(1);
        assert.equal((await server('POST', `/users/${u}/tokens`)).status, 201);
        assert.equal((await server('POST', `/users/${u}/tokens`, {})).status, 201);
        for (const ttl of [59, 31_536_001, 'long']) {
          const res = await server('POST', `/users/${u}/tokens`, { ttl_seconds: ttl });
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors.ttl_seconds);
        }
        // One upper limit: a lifetime over a year and one just over the maximum get the same answer.
        const max = app.config.jwt.maxTtlSeconds;
        const answers = await Promise.all([max + 1, 5_000_000, 99_999_999].map((ttl) => server('POST', `/users/${u}/tokens`, { ttl_seconds: ttl })));
        for (const res of answers) {
          assertError(res, 422, 'validation_failed');
          assert.deepEqual(res.body.errors.ttl_seconds, [`ttl_seconds must be at most ${max}, the longest token lifetime this server accepts (CHAT_JWT_MAX_TTL_S).`]);
        }
      });

      test('a wrong or missing server key is 401', async () => {
        const [u] = newUsers(1);
        for (const key of [null, '', 'wrong-key', `${app.config.serverKey}x`]) {
          assertError(await server('PUT', `/users/${u}`, { name: 'X' }, key), 401, 'unauthenticated');
          assertError(await server('POST', `/users/${u}/tokens`, {}, key), 401, 'unauthenticated');
        }
        // Nothing was created.
        const [viewer] = newUsers(1);
        assertError(await app.request(viewer, 'POST', '/conversations', { user_id: u }), 404, 'not_found');
      });

      test('PUT /users/{id} validates its input (422 naming the field) and its id (404)', async () => {
        const [u] = newUsers(1);
        const cases: [unknown, string][] = [
          [{}, 'name'],
          [{ name: ['a', 'b'] }, 'name'],
          [{ name: 'x'.repeat(201) }, 'name'],
          [{ name: 'ok', avatar_url: 'x'.repeat(2049) }, 'avatar_url'],
          [{ name: 'nul\u0000' }, 'name'],
        ];
        for (const [body, field] of cases) {
          const res = await server('PUT', `/users/${u}`, body);
          assertError(res, 422, 'validation_failed');
          assert.ok(res.body.errors[field], `${JSON.stringify(body)} names ${field}`);
        }
        assertError(await server('PUT', '/users/0', { name: 'Zero' }), 404, 'not_found');
        assertError(await server('PUT', '/users/abc', { name: 'Abc' }), 404, 'not_found');
      });
    });
  });
}
