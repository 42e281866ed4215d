// parley_send(drafts, sent_at, record), as it runs: the send of many messages in one statement, with its record
// (src/store/messages.ts, writeMessages). It locks the drafts' conversations (write lock, ascending id), then the
// attachments they send (key share, ascending id: a send waits for an attachment sweep that is deleting one, and
// its check then finds it gone), checks each draft's rules (see DraftOutcome) against what is committed, inserts
// the drafts that pass with ids in the drafts' order, moves each conversation's last message and activity, grows
// every other participant's unread counts (thread replies do neither), and answers all of it with the
// conversations' previews. With record.threads (this release's callers; an earlier release's nodes, during a rolling
// upgrade, keep their threads themselves), it also keeps each thread a reply is written to: its reply count, last
// reply time and latest record.thread_repliers distinct repliers (newest first), and who takes part (the root's
// sender; each replier, read up to their reply: sending a reply reads the thread; each user mentioned in a reply),
// and answers the threads as they now are.
//
// With record.payloads (one payload per draft, JSON, as the caller built it for the socket: MessageSent, or for a
// reply in a thread ThreadReplySent), it also records what happened, in the same statement: the change feed's rows
// (each message's MessageSent, its payload completed with the id and sender the write gave it, or ThreadReplySent,
// its message so completed, then ThreadUpdated with the thread as it now is; then InboxUpdated once per
// conversation that received a message outside threads), and from those very rows the outbox's: a webhook per
// MessageSent ({data, recipient_ids}) or ThreadReplySent ({data}) and record.webhook_urls entry, a push row per
// message when record.push. A row first in its conversation's queue is written leased to the
// caller until record.lease_until (null: none leased); the leased rows come back whole, the others are counted.
// It runs without JIT compilation (set jit = off): the planner's estimate for its one long statement passes
// jit_above_cost as soon as the tables grow, and compiling it cost 300 ms of a 400 ms send to a group of 10,000.
// A repeatable definition (src/store/functions/index.ts): edit it here; it is re-applied when its text changes.
export const SEND = `create or replace function parley_send(drafts jsonb, sent_at timestamptz, record jsonb) returns json
    language plpgsql set jit = off as $$
    declare
      written json;
      leased json;
      waiting bigint;
    begin
      -- Lock: the senders' rows, in ascending id (share: sends do not wait for each other; a user's erasure takes
      -- the row to mark it, so it waits for the sends under way and the sends after it see the mark).
      perform 1 from users
        where id in (select (d ->> 'sender_id')::bigint from jsonb_array_elements(drafts) d)
        order by id for share;

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
      judged as (
        select req.*, case
          when exists (select 1 from users s where s.id = req.sender_id and s.erased_at is not null) then 'sender_erased'
          when p.user_id is null then 'not_participant'
          when req.client_message_id is not null and exists (
            select 1 from messages m
            where m.conversation_id = req.conversation_id and m.sender_id = req.sender_id and m.client_message_id = req.client_message_id
          ) then 'duplicate'
          -- Moderation: a sender banned from the service, or a direct message to a user who is; a frozen group.
          when exists (
            select 1 from user_bans ub
            where (ub.until is null or ub.until > sent_at) and (ub.user_id = req.sender_id or (c.type = 'direct' and ub.user_id in (
              select o.user_id from participants o where o.conversation_id = req.conversation_id and o.user_id <> req.sender_id)))
          ) then 'user_banned'
          when c.frozen and p.role = 'member' then 'frozen'
          when c.type = 'direct' and exists (
            select 1 from participants o
            join blocks b on (b.blocker_id = req.sender_id and b.blocked_id = o.user_id) or (b.blocker_id = o.user_id and b.blocked_id = req.sender_id)
            where o.conversation_id = req.conversation_id and o.user_id <> req.sender_id
          ) then 'blocked'
          when req.attachment_id is not null and req.forwarded_from_message_id is null and not exists (
            select 1 from attachments a where a.id = req.attachment_id and a.uploader_id = req.sender_id
          ) then 'attachment_not_yours'
          when req.reply_to_id is not null and (quoted.conversation_id is distinct from req.conversation_id or quoted.deleted_at is not null)
            then 'reply_not_here'
          when req.thread_id is not null
            and (root.conversation_id is distinct from req.conversation_id or root.thread_id is not null or root.deleted_at is not null)
            then 'thread_not_here'
          when exists (
            select 1 from unnest(coalesce(req.mentioned_user_ids, '{}')) mentioned(user_id)
            where not exists (select 1 from participants mp where mp.conversation_id = req.conversation_id and mp.user_id = mentioned.user_id)
          ) then 'mention_not_participant'
          -- Slow mode: a member's last send is less than the group's window ago.
          when c.slow_mode_s > 0 and p.role = 'member' and p.last_sent_at > sent_at - make_interval(secs => c.slow_mode_s) then 'slow_mode'
          else 'ok' end as first_outcome,
          -- Slow mode holds for this draft: a member of a group in slow mode.
          coalesce(c.slow_mode_s > 0 and p.role = 'member', false) as slowed,
          c.slow_mode_s,
          p.last_sent_at
        from req
        left join conversations c on c.id = req.conversation_id
        left join participants p on p.conversation_id = req.conversation_id and p.user_id = req.sender_id
        -- The messages quoted and replied under, each looked up by its id (a lateral with a limit is always a probe of
        -- the primary key: as an exists in the case above, the planner may hash every message of the table instead).
        left join lateral (select m.conversation_id, m.deleted_at from messages m where m.id = req.reply_to_id limit 1) quoted on true
        left join lateral (select t.conversation_id, t.thread_id, t.deleted_at from messages t where t.id = req.thread_id limit 1) root on true
      ),
      -- Slow mode within the batch: of a member's drafts to one group, the first that passes goes, the others wait.
      checked as (
        select j.*, case
          when j.first_outcome = 'ok' and j.slowed and count(*) filter (where j.first_outcome = 'ok')
            over (partition by j.conversation_id, j.sender_id order by j.ord rows between unbounded preceding and 1 preceding) > 0
          then 'slow_mode' else j.first_outcome end as outcome
        from judged j
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
      -- Thread replies: each thread's counts grow and its latest distinct repliers are merged, newest first.
      replies as (
        select ins.thread_id as root_id, ins.conversation_id, count(*)::int as n,
          array(select u from unnest(array_agg(ins.sender_id order by ins.id desc)) with ordinality x(u, o)
            group by u order by min(o) limit (record->>'thread_repliers')::int) as repliers
        from ins
        where ins.thread_id is not null and coalesce((record->>'threads')::boolean, false)
        group by ins.thread_id, ins.conversation_id
      ),
      threads_written as (
        insert into threads as t (root_id, conversation_id, reply_count, last_reply_at, repliers)
        select root_id, conversation_id, n, sent_at, repliers from replies
        on conflict (root_id) do update set reply_count = t.reply_count + excluded.reply_count, last_reply_at = excluded.last_reply_at,
          repliers = array(select u from unnest(excluded.repliers || t.repliers) with ordinality x(u, o)
            group by u order by min(o) limit (record->>'thread_repliers')::int)
        returning t.root_id, t.conversation_id, t.reply_count, t.last_reply_at, t.repliers
      ),
      thread_now as (
        select tw.*, root.sender_id as root_sender_id from threads_written tw join messages root on root.id = tw.root_id
      ),
      -- Who takes part in each thread: its root's sender, each replier (read up to their reply), each user mentioned.
      thread_people as (
        insert into thread_members as tm (root_id, user_id, last_read_reply_id, last_read_at)
        select root_id, user_id, max(read_id), case when max(read_id) > 0 then sent_at end
        from (
          select root_id, root_sender_id as user_id, 0::bigint as read_id from thread_now
          union all
          select ins.thread_id, ins.sender_id, ins.id from ins join replies r on r.root_id = ins.thread_id
          union all
          select ins.thread_id, mm.user_id, 0 from mentions mm join ins on ins.id = mm.message_id join replies r on r.root_id = ins.thread_id
        ) people
        group by root_id, user_id
        on conflict (root_id, user_id) do update set
          last_read_reply_id = greatest(tm.last_read_reply_id, excluded.last_read_reply_id),
          last_read_at = coalesce(excluded.last_read_at, tm.last_read_at)
        returning root_id
      ),
      -- Thread replies are not the conversation's: they move neither its last message nor anyone's unread counts.
      latest as (select ins.conversation_id, max(ins.id) as id from ins where ins.thread_id is null group by ins.conversation_id),
      conv as (
        update conversations c set last_message_id = latest.id, last_activity_at = sent_at, updated_at = sent_at
        from latest where c.id = latest.conversation_id
        returning c.*
      ),
      -- Who sent to a group in slow mode: their last send is now (for the next send's check).
      slowed_senders as (select distinct c.conversation_id, c.sender_id from ins join checked c on c.conversation_id = ins.conversation_id and c.sender_id = ins.sender_id where c.slowed),
      readers as (
        update participants p set unread_count = p.unread_count + x.added, unread_mention_count = p.unread_mention_count + x.mentioned,
          last_sent_at = case when (p.conversation_id, p.user_id) in (select conversation_id, sender_id from slowed_senders) then sent_at else p.last_sent_at end
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
      -- The same for senders whose conversation the readers' update does not touch (only thread replies were sent there).
      slowed_repliers as (
        update participants p set last_sent_at = sent_at
        from slowed_senders s
        where p.conversation_id = s.conversation_id and p.user_id = s.sender_id
          and s.conversation_id not in (select conversation_id from latest)
      ),
      -- Each message's recipients: its conversation's participants but its sender (gathered once per conversation).
      participants_of as (
        select r.conversation_id, array_agg(r.user_id order by r.user_id) as ids from readers r group by r.conversation_id
      ),
      -- The change feed: each payload as the caller built it, completed by the write (a reply's message); after a
      -- reply its thread as it now is; InboxUpdated per conversation that received a message outside threads.
      sent as (
        select n.ord, i.id, i.conversation_id, i.sender_id, i.thread_id,
          (case when i.thread_id is null then p.payload || author.fields
            else p.payload || jsonb_build_object('message', (p.payload->'message') || author.fields) end)::json as data
        from ins i
        join numbered n on n.id = i.id
        join users u on u.id = i.sender_id
        cross join lateral (select record->'payloads'->n.ord as payload) p
        cross join lateral (select jsonb_build_object('id', i.id,
          'sender', jsonb_build_object('id', i.sender_id, 'name', u.name, 'avatar_url', u.avatar_url)) as fields) author
        where jsonb_typeof(record->'payloads') = 'array'
      ),
      feed as (
        insert into sync_changes (conversation_id, user_id, type, data)
        select conversation_id, null, type, data from (
          select 0 as part, ord as k, 0 as step, conversation_id,
            case when thread_id is null then 'MessageSent' else 'ThreadReplySent' end as type, data from sent
          union all
          select 0, s.ord, 1, s.conversation_id, 'ThreadUpdated', json_build_object('conversation_id', t.conversation_id,
            'thread_id', t.root_id, 'reply_count', t.reply_count,
            'last_reply_at', to_char(t.last_reply_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'participant_ids', array(select distinct p from unnest(t.root_sender_id || t.repliers) p order by p))
          from sent s join thread_now t on t.root_id = s.thread_id
          union all
          select 1, min(ord), 0, conversation_id, 'InboxUpdated', null from sent where thread_id is null group by conversation_id) changes
        order by part, k, step
        returning conversation_id, type, data
      ),
      -- The outbox, read from the feed's rows: a webhook's data is the MessageSent or ThreadReplySent the feed holds.
      messages_fed as (
        select f.conversation_id, f.type, f.data, coalesce(f.data->'message', f.data) as message
        from feed f where f.type in ('MessageSent', 'ThreadReplySent')
      ),
      outbox_drafts as (
        select 'webhook' as kind, url.target, f.conversation_id, f.type, (f.message->>'id')::bigint as message_id,
          case when f.type = 'MessageSent' then jsonb_build_object('data', f.data, 'recipient_ids',
            coalesce(to_jsonb(array_remove(po.ids, (f.data->'sender'->>'id')::bigint)), '[]'))
          else jsonb_build_object('data', f.data) end as payload
        from messages_fed f
        left join participants_of po on po.conversation_id = f.conversation_id
        cross join jsonb_array_elements_text(coalesce(record->'webhook_urls', '[]')) as url(target)
        union all
        select 'push', '', null, f.type, (f.message->>'id')::bigint,
          jsonb_build_object('conversation_id', f.conversation_id, 'message_id', (f.message->>'id')::bigint,
            'sender_id', (f.message->'sender'->>'id')::bigint)
            || case when f.type = 'ThreadReplySent' then jsonb_build_object('thread_id', (f.data->>'thread_id')::bigint) else '{}' end
        from messages_fed f
        where coalesce((record->>'push')::boolean, false)
      ),
      -- First in its conversation's queue (or in none): leased to the caller until lease_until (null: no lease).
      outboxed as (
        insert into outbox (kind, target, conversation_id, type, payload, next_attempt_at)
        select d.kind, d.target, d.conversation_id, d.type, d.payload,
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
            'retry_after', case when c.outcome = 'slow_mode' then greatest(1, ceil(case when c.first_outcome = 'slow_mode'
              then extract(epoch from c.last_sent_at + make_interval(secs => c.slow_mode_s) - sent_at) else c.slow_mode_s end))::int end,
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
          from parley_participants_preview(array(select l.conversation_id from latest l)) pv),
        'threads', (select coalesce(json_agg(json_build_object('root_id', t.root_id, 'conversation_id', t.conversation_id,
            'reply_count', t.reply_count, 'last_reply_at', t.last_reply_at, 'repliers', t.repliers, 'root_sender_id', t.root_sender_id)), '[]')
          from thread_now t)
      ),
      (select coalesce(json_agg(json_build_object('id', o.id, 'kind', o.kind, 'target', o.target, 'conversation_id', o.conversation_id,
          'type', o.type, 'payload', o.payload, 'created_at', o.created_at) order by o.id) filter (where o.leased), '[]') from outboxed o),
      (select count(*) filter (where not o.leased) from outboxed o)
      into written, leased, waiting;
      return json_build_object('written', written, 'outbox', leased, 'waiting', waiting);
    end
    $$`;
