import { sql, type Kysely } from 'kysely';
import { sendFunctionLockingAttachments } from './009_send_locks_attachments.js';

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
const HEADER = `create or replace function parley_send_messages(drafts jsonb, sent_at timestamptz) returns json
    language plpgsql as $$
    declare
      written json;`;
const OUTBOX_HEADER = `create or replace function parley_send_messages_with_outbox(drafts jsonb, sent_at timestamptz, outbox jsonb, lease_until timestamptz)
    returns json
    language plpgsql as $$
    declare
      written json;
      leased json;
      waiting bigint;`;

const LAST_CTE = `returning p.conversation_id, p.user_id, p.unread_count, p.last_read_at, p.unread_mention_count, p.muted, p.muted_until
      )
`;
const OUTBOX_CTES = `returning p.conversation_id, p.user_id, p.unread_count, p.last_read_at, p.unread_mention_count, p.muted, p.muted_until
      ),
      -- Each message's recipients: its conversation's participants but its sender (gathered once per conversation).
      participants_of as (
        select r.conversation_id, array_agg(r.user_id order by r.user_id) as ids from readers r group by r.conversation_id
      ),
      -- A MessageSent webhook row per message and URL holds what its delivery builds the payload from (the message
      -- as written, its recipients); a push row, the message's ids.
      outbox_drafts as (
        select 'webhook' as kind, url.target, i.conversation_id, i.id,
          jsonb_build_object(
            'sent', jsonb_build_object('id', i.id, 'conversation_id', i.conversation_id, 'body', c.body,
              'sender', jsonb_build_object('id', i.sender_id, 'name', u.name, 'avatar_url', u.avatar_url), 'created_at', sent_at),
            'recipient_ids', coalesce(to_jsonb(array_remove(po.ids, i.sender_id)), '[]')) as payload
        from ins i
        join numbered n on n.id = i.id
        join checked c using (ord)
        join users u on u.id = i.sender_id
        left join participants_of po on po.conversation_id = i.conversation_id
        cross join jsonb_array_elements_text(coalesce(outbox->'webhook_urls', '[]')) as url(target)
        union all
        select 'push', '', null, i.id, jsonb_build_object('conversation_id', i.conversation_id, 'message_id', i.id, 'sender_id', i.sender_id)
        from ins i
        where coalesce((outbox->>'push')::boolean, false)
      ),
      -- First in its conversation's queue (or in none): leased to the caller until lease_until (null: no lease).
      outboxed as (
        insert into outbox (kind, target, conversation_id, type, payload, next_attempt_at)
        select d.kind, d.target, d.conversation_id, 'MessageSent', d.payload,
          case when lease_until is not null and (d.conversation_id is null or ahead.id is null) then lease_until else now() end
        from outbox_drafts d
        left join lateral (
          select e.id from outbox e
          where e.conversation_id = d.conversation_id and e.kind = d.kind and e.target = d.target and e.failed_at is null
          limit 1) ahead on true
        order by d.id, d.kind, d.target
        returning id, kind, target, coalesce(payload->'sent'->>'id', payload->>'message_id')::bigint as message_id, next_attempt_at > created_at as leased
      )
`;
const ANSWER = `      ) into written;
      return written;`;
const OUTBOX_ANSWER = `      ),
      (select coalesce(json_agg(json_build_array(o.id, o.message_id, o.kind, o.target) order by o.id) filter (where o.leased), '[]') from outboxed o),
      (select count(*) filter (where not o.leased) from outboxed o)
      into written, leased, waiting;
      return json_build_object('written', written, 'outbox', leased, 'waiting', waiting, 'created_at', now());`;

/** The send function of 009 (its checks, locks and writes unchanged), writing the batch's outbox rows too. */
export function sendWithOutboxFunction(): string {
  let fn = sendFunctionLockingAttachments();
  for (const [from, to] of [[HEADER, OUTBOX_HEADER], [LAST_CTE, OUTBOX_CTES], [ANSWER, OUTBOX_ANSWER]] as const) {
    if (fn.split(from).length !== 2) throw new Error('migration 011: the send function of 009 is not the expected one');
    fn = fn.replace(from, () => to); // a function: "$$" in `to` is no replacement pattern
  }
  return fn;
}

const statements = [
  sendWithOutboxFunction(),
  `alter table outbox set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500, autovacuum_vacuum_insert_scale_factor = 0,
     autovacuum_vacuum_insert_threshold = 500, autovacuum_vacuum_cost_delay = 0)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
