// The outbox's metrics (docs/deployment.md lists every metric): rows waiting, delivered, failed for good, and
// the age of the oldest waiting row, by kind where it applies.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DB } from '../store/database.js';
import { outboxBacklog } from '../store/outbox.js';
import type { OutboxEvents } from './outbox-worker.js';

export function outboxMetrics(registry: Registry, db: DB): OutboxEvents {
  const delivered = new Counter({ name: 'parley_outbox_delivered_total', help: 'Outbox rows delivered (webhooks, pushes), by kind', labelNames: ['kind'], registers: [registry] });
  const retried = new Counter({ name: 'parley_outbox_retries_total', help: 'Outbox deliveries that failed and were scheduled again, by kind', labelNames: ['kind'], registers: [registry] });
  const failed = new Counter({ name: 'parley_outbox_failed_total', help: 'Outbox rows given up after 24 h of retries, by kind', labelNames: ['kind'], registers: [registry] });
  let backlog: Promise<{ pending: number; oldest: Date | null }> | null = null;
  // One query per scrape for both gauges.
  const read = () => (backlog ??= outboxBacklog(db).finally(() => setTimeout(() => (backlog = null), 100).unref()));
  new Gauge({
    name: 'parley_outbox_pending',
    help: 'Outbox rows waiting to be delivered (all nodes)',
    registers: [registry],
    async collect() {
      this.set((await read().catch(() => ({ pending: 0 }))).pending);
    },
  });
  new Gauge({
    name: 'parley_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest outbox row waiting to be delivered, 0 when none',
    registers: [registry],
    async collect() {
      const { oldest } = await read().catch(() => ({ oldest: null }));
      this.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
    },
  });
  return {
    delivered: (kind) => delivered.inc({ kind }),
    retried: (kind) => retried.inc({ kind }),
    failed: (kind) => failed.inc({ kind }),
  };
}
