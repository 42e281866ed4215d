import { sql, type Kysely } from 'kysely';

// Moderation and the audit log (docs/api.md: Moderation; docs/deployment.md: Audit log).
//
// message_reports: a user's report of a message, once per reporter and message; the server's queue reads the
// open (or resolved) ones oldest first. group_bans: who may not be added to a group again, until `until` (null:
// until unbanned). user_bans: users banned from the whole service (their tokens refused, nobody may message them),
// until `until` (null: until unbanned).
//
// conversations.slow_mode_s / frozen: a group's sending rules; participants.last_sent_at: when the participant
// last sent there, for slow mode (kept by the send function, src/store/functions/send.ts).
//
// audit_log: who did what to whom, written in the same transaction as the action; no foreign keys, so an entry
// outlives the group, message or user it names. Read newest first, overall, by actor or by conversation.
const statements = [
  `create table message_reports (
     id bigserial primary key,
     message_id bigint not null references messages (id) on delete cascade,
     conversation_id bigint not null references conversations (id) on delete cascade,
     reporter_id bigint not null references users (id),
     reason text not null check (reason in ('spam', 'abuse', 'other')),
     note text,
     status text not null default 'open' check (status in ('open', 'resolved')),
     action text check (action in ('dismiss', 'delete_message', 'ban_user')),
     created_at timestamptz not null default now(),
     resolved_at timestamptz,
     unique (message_id, reporter_id)
   )`,
  `create index message_reports_queue on message_reports (status, id)`,
  `create table group_bans (
     conversation_id bigint not null references conversations (id) on delete cascade,
     user_id bigint not null references users (id),
     banned_by bigint references users (id),
     reason text,
     until timestamptz,
     created_at timestamptz not null default now(),
     primary key (conversation_id, user_id)
   )`,
  `create table user_bans (
     user_id bigint primary key references users (id),
     reason text,
     until timestamptz,
     created_at timestamptz not null default now()
   )`,
  `alter table conversations
     add column slow_mode_s integer not null default 0 check (slow_mode_s between 0 and 3600),
     add column frozen boolean not null default false`,
  `alter table participants add column last_sent_at timestamptz`,
  `create table audit_log (
     id bigserial primary key,
     at timestamptz not null default now(),
     actor_id bigint,
     action text not null,
     conversation_id bigint,
     target_user_id bigint,
     message_id bigint,
     details jsonb not null default '{}'
   )`,
  `create index audit_log_by_actor on audit_log (actor_id, id)`,
  `create index audit_log_by_conversation on audit_log (conversation_id, id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
