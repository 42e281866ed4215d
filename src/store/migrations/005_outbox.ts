import { sql, type Kysely } from 'kysely';

// The transactional outbox (API v1.1, docs/notifications.md): a row per notification to deliver, written in
// the same transaction as the action it tells of, so an acknowledged action always has its rows and a rolled
// back one never has. `kind` names the deliverer (src/notifications/outbox-worker.ts: 'webhook', 'push', ...),
// `target` what it delivers to (a webhook URL; '' when the kind needs none), `payload` what it needs. Rows of a
// conversation are delivered in id order: a row waits while an earlier row of the same conversation and kind
// and target is still in the table. Delivered rows are deleted; given-up rows are kept with failed_at set.
// One statement per query: PGlite's extended protocol takes a single statement at a time.
const statements = [
  `create table outbox (
     id bigint generated always as identity primary key,
     kind text not null,
     target text not null default '',
     conversation_id bigint,
     type text not null,
     payload jsonb not null,
     attempts integer not null default 0,
     next_attempt_at timestamptz not null default now(),
     created_at timestamptz not null default now(),
     last_error text,
     failed_at timestamptz
   )`,
  `create index outbox_due on outbox (next_attempt_at, id) where failed_at is null`,
  `create index outbox_by_conversation on outbox (conversation_id, kind, target, id) where failed_at is null`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
