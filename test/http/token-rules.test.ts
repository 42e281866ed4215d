// What a user token must be besides well signed: it expires (exp required), it lives at most CHAT_JWT_MAX_TTL_S
// (exp - iat, and exp - now), and when CHAT_JWT_ISSUER / CHAT_JWT_AUDIENCE are set its iss and aud are those.
// The tokens Parley issues itself follow the same rules, and the node's token cache refuses exactly what the
// rules refuse.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { SignJWT, decodeJwt } from 'jose';
import { MAX_TTL_CLOCK_SKEW_SECONDS, userAuthenticator } from '../../src/http/auth.js';
import { TokenCache } from '../../src/http/token-cache.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { assertError, call, newUsers } from './helpers.js';

const now = () => Math.floor(Date.now() / 1000);

/** A token signed with the app's secret, with exactly the given claims (no iat or exp unless given). */
const signed = (app: TestApp, claims: Record<string, unknown>) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(app.config.jwtSecret));

const server = (app: TestApp, method: string, path: string, body?: unknown) =>
  call(app, null, method, path, body, { 'x-chat-server-key': app.config.serverKey });

describe('user tokens must expire, and not too late', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { CHAT_JWT_MAX_TTL_S: '3600' } });
  });
  after(async () => {
    await app?.close();
  });

  test('a token without exp is 401 and the message says exp is required', async () => {
    const [u] = newUsers(1);
    const res = await call(app, await signed(app, { sub: String(u), iat: now() }), 'GET', '/conversations');
    assertError(res, 401, 'unauthenticated');
    assert.match(res.body.message, /no exp claim/);
  });

  test('exp - iat above CHAT_JWT_MAX_TTL_S is 401; exactly the maximum is accepted', async () => {
    const [u] = newUsers(1);
    const iat = now();
    const tooLong = await call(app, await signed(app, { sub: String(u), iat, exp: iat + 3601 }), 'GET', '/conversations');
    assertError(tooLong, 401, 'unauthenticated');
    assert.match(tooLong.body.message, /at most 3600 s/);
    // iat in the past: the token has little left to live, but it was made to live too long.
    const old = await call(app, await signed(app, { sub: String(u), iat: iat - 7200, exp: iat + 60 }), 'GET', '/conversations');
    assertError(old, 401, 'unauthenticated');
    assert.equal((await call(app, await signed(app, { sub: String(u), iat, exp: iat + 3600 }), 'GET', '/conversations')).status, 200);
  });

  test('without iat, exp - now above the maximum (beyond a minute of clock skew) is 401', async () => {
    const [u] = newUsers(1);
    const far = await call(app, await signed(app, { sub: String(u), exp: now() + 3600 + MAX_TTL_CLOCK_SKEW_SECONDS + 5 }), 'GET', '/conversations');
    assertError(far, 401, 'unauthenticated');
    assert.equal((await call(app, await signed(app, { sub: String(u), exp: now() + 3600 }), 'GET', '/conversations')).status, 200);
  });

  test('POST /users/{id}/tokens: ttl_seconds above the maximum is 422 naming ttl_seconds; without it the token lives min(24 h, maximum)', async () => {
    const [u] = newUsers(1);
    const refused = await server(app, 'POST', `/users/${u}/tokens`, { ttl_seconds: 3601 });
    assertError(refused, 422, 'validation_failed');
    assert.ok(refused.body.errors.ttl_seconds);
    const minted = await server(app, 'POST', `/users/${u}/tokens`, {});
    assert.equal(minted.status, 201);
    const claims = decodeJwt(minted.body.token);
    assert.equal(claims.exp! - claims.iat!, 3600);
    assert.equal((await call(app, minted.body.token, 'GET', '/conversations')).status, 200);
  });

  test('the token cache never holds a token the rules refuse, and refuses it each time', async () => {
    const [u] = newUsers(1);
    const cache = new TokenCache();
    const authenticate = userAuthenticator(app.config, app.app.database.db, cache);
    const request = (token: string) => ({ headers: { authorization: `Bearer ${token}` } }) as unknown as FastifyRequest;
    const noExp = await signed(app, { sub: String(u) });
    const tooLong = await signed(app, { sub: String(u), iat: now(), exp: now() + 7200 });
    for (let i = 0; i < 3; i++) {
      await assert.rejects(authenticate(request(noExp)), /no exp claim/);
      await assert.rejects(authenticate(request(tooLong)), /lives longer/);
    }
    assert.equal(cache.size, 0);
    assert.deepEqual(cache.stats, { hits: 0, misses: 6, verified: 0 });
  });
});

describe('CHAT_JWT_ISSUER and CHAT_JWT_AUDIENCE', () => {
  const ISSUER = 'https://app.example.com';
  const AUDIENCE = 'parley';
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { CHAT_JWT_ISSUER: ISSUER, CHAT_JWT_AUDIENCE: AUDIENCE } });
  });
  after(async () => {
    await app?.close();
  });

  const valid = (u: number, claims: Record<string, unknown> = {}) => signed(app, { sub: String(u), iat: now(), exp: now() + 600, iss: ISSUER, aud: AUDIENCE, ...claims });

  test('a token with the configured iss and aud is accepted; aud may be a list that includes it', async () => {
    const [u] = newUsers(1);
    assert.equal((await call(app, await valid(u), 'GET', '/conversations')).status, 200);
    assert.equal((await call(app, await valid(u, { aud: ['other', AUDIENCE] }), 'GET', '/conversations')).status, 200);
  });

  test('a missing or other iss is 401 naming iss', async () => {
    const [u] = newUsers(1);
    for (const iss of [undefined, 'https://evil.example.com']) {
      const res = await call(app, await valid(u, { iss }), 'GET', '/conversations');
      assertError(res, 401, 'unauthenticated');
      assert.match(res.body.message, /iss claim/);
    }
  });

  test('a missing or other aud is 401 naming aud', async () => {
    const [u] = newUsers(1);
    for (const aud of [undefined, 'someone-else', ['a', 'b']]) {
      const res = await call(app, await valid(u, { aud }), 'GET', '/conversations');
      assertError(res, 401, 'unauthenticated');
      assert.match(res.body.message, /aud claim/);
    }
  });

  test('tokens minted by POST /users/{id}/tokens carry them, and work', async () => {
    const [u] = newUsers(1);
    const minted = await server(app, 'POST', `/users/${u}/tokens`, { ttl_seconds: 600 });
    assert.equal(minted.status, 201);
    const claims = decodeJwt(minted.body.token);
    assert.equal(claims.iss, ISSUER);
    assert.equal(claims.aud, AUDIENCE);
    assert.equal((await call(app, minted.body.token, 'GET', '/conversations')).status, 200);
  });

  test('a token valid for a server without them is refused here, even after that server cached it', async () => {
    const [u] = newUsers(1);
    const plain = await signed(app, { sub: String(u), iat: now(), exp: now() + 600 });
    const lenient = userAuthenticator({ jwtSecret: app.config.jwtSecret }, app.app.database.db);
    const request = { headers: { authorization: `Bearer ${plain}` } } as unknown as FastifyRequest;
    await lenient(request);
    assertError(await call(app, plain, 'GET', '/conversations'), 401, 'unauthenticated');
  });
});
