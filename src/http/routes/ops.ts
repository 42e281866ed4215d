// Operations endpoints, outside the API prefix: liveness, readiness, Prometheus metrics.
import type { FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../../ops/metrics.js';

export interface OpsDeps {
  readonly metrics: Metrics;
  /** Each dependency's check: resolves when reachable. */
  readonly checks: Record<string, () => Promise<void>>;
}

const withTimeout = (check: Promise<void>, ms: number) =>
  Promise.race([check, new Promise<void>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref())]);

export const opsRoutes: FastifyPluginAsync<OpsDeps> = async (app, { metrics, checks }) => {
  app.get('/healthz', { schema: { hide: true }, logLevel: 'warn' }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
    const results: Record<string, string> = {};
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        results[name] = await withTimeout(check(), 2_000).then(
          () => 'ok',
          (err: unknown) => `unavailable: ${(err as Error).message}`,
        );
      }),
    );
    const ready = Object.values(results).every((r) => r === 'ok');
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks: results });
  });

  app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) =>
    reply.header('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
};
