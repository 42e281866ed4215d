// Operations endpoints, outside the API prefix: liveness, readiness, Prometheus metrics.
//
// Who may read what:
//  - /healthz: anyone (load balancers).
//  - /readyz: anyone gets the status (200 or 503) and which check failed, so a load balancer or an orchestrator
//    can route on it; the reasons (addresses, driver errors) only an operator gets.
//  - /metrics: an operator only.
// An operator: with METRICS_TOKEN set, a request with `Authorization: Bearer <METRICS_TOKEN>`; without it, a
// client on this host (a loopback address) that did not come through a proxy (no forwarding header), such as a
// Prometheus or a curl on the machine itself.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Metrics } from '../../ops/metrics.js';

export interface OpsDeps {
  readonly metrics: Metrics;
  /** Each dependency's check: resolves when reachable. */
  readonly checks: Record<string, () => Promise<void>>;
  /** METRICS_TOKEN; null: operators are the loopback clients. */
  readonly metricsToken: string | null;
}

const withTimeout = (check: Promise<void>, ms: number) =>
  Promise.race([check, new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref())]);

/** 127.0.0.0/8, ::1, and IPv4 loopback as an IPv6-mapped address. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Headers a reverse proxy adds: a request carrying one came from elsewhere, whatever its socket says. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'];

export function operatorCheck(metricsToken: string | null): (request: FastifyRequest) => boolean {
  const expected = metricsToken === null ? null : Buffer.from(`Bearer ${metricsToken}`);
  return (request) => {
    if (expected !== null) {
      const given = Buffer.from(request.headers.authorization ?? '');
      return given.length === expected.length && timingSafeEqual(given, expected);
    }
    return isLoopback(request.socket.remoteAddress) && FORWARDING_HEADERS.every((h) => request.headers[h] === undefined);
  };
}

export const opsRoutes: FastifyPluginAsync<OpsDeps> = async (app, { metrics, checks, metricsToken }) => {
  const isOperator = operatorCheck(metricsToken);

  app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    const detailed = isOperator(request);
    const results: Record<string, string> = {};
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        results[name] = await withTimeout(check(), 2_000).then(
          () => 'ok',
          (err: unknown) => (detailed ? `unavailable: ${(err as Error).message}` : 'unavailable'),
        );
      }),
    );
    const ready = Object.values(results).every((r) => r === 'ok');
    return reply.status(ready ? 200 : 503).header('Cache-Control', 'no-store').send({ status: ready ? 'ready' : 'unavailable', checks: results });
  });

  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (request, reply) => {
    if (!isOperator(request)) {
      if (metricsToken !== null) {
        return reply
          .status(401)
          .header('WWW-Authenticate', 'Bearer realm="metrics"')
          .send({ message: 'Metrics need Authorization: Bearer <METRICS_TOKEN>.', code: 'unauthenticated' });
      }
      return reply.status(403).send({
        message: 'Metrics are served to this host only (loopback, not through a proxy). Set METRICS_TOKEN to scrape them from elsewhere.',
        code: 'forbidden',
      });
    }
    return reply.header('Content-Type', metrics.registry.contentType).header('Cache-Control', 'no-store').send(await metrics.registry.metrics());
  });
};
