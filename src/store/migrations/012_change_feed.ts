import { sql, type Kysely } from 'kysely';

// The change feed that GET /sync reads (docs/api.md "Sync"), and who may read which part of it.
//
// sync_changes: one row per change an action caused, written in the action's transaction: a conversation's
// change once for all its participants (user_id null), a user's own change with its user_id. `tx` is the
// writing transaction's id (pg_current_xact_id, 64 bits with the epoch, so it never wraps) and `seq` orders the
// rows of one transaction. Transaction ids are taken when a transaction first locks or writes and commit out of
// order, so a reader only reads rows whose tx is below the oldest transaction still running
// (pg_snapshot_xmin): every such transaction has ended, so no row can later appear before a position handed out.
// An InboxUpdated row has no data: each reader's entry is loaded as it is at the sync. `data` is json, not jsonb:
// it is only ever passed on as the text it was written as. No index on `at`: the feed is pruned from its oldest
// transaction up, the primary key's order.
//
// sync_memberships: each span of a user's participation in a conversation, from the transaction that added them
// to the one that removed them (both included), kept by triggers on participants so that no path that adds or
// removes a participant can forget it.
const statements = [
  `create table sync_changes (
     tx bigint not null default (pg_current_xact_id()::text::bigint),
     seq bigint generated always as identity,
     conversation_id bigint,
     user_id bigint,
     type text not null,
     data json,
     at timestamptz not null default now(),
     primary key (tx, seq)
   )`,
  `create index sync_changes_of_conversation on sync_changes (conversation_id, tx, seq) where user_id is null`,
  `create index sync_changes_of_user on sync_changes (user_id, tx, seq) where user_id is not null`,
  `create table sync_memberships (
     user_id bigint not null,
     conversation_id bigint not null,
     joined_tx bigint not null,
     left_tx bigint,
     left_at timestamptz,
     primary key (user_id, conversation_id, joined_tx)
   )`,
  `create index sync_memberships_left on sync_memberships (left_at) where left_at is not null`,
  // Everyone in a conversation today was there from the start of the feed.
  `insert into sync_memberships (user_id, conversation_id, joined_tx) select user_id, conversation_id, 0 from participants`,
  `create function parley_sync_joined() returns trigger language plpgsql as $$
   begin
     insert into sync_memberships (user_id, conversation_id, joined_tx)
     select user_id, conversation_id, pg_current_xact_id()::text::bigint from joined
     on conflict do nothing;
     return null;
   end $$`,
  `create function parley_sync_left() returns trigger language plpgsql as $$
   begin
     update sync_memberships m set left_tx = pg_current_xact_id()::text::bigint, left_at = now()
     from gone where m.user_id = gone.user_id and m.conversation_id = gone.conversation_id and m.left_tx is null;
     return null;
   end $$`,
  `create trigger participants_sync_joined after insert on participants
   referencing new table as joined for each statement execute function parley_sync_joined()`,
  `create trigger participants_sync_left after delete on participants
   referencing old table as gone for each statement execute function parley_sync_left()`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
