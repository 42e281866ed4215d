// parley_previews(conversation_ids): up to 10 participants of each conversation, owners, then admins, then members,
// each by seniority (joined_at, then user id); rows ordered by conversation and that rank. Read by read-model.ts
// (loadPreviews) and by the send (send.ts) for the conversations it writes to. First defined by migration 002 with the
// same rule; here the conversations come from parley_ids and each one's ten are read beside it (a lateral join), so
// the statement keeps one plan instead of being planned on every call (see ids.ts): 0.38 → 0.18 ms a call.
// A repeatable definition (src/store/functions/index.ts); it needs parley_ids, applied before it.
export const PREVIEWS = `create or replace function parley_previews(conversation_ids bigint[])
    returns table (conversation_id bigint, id bigint, name text, avatar_url text, role text)
    language sql stable as $$
      select c.id, t.id, t.name, t.avatar_url, t.role
      from (select distinct x as id from parley_ids(conversation_ids) x) c
      cross join lateral (
        select u.id, u.name, u.avatar_url, p.role, p.joined_at,
          case p.role when 'owner' then 0 when 'admin' then 1 else 2 end as seniority
        from participants p join users u on u.id = p.user_id
        where p.conversation_id = c.id
        order by seniority, p.joined_at, p.user_id
        limit 10
      ) t
      order by c.id, t.seniority, t.joined_at, t.id
    $$`;
