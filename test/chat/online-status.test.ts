// The presence sweep, with the database away: an expiry it could not announce is kept for a later sweep.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { pino } from 'pino';
import { createSendQueue } from '../../src/chat/messages.js';
import type { ChatContext } from '../../src/chat/context.js';
import { createOnlineStatusService } from '../../src/chat/online-status.js';
import { memoryRateLimiter, NO_RATE_LIMITS } from '../../src/chat/rate-limiter.js';
import { loadConfig } from '../../src/config/index.js';
import { createBroadcaster } from '../../src/events/broadcaster.js';
import { memoryOnlineStatusTracker } from '../../src/online-status/tracker.js';
import type { Schema } from '../../src/store/schema.js';
import { SECRETS } from '../../testkit/secrets.js';

test('an offline the sweep could not announce (database down) is announced by a later sweep, not lost', async () => {
  // Port 1 on loopback: nothing listens, so every query fails as when PostgreSQL is down.
  const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 500 });
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  const sent: unknown[] = [];
  const broadcaster = createBroadcaster({ publish: (_c, _e, data) => void sent.push(JSON.parse(data)), unsubscribeUser: () => {}, disconnectUser: () => {} }, pino({ level: 'silent' }));
  const ctx: ChatContext = {
    db,
    broadcaster,
    limits: loadConfig(SECRETS).limits,
    rateLimiter: memoryRateLimiter(NO_RATE_LIMITS),
    sends: createSendQueue({ db, broadcaster }, { lanes: 1 }),
  };
  const tracker = memoryOnlineStatusTracker(1_000);
  const presence = createOnlineStatusService(tracker);
  await tracker.beat(7, Date.now() - 5_000);

  assert.deepEqual(await presence.sweep(ctx), [], 'nothing could be announced');
  assert.deepEqual(sent, []);
  assert.deepEqual(await tracker.expire(), [7], 'the user is still due for an offline announcement');
  await db.destroy();
});
