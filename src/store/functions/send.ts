// parley_send(drafts, sent_at, record), as it runs: the send of many messages in one statement, with its record
// (src/store/messages.ts, writeMessages). It locks the drafts' conversations (write lock, ascending id), then the
// attachments they send (key share, ascending id: a send waits for an attachment sweep that is deleting one, and
// its check then finds it gone), checks each draft's rules (see DraftOutcome) against what is committed, inserts
// the drafts that pass with ids in the drafts' order, moves each conversation's last message and activity, grows
// every other participant's unread counts (thread replies do neither: src/chat/threads.ts keeps their threads), and
// answers all of it with the conversations' previews.
//
// With record.payloads (one MessageSent payload per draft, JSON, as the caller built it for the socket), it also
// records what happened, in the same statement: the change feed's rows (each message's MessageSent, its payload
// completed with the id and sender the write gave it; then InboxUpdated once per conversation), and from those
// very rows the outbox's: a MessageSent webhook per message and record.webhook_urls entry ({data, recipient_ids}),
// a push row per message when record.push. A row first in its conversation's queue is written leased to the
// caller until record.lease_until (null: none leased); the leased rows come back whole, the others are counted.
// A repeatable definition (src/store/functions/index.ts): edit it here; it is re-applied when its text changes.
export const SEND = `create or replace function parley_send(drafts jsonb, sent_at timestamptz, record jsonb) returns json
    language plpgsql as $$
    declare
      written json;
      leased json;
      waiting bigint;
    begin
      -- Lock: the conversations written to, in ascending id (the lock order of store/locks.ts).
      perform 1 from conversations
        where id in (select (d ->> 'conversation_id')::bigint from jsonb_array_elements(drafts) d)
        order by id for no key update;

      -- Lock: the attachments sent, in ascending id (key share: sends do not wait for each other).
      perform 1 from attachments
        where id in (select (d ->> 'attachment_id')::bigint from jsonb_array_elements(drafts) d)
        order by id for key share;

      -- Check and write, in a statement whose snapshot is taken now that the locks are held.
      with req as (
        select * from jsonb_to_recordset(drafts) as r(
          ord int, conversation_id bigint, sender_id bigint, body text, attachment_id bigint, reply_to_id bigint,
          forwarded_from_message_id bigint, forwarded_from_conversation_id bigint, forwarded_from_sender_id bigint,
          client_message_id text, mentioned_user_ids bigint[], thread_id bigint)
      ),
      checked as (
        select req.*, case
          when p.user_id is null then 'not_participant'
          when req.client_message_id is not null and exists (
            select 1 from messages m
            where m.conversation_id = req.conversation_id and m.sender_id = req.sender_id and m.client_message_id = req.client_message_id
          ) then 'duplicate'
          when c.type = 'direct' and exists (
            select 1 from participants o
            join blocks b on (b.blocker_id = req.sender_id and b.blocked_id = o.user_id) or (b.blocker_id = o.user_id and b.blocked_id = req.sender_id)
            where o.conversation_id = req.conversation_id and o.user_id <> req.sender_id
          ) then 'blocked'
          when req.attachment_id is not null and req.forwarded_from_message_id is null and not exists (
            select 1 from attachments a where a.id = req.attachment_id and a.uploader_id = req.sender_id
          ) then 'attachment_not_yours'
          when req.reply_to_id is not null and not exists (
            select 1 from messages m where m.id = req.reply_to_id and m.conversation_id = req.conversation_id and m.deleted_at is null
          ) then 'reply_not_here'
          when req.thread_id is not null and not exists (
            select 1 from messages t
            where t.id = req.thread_id and t.conversation_id = req.conversation_id and t.thread_id is null and t.deleted_at is null
          ) then 'thread_not_here'
          when exists (
            select 1 from unnest(coalesce(req.mentioned_user_ids, '{}')) mentioned(user_id)
            where not exists (select 1 from participants mp where mp.conversation_id = req.conversation_id and mp.user_id = mentioned.user_id)
          ) then 'mention_not_participant'
          else 'ok' end as outcome
        from req
        left join conversations c on c.id = req.conversation_id
        left join participants p on p.conversation_id = req.conversation_id and p.user_id = req.sender_id
      ),
      -- Ids drawn in the drafts' order (the sorted subquery is read in order): a conversation's order is the drafts'.
      numbered as (
        select ord, nextval('messages_id_seq')::bigint as id
        from (select ord from checked where outcome = 'ok' order by ord offset 0) ok
      ),
      ins as (
        insert into messages (id, conversation_id, sender_id, body, attachment_id, reply_to_id, forwarded_from_message_id,
          forwarded_from_conversation_id, forwarded_from_sender_id, client_message_id, thread_id, created_at)
        select n.id, c.conversation_id, c.sender_id, c.body, c.attachment_id, c.reply_to_id, c.forwarded_from_message_id,
          c.forwarded_from_conversation_id, c.forwarded_from_sender_id, c.client_message_id, c.thread_id, sent_at
        from numbered n join checked c using (ord)
        order by n.id
        -- Another node's send with the same client_message_id committed first: that one stands.
        on conflict (conversation_id, sender_id, client_message_id) where client_message_id is not null do nothing
        returning messages.id, messages.conversation_id, messages.sender_id, messages.thread_id
      ),
      -- The mentions of the messages written (a sender mentioning themself is not a mention).
      mentions as (
        insert into message_mentions (message_id, user_id)
        select distinct ins.id, mentioned.user_id
        from ins
        join numbered n on n.id = ins.id
        join checked c using (ord)
        cross join lateral unnest(coalesce(c.mentioned_user_ids, '{}')) mentioned(user_id)
        where mentioned.user_id <> ins.sender_id
        returning message_id, user_id
      ),
      -- Thread replies are not the conversation's: they move neither its last message nor anyone's unread counts.
      latest as (select ins.conversation_id, max(ins.id) as id from ins where ins.thread_id is null group by ins.conversation_id),
      conv as (
        update conversations c set last_message_id = latest.id, last_activity_at = sent_at, updated_at = sent_at
        from latest where c.id = latest.conversation_id
        returning c.*
      ),
      readers as (
        update participants p set unread_count = p.unread_count + x.added, unread_mention_count = p.unread_mention_count + x.mentioned
        from (
          select p2.conversation_id, p2.user_id,
            count(ins.id) filter (where ins.sender_id <> p2.user_id) as added,
            count(ins.id) filter (where ins.sender_id <> p2.user_id
              and exists (select 1 from mentions mm where mm.message_id = ins.id and mm.user_id = p2.user_id)) as mentioned
          from participants p2
          join latest l on l.conversation_id = p2.conversation_id
          left join ins on ins.conversation_id = p2.conversation_id and ins.thread_id is null
          group by p2.conversation_id, p2.user_id
        ) x
        where p.conversation_id = x.conversation_id and p.user_id = x.user_id
        returning p.conversation_id, p.user_id, p.unread_count, p.last_read_at, p.unread_mention_count, p.muted, p.muted_until
      ),
      -- Each message's recipients: its conversation's participants but its sender (gathered once per conversation).
      participants_of as (
        select r.conversation_id, array_agg(r.user_id order by r.user_id) as ids from readers r group by r.conversation_id
      ),
      -- The change feed: MessageSent as the caller built it, completed by the write; InboxUpdated per conversation.
      sent as (
        select n.ord, i.id, i.conversation_id, i.sender_id,
          ((record->'payloads'->n.ord) || jsonb_build_object('id', i.id,
            'sender', jsonb_build_object('id', i.sender_id, 'name', u.name, 'avatar_url', u.avatar_url)))::json as data
        from ins i
        join numbered n on n.id = i.id
        join users u on u.id = i.sender_id
        where jsonb_typeof(record->'payloads') = 'array'
      ),
      feed as (
        insert into sync_changes (conversation_id, user_id, type, data)
        select conversation_id, null, type, data from (
          select 0 as part, ord as k, conversation_id, 'MessageSent' as type, data from sent
          union all
          select 1, min(ord), conversation_id, 'InboxUpdated', null from sent group by conversation_id) changes
        order by part, k
        returning conversation_id, type, data
      ),
      -- The outbox, read from the feed's rows: the webhook's data is the MessageSent the feed holds.
      outbox_drafts as (
        select 'webhook' as kind, url.target, f.conversation_id, (f.data->>'id')::bigint as message_id,
          jsonb_build_object('data', f.data, 'recipient_ids',
            coalesce(to_jsonb(array_remove(po.ids, (f.data->'sender'->>'id')::bigint)), '[]')) as payload
        from feed f
        left join participants_of po on po.conversation_id = f.conversation_id
        cross join jsonb_array_elements_text(coalesce(record->'webhook_urls', '[]')) as url(target)
        where f.type = 'MessageSent'
        union all
        select 'push', '', null, (f.data->>'id')::bigint,
          jsonb_build_object('conversation_id', f.conversation_id, 'message_id', (f.data->>'id')::bigint, 'sender_id', (f.data->'sender'->>'id')::bigint)
        from feed f
        where f.type = 'MessageSent' and coalesce((record->>'push')::boolean, false)
      ),
      -- First in its conversation's queue (or in none): leased to the caller until lease_until (null: no lease).
      outboxed as (
        insert into outbox (kind, target, conversation_id, type, payload, next_attempt_at)
        select d.kind, d.target, d.conversation_id, 'MessageSent', d.payload,
          case when record->>'lease_until' is not null and (d.conversation_id is null or ahead.id is null)
            then (record->>'lease_until')::timestamptz else now() end
        from outbox_drafts d
        left join lateral (
          select e.id from outbox e
          where e.conversation_id = d.conversation_id and e.kind = d.kind and e.target = d.target and e.failed_at is null
          limit 1) ahead on true
        order by d.message_id, d.kind, d.target
        returning id, kind, target, conversation_id, type, payload, created_at, next_attempt_at > created_at as leased
      )
      select json_build_object(
        'results', (select coalesce(json_agg(json_build_object(
            'outcome', case when c.outcome = 'ok' and i.id is null then 'duplicate' else c.outcome end,
            'id', i.id, 'name', u.name, 'avatar_url', u.avatar_url) order by c.ord), '[]')
          from checked c
          left join numbered n using (ord)
          left join ins i on i.id = n.id
          left join users u on u.id = i.sender_id),
        'conversations', (select coalesce(json_agg(conv), '[]') from conv),
        'readers', (select coalesce(json_agg(json_build_object('c', r.conversation_id, 'u', r.user_id, 'n', r.unread_count,
            'r', r.last_read_at, 'm', r.unread_mention_count, 'mu', r.muted, 'mt', r.muted_until)), '[]')
          from readers r),
        'mentions', (select coalesce(json_agg(json_build_object('m', mm.message_id, 'u', mm.user_id)), '[]') from mentions mm),
        'previews', (select coalesce(json_agg(pv), '[]')
          from parley_previews(array(select l.conversation_id from latest l)) pv)
      ),
      (select coalesce(json_agg(json_build_object('id', o.id, 'kind', o.kind, 'target', o.target, 'conversation_id', o.conversation_id,
          'payload', o.payload, 'created_at', o.created_at) order by o.id) filter (where o.leased), '[]') from outboxed o),
      (select count(*) filter (where not o.leased) from outboxed o)
      into written, leased, waiting;
      return json_build_object('written', written, 'outbox', leased, 'waiting', waiting);
    end
    $$`;
