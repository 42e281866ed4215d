// parley_send_messages_with_outbox(drafts, sent_at, spec, lease_until), as it runs: parley_send_messages'
// checks, locks and writes, plus the batch's outbox rows (MessageSent webhooks to spec.webhook_urls, and a push
// row when spec.push) drafted from the messages it inserts and the participants it updates, in the same
// statement (src/store/messages.ts, writeMessagesWithOutbox). Recipients are gathered once per conversation; a
// row first in its conversation's queue (one index probe per row) is written leased to the caller until
// lease_until. Answers the write, the leased rows as [id, message id, kind, target], and the count left waiting.
// A repeatable definition (src/store/functions/index.ts): edit it here; it is re-applied when its text changes.
export const SEND_MESSAGES_WITH_OUTBOX = `create or replace function parley_send_messages_with_outbox(drafts jsonb, sent_at timestamptz, outbox jsonb, lease_until timestamptz)
    returns json
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
          client_message_id text, mentioned_user_ids bigint[])
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
          forwarded_from_conversation_id, forwarded_from_sender_id, client_message_id, created_at)
        select n.id, c.conversation_id, c.sender_id, c.body, c.attachment_id, c.reply_to_id, c.forwarded_from_message_id,
          c.forwarded_from_conversation_id, c.forwarded_from_sender_id, c.client_message_id, sent_at
        from numbered n join checked c using (ord)
        order by n.id
        -- Another node's send with the same client_message_id committed first: that one stands.
        on conflict (conversation_id, sender_id, client_message_id) where client_message_id is not null do nothing
        returning messages.id, messages.conversation_id, messages.sender_id
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
      latest as (select ins.conversation_id, max(ins.id) as id from ins group by ins.conversation_id),
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
          left join ins on ins.conversation_id = p2.conversation_id
          group by p2.conversation_id, p2.user_id
        ) x
        where p.conversation_id = x.conversation_id and p.user_id = x.user_id
        returning p.conversation_id, p.user_id, p.unread_count, p.last_read_at, p.unread_mention_count, p.muted, p.muted_until
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
      (select coalesce(json_agg(json_build_array(o.id, o.message_id, o.kind, o.target) order by o.id) filter (where o.leased), '[]') from outboxed o),
      (select count(*) filter (where not o.leased) from outboxed o)
      into written, leased, waiting;
      return json_build_object('written', written, 'outbox', leased, 'waiting', waiting, 'created_at', now());
    end
    $$`;
