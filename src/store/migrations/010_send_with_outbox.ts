import { sql, type Kysely } from 'kysely';

// Sends and their outbox rows in one statement (docs/notifications.md). With webhooks or pushes on, a batch of
// plain messages (no attachment, reply or forward) was a transaction of four round trips (begin, the send
// function, the outbox INSERT, commit); this function does the send and writes the rows in one, in the send's
// own transaction, so an acknowledged message still always has its rows.
//
// outbox: {"webhook_urls": [...], "push": bool}. A MessageSent webhook row holds what its delivery needs to
// build the payload as broadcast ("sent": the message as written; "recipient_ids": the other participants);
// a push row, the message's ids. A row that is first in its conversation's queue (or has none) is written
// leased to the caller until lease_until (null: no lease), and comes back in "outbox" for the caller to deliver
// after the commit without a claim ("waiting": how many rows were written to wait their turn instead) (src/store/outbox.ts, insertOutboxLeasingHeads, says why that is safe: the
// send holds its conversations' locks exclusively).
// One statement per query: PGlite's extended protocol takes a single statement at a time.
const statements = [
  `create or replace function parley_send_messages_with_outbox(drafts jsonb, sent_at timestamptz, outbox jsonb, lease_until timestamptz)
    returns json
    language plpgsql as $$
    declare
      written json;
      leased json;
      waiting bigint;
    begin
      written := parley_send_messages(drafts, sent_at);
      with sent as (
        select d.conversation_id, d.sender_id, d.body, (r.result->>'id')::bigint as id, r.result->>'name' as name,
          r.result->>'avatar_url' as avatar_url, r.ord
        from json_array_elements(written->'results') with ordinality as r(result, ord)
        join jsonb_to_recordset(drafts) as d(ord int, conversation_id bigint, sender_id bigint, body text) on d.ord = r.ord - 1
        where r.result->>'outcome' = 'ok' and r.result->>'id' is not null
      ),
      recipients as (
        select s.id, coalesce(jsonb_agg((x.reader->>'u')::bigint order by (x.reader->>'u')::bigint)
          filter (where (x.reader->>'u')::bigint <> s.sender_id), '[]') as ids
        from sent s
        left join json_array_elements(written->'readers') as x(reader) on (x.reader->>'c')::bigint = s.conversation_id
        group by s.id
      ),
      drafted as (
        select 'webhook' as kind, url.target, s.conversation_id, s.id,
          jsonb_build_object(
            'sent', jsonb_build_object('id', s.id, 'conversation_id', s.conversation_id, 'body', s.body,
              'sender', jsonb_build_object('id', s.sender_id, 'name', s.name, 'avatar_url', s.avatar_url), 'created_at', sent_at),
            'recipient_ids', rc.ids) as payload
        from sent s
        join recipients rc on rc.id = s.id
        cross join jsonb_array_elements_text(coalesce(outbox->'webhook_urls', '[]')) as url(target)
        union all
        select 'push', '', null, s.id,
          jsonb_build_object('conversation_id', s.conversation_id, 'message_id', s.id, 'sender_id', s.sender_id)
        from sent s
        where coalesce((outbox->>'push')::boolean, false)
      ),
      ins as (
        insert into outbox (kind, target, conversation_id, type, payload, next_attempt_at)
        select d.kind, d.target, d.conversation_id, 'MessageSent', d.payload,
          case when lease_until is not null and (d.conversation_id is null or not exists (
              select 1 from outbox e
              where e.conversation_id = d.conversation_id and e.kind = d.kind and e.target = d.target and e.failed_at is null))
            then lease_until else now() end
        from drafted d
        order by d.id, d.kind, d.target
        returning id, kind, target, conversation_id, type, payload, attempts, created_at, next_attempt_at > created_at as leased
      )
      select coalesce(json_agg(json_build_object('id', i.id, 'kind', i.kind, 'target', i.target, 'conversation_id', i.conversation_id,
          'type', i.type, 'payload', i.payload, 'attempts', i.attempts, 'created_at', i.created_at) order by i.id) filter (where i.leased), '[]'),
          count(*) filter (where not i.leased)
        into leased, waiting
        from ins i;
      -- The send function's answer as it is (its keys in their order), beside the leased rows and the count of the others.
      return json_build_object('written', written, 'outbox', leased, 'waiting', waiting);
    end
    $$`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
