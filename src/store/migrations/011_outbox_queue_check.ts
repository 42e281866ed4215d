import { sql, type Kysely } from 'kysely';
import { SEND_WITH_OUTBOX_FUNCTION } from './010_send_with_outbox.js';

// The send's outbox rows look for an earlier waiting row of their conversation one index probe each. In 010 the
// check was a NOT EXISTS that PostgreSQL planned, for a batch it guessed at 100 rows, as one hashed scan of every
// waiting row of the outbox: under a steady load, with the delivered rows' dead versions not yet vacuumed, that
// scan read every heap page of the table (1,500 pages, 5 ms of a 9 ms send in a measured batch of 16). A LATERAL
// lookup with LIMIT 1 cannot be turned into that scan: it probes outbox_by_conversation per row and stops at the
// first live entry.
//
// The outbox is a queue (rows live for milliseconds, then are deleted): its dead versions are vacuumed after a
// few hundred deletes instead of after a fifth of the table (PostgreSQL's default), so the index the probe reads
// stays short. The embedded PGlite has no autovacuum; the settings are kept for a move to PostgreSQL.
// One statement per query: PGlite's extended protocol takes a single statement at a time.
const NOT_EXISTS = `case when lease_until is not null and (d.conversation_id is null or not exists (
              select 1 from outbox e
              where e.conversation_id = d.conversation_id and e.kind = d.kind and e.target = d.target and e.failed_at is null))
            then lease_until else now() end
        from drafted d`;
const LATERAL_PROBE = `case when lease_until is not null and (d.conversation_id is null or ahead.id is null)
            then lease_until else now() end
        from drafted d
        left join lateral (
          select e.id from outbox e
          where e.conversation_id = d.conversation_id and e.kind = d.kind and e.target = d.target and e.failed_at is null
          limit 1) ahead on true`;

export function sendWithOutboxProbingQueues(): string {
  if (SEND_WITH_OUTBOX_FUNCTION.split(NOT_EXISTS).length !== 2) throw new Error('migration 011: the send function of 010 is not the expected one');
  return SEND_WITH_OUTBOX_FUNCTION.replace(NOT_EXISTS, LATERAL_PROBE);
}

const statements = [
  sendWithOutboxProbingQueues(),
  `alter table outbox set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, autovacuum_vacuum_insert_scale_factor = 0,
     autovacuum_vacuum_insert_threshold = 500, autovacuum_vacuum_cost_delay = 0)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
