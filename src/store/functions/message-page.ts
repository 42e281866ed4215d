// parley_message_page(thread, conversation, viewer, before_id, after_id, page_limit), as it runs: the ids of one page
// of a conversation's history (thread null: its messages outside threads) or of a thread's replies (conversation: the
// thread's), that the viewer may see (not deleted, not cleared or hidden by them: the rule of store/own-state.ts,
// ownMessageFilter, here with the viewer's cleared position read once), before before_id (newest first) or after
// after_id (oldest first).
//
// The page is read along its scope's index, in order, and stops at page_limit; sorting is turned off inside, so the
// planner never gathers the whole scope to sort it. It would otherwise, for a thread or conversation that grew since
// its statistics were gathered (a new value of thread_id looks a few rows long until the next ANALYZE, which on a
// large table may be a million messages away): 10,000 replies collected and sorted for 50 (about 15 ms of the
// database per page, against 0.3 ms). A repeatable definition (src/store/functions/index.ts).
export const MESSAGE_PAGE = `create or replace function parley_message_page(thread bigint, conversation bigint, viewer bigint,
      before_id bigint, after_id bigint, page_limit int) returns setof bigint
    language plpgsql stable
    -- A page is a few dozen rows: the statements that hydrate it join each row by its keys (the default estimate of
    -- 1,000 rows made the planner hash whole tables, 10 ms of the database per page instead of 2).
    rows 50
    set enable_sort = off
    as $$
    declare
      cleared bigint := coalesce((select p.cleared_message_id from participants p where p.conversation_id = conversation and p.user_id = viewer), 0);
    begin
      return query execute format(
        'select m.id from messages m
         where %s and m.id > $1 and m.id < $2 and m.deleted_at is null
           and not exists (select 1 from hidden_messages h where h.user_id = $3 and h.message_id = m.id)
         order by %s limit $4',
        case when thread is null then 'm.conversation_id = $5 and m.thread_id is null' else 'm.thread_id = $5' end,
        case when thread is null then 'm.conversation_id' else 'm.thread_id' end || case when after_id is null then ' desc, m.id desc' else ', m.id' end)
      using greatest(cleared, coalesce(after_id, 0)), coalesce(before_id, 9223372036854775807), viewer, page_limit, coalesce(thread, conversation);
    end
    $$`;
