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

// The leased rows come back as [outbox id, message id, kind, target] (and the rows' created_at once): the
// caller holds the rest of each row (the message as written, its recipients) already, so the payloads are not
// turned into JSON a second time and sent back (about half a millisecond of a batch of 16, measured alone).
const RETURNING = `returning id, kind, target, conversation_id, type, payload, attempts, created_at, next_attempt_at > created_at as leased`;
const COMPACT_RETURNING = `returning id, kind, target, coalesce(payload->'sent'->>'id', payload->>'message_id')::bigint as message_id, next_attempt_at > created_at as leased`;
const LEASED_ROWS = `select coalesce(json_agg(json_build_object('id', i.id, 'kind', i.kind, 'target', i.target, 'conversation_id', i.conversation_id,
          'type', i.type, 'payload', i.payload, 'attempts', i.attempts, 'created_at', i.created_at) order by i.id) filter (where i.leased), '[]'),`;
const COMPACT_LEASED_ROWS = `select coalesce(json_agg(json_build_array(i.id, i.message_id, i.kind, i.target) order by i.id) filter (where i.leased), '[]'),`;
const ANSWER = `return json_build_object('written', written, 'outbox', leased, 'waiting', waiting);`;
const COMPACT_ANSWER = `return json_build_object('written', written, 'outbox', leased, 'waiting', waiting, 'created_at', now());`;

// A message's recipients: in 010 they were gathered per message, in a subquery that PostgreSQL, guessing one
// message, ran again for every message of the batch (0.9 ms of a 1.5 ms outbox write for 16 messages, measured
// in the ingest bench); gathered once per conversation, each message's are its conversation's less its sender.
const RECIPIENTS_PER_MESSAGE = `recipients as (
        select s.id, coalesce(jsonb_agg((x.reader->>'u')::bigint order by (x.reader->>'u')::bigint)
          filter (where (x.reader->>'u')::bigint <> s.sender_id), '[]') as ids
        from sent s
        left join json_array_elements(written->'readers') as x(reader) on (x.reader->>'c')::bigint = s.conversation_id
        group by s.id
      ),`;
const RECIPIENTS_PER_CONVERSATION = `participants_of as materialized (
        select (x.reader->>'c')::bigint as conversation_id, array_agg((x.reader->>'u')::bigint order by (x.reader->>'u')::bigint) as ids
        from json_array_elements(written->'readers') as x(reader)
        group by 1
      ),
      recipients as materialized (
        select s.id, coalesce(to_jsonb(array_remove(po.ids, s.sender_id)), '[]') as ids
        from sent s
        left join participants_of po on po.conversation_id = s.conversation_id
      ),`;

export function sendWithOutboxProbingQueues(): string {
  let fn = SEND_WITH_OUTBOX_FUNCTION;
  for (const [from, to] of [[RECIPIENTS_PER_MESSAGE, RECIPIENTS_PER_CONVERSATION], [NOT_EXISTS, LATERAL_PROBE], [RETURNING, COMPACT_RETURNING], [LEASED_ROWS, COMPACT_LEASED_ROWS], [ANSWER, COMPACT_ANSWER]] as const) {
    if (fn.split(from).length !== 2) throw new Error('migration 011: the send function of 010 is not the expected one');
    fn = fn.replace(from, to);
  }
  return fn;
}

const statements = [
  sendWithOutboxProbingQueues(),
  `alter table outbox set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, autovacuum_vacuum_insert_scale_factor = 0,
     autovacuum_vacuum_insert_threshold = 500, autovacuum_vacuum_cost_delay = 0)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
