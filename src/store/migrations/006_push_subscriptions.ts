import { sql, type Kysely } from 'kysely';

// Web Push subscriptions (API v1.1): one row per browser (device) a user subscribed, several per user. The
// endpoint is the push service's URL for that browser and is unique: a browser that subscribes again under
// another user (a shared computer, a new sign-in) moves the row to that user. p256dh and auth are the
// browser's keys (base64url), used to encrypt each push (RFC 8291).
// One statement per query: PGlite's extended protocol takes a single statement at a time.
const statements = [
  `create table push_subscriptions (
     id bigint generated always as identity primary key,
     user_id bigint not null references users (id) on delete cascade,
     endpoint text not null unique,
     p256dh text not null,
     auth text not null,
     created_at timestamptz not null default now()
   )`,
  `create index push_subscriptions_by_user on push_subscriptions (user_id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
