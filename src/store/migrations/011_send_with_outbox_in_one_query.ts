import { sql, type Kysely } from 'kysely';

// A batch of plain messages and its outbox rows, still in one statement (docs/notifications.md), now written by
// the send's own query: the rows are drafted from the messages as inserted and the participants as updated
// (its `ins` and `readers`), where 010 called the send function and then took its JSON answer apart again
// (parsing it twice, and gathering each message's recipients in a subquery that PostgreSQL ran again for every
// message of the batch). The ingest bench, per batch of 16 (pg_stat_statements): the outbox part 1.5 ms in 010.
//
// The queue check (is an earlier row of this conversation, kind and target still waiting?) is one index probe
// per row, a LATERAL lookup with LIMIT 1: 010's NOT EXISTS could be planned, for a batch PostgreSQL guessed at
// 100 rows, as one hashed scan of every waiting row (5 ms of a 9 ms send with 14,000 rows waiting, measured).
//
// The function answers the send function's answer as it is ("written"), the rows leased to the caller as
// [outbox id, message id, kind, target] ("outbox"; the caller holds the rest of each row already, and builds
// their payloads as stored here: src/store/messages.ts, sentOutboxPayload), how many rows were written to wait
// their turn ("waiting"), and the rows' created_at.
//
// The outbox is a queue (rows live for milliseconds, then are deleted): its dead versions are vacuumed after a
// few hundred deletes instead of after a fifth of the table (PostgreSQL's default), so the index the probe reads
// stays short. The embedded PGlite has no autovacuum; the settings are kept for a move to PostgreSQL.
// One statement per query: PGlite's extended protocol takes a single statement at a time.
// It built that function by patching 009's text; the function now lives, as it runs, in
// src/store/functions/send-messages-with-outbox.ts, a repeatable definition applied after the migrations (a fresh
// database gets it there, and a database that ran this migration before has the same text already).
const statements = [
  `alter table outbox set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, autovacuum_vacuum_insert_scale_factor = 0,
     autovacuum_vacuum_insert_threshold = 500, autovacuum_vacuum_cost_delay = 0)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
