// Web Push (CHAT_VAPID_*, CHAT_PUSH_ALLOW_HTTP), put together for the composition root (src/app/delivery.ts):
// the VAPID keys, the endpoint rules for the routes, and the deliverer of a MessageSent push. In this folder:
//   subscriptions.ts   the user API's subscribe and unsubscribe (POST and DELETE /push/subscriptions)
//   audience.ts        whether any browser is subscribed (sends write 'push' rows only then)
//   deliverer.ts       the outbox's deliverer of 'push' rows
//   message-push.ts    who gets a MessageSent's push, decided at delivery, and its sending
//   endpoint-guard.ts  which endpoints Parley sends to (never a private address)
//   sender.ts, vapid.ts  one encrypted, signed request; the VAPID keys
import type { Logger } from 'pino';
import type { PushSettings } from './subscriptions.js';
import type { Config } from '../../config/index.js';
import type { OnlineStatusTracker } from '../../online-status/tracker.js';
import type { DB } from '../../store/database.js';
import type { PushAudience } from './audience.js';
import type { Resolver } from './endpoint-guard.js';
import { deliverMessagePush, type MessagePushJob } from './message-push.js';
import { createPushSender } from './sender.js';
import { loadVapidKeys } from './vapid.js';

export interface WebPush {
  readonly settings: PushSettings;
  deliverMessage(job: MessagePushJob): Promise<{ sent: number; removed: number }>;
}

export function createWebPush(options: {
  config: Config;
  db: DB;
  presence: Pick<OnlineStatusTracker, 'lastBeats'>;
  audience: PushAudience;
  logger: Logger;
  resolver?: Resolver;
}): WebPush {
  const { config, db, presence, audience, resolver } = options;
  const vapid = loadVapidKeys(config);
  const allowHttp = config.push.allowHttp;
  const send = createPushSender({ vapid, allowHttp, resolver });
  const logger = options.logger.child({ component: 'push' });
  return {
    settings: { vapidPublicKey: vapid.publicKey, allowHttp, resolver, audience },
    deliverMessage: (job) => deliverMessagePush({ db, presence, send, logger }, job),
  };
}
