// parley_participants_preview(conversation_ids): each conversation's participants_preview, up to 10 participants,
// owners and admins first, then by seniority (joined_at, then user id), in that order per conversation. Used by
// every read of a conversation (read-model.ts, loadPreviews) and by the send (send.ts).
//
// Each conversation reads its first ten from the index in preview order (migration 017) and stops: the same work
// and the same plan for a direct conversation and a group of 10,000. The ids come through parley_ids (a fixed
// estimate), so the statement keeps one plan per connection. Migration 002's parley_previews ranked every
// participant of every conversation: its plans differed with each group's size, so it was planned on every call
// (0.26 ms of planning for 0.05 ms of reading in a reconnect storm's syncs), and a shared plan made after a
// 10,000-member group scanned for groups of 10.
// A repeatable definition (src/store/functions/index.ts); inlined into the statement that calls it (language sql).
export const PARTICIPANTS_PREVIEW = `create or replace function parley_participants_preview(conversation_ids bigint[])
    returns table (conversation_id bigint, id bigint, name text, avatar_url text, role text)
    language sql stable as $$
      select x.conversation_id, x.id, x.name, x.avatar_url, x.role
      from parley_ids(conversation_ids) as c(id)
      cross join lateral (
        select p.conversation_id, u.id, u.name, u.avatar_url, p.role,
          case p.role when 'owner' then 0 when 'admin' then 1 else 2 end as rank, p.joined_at, p.user_id
        from participants p join users u on u.id = p.user_id
        where p.conversation_id = c.id
        order by rank, p.joined_at, p.user_id
        limit 10) x
      order by x.conversation_id, x.rank, x.joined_at, x.user_id
    $$`;
