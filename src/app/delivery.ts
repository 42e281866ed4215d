// What happened, delivered outside the sockets: the outbox's worker of this node, the host app's webhooks
// (CHAT_WEBHOOK_*) and Web Push (CHAT_VAPID_*). Rows are written in each action's transaction; the worker
// delivers them after.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Notifications } from '../delivery/index.js';
import { createNotifications } from '../delivery/index.js';
import { outboxMetrics } from '../delivery/outbox-metrics.js';
import { createOutboxWorker, type OutboxWorker } from '../delivery/outbox-worker.js';
import { loadWebhookSecret, webhookDeliverer } from '../delivery/host-webhooks.js';
import type { Metrics } from '../ops/metrics.js';
import type { OnlineStatusTracker } from '../online-status/tracker.js';
import { pushAudience } from '../delivery/web-push/audience.js';
import { createWebPush, type WebPush } from '../delivery/web-push/index.js';
import { PUSH_OUTBOX_KIND, pushDeliverer } from '../delivery/web-push/deliverer.js';
import type { Database } from '../store/database.js';

export interface Delivery {
  readonly outbox: OutboxWorker;
  /** What the chat's actions call to write their outbox rows. */
  readonly notifications: Notifications;
  readonly push: WebPush;
}

export function startDelivery(config: Config, database: Database, online: OnlineStatusTracker, metrics: Metrics, logger: Logger): Delivery {
  const db = database.db;
  const outbox = createOutboxWorker({ db, logger, events: outboxMetrics(metrics.registry, db) });
  // push: a 'push' row for each MessageSent while any browser is subscribed, delivered by src/delivery/web-push (which
  // decides the recipients at delivery).
  const pushSubscribers = pushAudience(db);
  const notifications = createNotifications({ webhookUrls: config.webhooks.urls, push: () => pushSubscribers.any(), worker: outbox });
  const push = createWebPush({ config, db, presence: online, audience: pushSubscribers, logger });
  outbox.register({ kind: PUSH_OUTBOX_KIND, deliver: pushDeliverer(push) });
  if (config.webhooks.urls.length > 0) {
    outbox.register(
      webhookDeliverer({
        secret: loadWebhookSecret(config),
        async offline(userIds) {
          const beats = await online.lastBeats(userIds);
          return userIds.filter((id) => !beats.has(id));
        },
      }),
    );
  }
  return { outbox, notifications, push };
}
