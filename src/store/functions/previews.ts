// parley_previews(conversation_ids): up to 10 participants of each conversation, owners, then admins, then members,
// each by seniority (joined_at, then user id); rows ordered by conversation and that rank. Read by read-model.ts
// (loadPreviews) and by the send (send.ts) for the conversations it writes to. The body migration 002 created.
//
// Unlike the statements of parley_ids (ids.ts), this one is planned on every call, on purpose: how many rows a
// conversation has differs by four orders of magnitude (a direct conversation, a group of 10,000), and a shared plan
// made while the participants were mostly one large group expected 10,000 rows for every conversation (a scan of
// participants and users: 5–11 ms a call for groups of 10 afterwards, against 0.07 ms planned with the ids in hand;
// cluster benchmark, reconnect storm after the large group, 2026-11-28).
// A repeatable definition (src/store/functions/index.ts).
export const PREVIEWS = `create or replace function parley_previews(conversation_ids bigint[])
    returns table (conversation_id bigint, id bigint, name text, avatar_url text, role text)
    language sql stable as $$
      select conversation_id, id, name, avatar_url, role from (
        select p.conversation_id, u.id, u.name, u.avatar_url, p.role,
          row_number() over (partition by p.conversation_id
            order by case p.role when 'owner' then 0 when 'admin' then 1 else 2 end, p.joined_at, p.user_id) as rank
        from participants p join users u on u.id = p.user_id
        where p.conversation_id = any (conversation_ids)
      ) ranked
      where rank <= 10
      order by conversation_id, rank
    $$`;
