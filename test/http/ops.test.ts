// The operations endpoints are not open to whoever reaches the port: /metrics (and the reasons behind a failed
// /readyz) are for operators, which means a bearer METRICS_TOKEN when it is set, or else a client on this host
// that did not come through a proxy. /healthz and /readyz's status stay open for load balancers.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { opsRoutes } from '../../src/http/routes/ops.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { startTestApp, type TestApp } from '../support/app.js';

const METRICS_TOKEN = 'metrics-token-for-the-ops-test-0123456789';

/** This machine's address on a non-loopback interface, if it has one: a request to it does not come from loopback. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address;

const get = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
  return { status: res.status, headers: res.headers, text: await res.text() };
};

describe('ops endpoints without METRICS_TOKEN: /metrics for this host only', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { HOST: '0.0.0.0' } });
  });
  after(async () => {
    await app?.close();
  });

  test('a client on loopback gets /metrics', async () => {
    const res = await get(`${app.baseUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.text, /parley_/);
  });

  test('a request that came through a proxy (a forwarding header) is refused with 403 saying how to open it', async () => {
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip']) {
      const res = await get(`${app.baseUrl}/metrics`, { [header]: header === 'forwarded' ? 'for=203.0.113.9' : '203.0.113.9' });
      assert.equal(res.status, 403, header);
      assert.equal(JSON.parse(res.text).code, 'forbidden');
      assert.match(JSON.parse(res.text).message, /METRICS_TOKEN/);
    }
  });

  test('a client from another address is refused /metrics; /healthz and /readyz answer it', { skip: externalAddress === undefined && 'no non-loopback IPv4 interface' }, async () => {
    const base = `http://${externalAddress}:${app.port}`;
    assert.equal((await get(`${base}/metrics`)).status, 403);
    assert.equal((await get(`${base}/healthz`)).status, 200);
    const ready = await get(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(JSON.parse(ready.text), { status: 'ready', checks: { database: 'ok' } });
  });
});

describe('ops endpoints with METRICS_TOKEN', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { METRICS_TOKEN } });
  });
  after(async () => {
    await app?.close();
  });

  test('/metrics needs Authorization: Bearer <METRICS_TOKEN>, from loopback too', async () => {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong' }, { authorization: `Bearer ${METRICS_TOKEN}x` }, { authorization: METRICS_TOKEN }]) {
      const res = await get(`${app.baseUrl}/metrics`, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="metrics"');
      assert.equal(JSON.parse(res.text).code, 'unauthenticated');
    }
    const res = await get(`${app.baseUrl}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` });
    assert.equal(res.status, 200);
    assert.match(res.text, /parley_/);
  });

  test('/healthz needs no token', async () => {
    assert.equal((await get(`${app.baseUrl}/healthz`)).status, 200);
  });
});

describe('/readyz tells why a check failed only to an operator', () => {
  const checks = { database: async () => {}, redis: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.5:6379')) };
  const metrics = createMetrics({ realtime: () => null, databasePool: () => null, redisUp: () => false, clusterReceived: () => null });

  for (const [what, metricsToken, request, detailed] of [
    ['a stranger, no token configured', null, { remoteAddress: '203.0.113.9' }, false],
    ['loopback, no token configured', null, { remoteAddress: '127.0.0.1' }, true],
    ['loopback through a proxy', null, { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } }, false],
    ['loopback without the configured token', METRICS_TOKEN, { remoteAddress: '127.0.0.1' }, false],
    ['a stranger with the token', METRICS_TOKEN, { remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${METRICS_TOKEN}` } }, true],
  ] as const) {
    test(`${what}: 503 naming the check${detailed ? ', with the reason' : ', without the reason'}`, async () => {
      const app = Fastify();
      await app.register(opsRoutes, { metrics, checks, metricsToken });
      const res = await app.inject({ method: 'GET', url: '/readyz', ...request });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), {
        status: 'unavailable',
        checks: { database: 'ok', redis: detailed ? 'unavailable: connect ECONNREFUSED 10.0.0.5:6379' : 'unavailable' },
      });
      await app.close();
    });
  }
});
