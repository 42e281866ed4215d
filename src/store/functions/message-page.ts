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
    set enable_sort = off
    as $$
    declare
      cleared bigint := coalesce((select p.cleared_message_id from participants p where p.conversation_id = conversation and p.user_id = viewer), 0);
    begin
      -- Four static statements (not one built with format): PL/pgSQL keeps each one's plan for the session.
      if thread is null and after_id is null then
        return query select m.id from messages m
          where m.conversation_id = conversation and m.thread_id is null and m.id > cleared and m.id < coalesce(before_id, 9223372036854775807)
            and m.deleted_at is null and not exists (select 1 from hidden_messages h where h.user_id = viewer and h.message_id = m.id)
          order by m.conversation_id desc, m.id desc limit page_limit;
      elsif thread is null then
        return query select m.id from messages m
          where m.conversation_id = conversation and m.thread_id is null and m.id > greatest(cleared, after_id) and m.id < coalesce(before_id, 9223372036854775807)
            and m.deleted_at is null and not exists (select 1 from hidden_messages h where h.user_id = viewer and h.message_id = m.id)
          order by m.conversation_id, m.id limit page_limit;
      elsif after_id is null then
        return query select m.id from messages m
          where m.thread_id = thread and m.id > cleared and m.id < coalesce(before_id, 9223372036854775807)
            and m.deleted_at is null and not exists (select 1 from hidden_messages h where h.user_id = viewer and h.message_id = m.id)
          order by m.thread_id desc, m.id desc limit page_limit;
      else
        return query select m.id from messages m
          where m.thread_id = thread and m.id > greatest(cleared, after_id) and m.id < coalesce(before_id, 9223372036854775807)
            and m.deleted_at is null and not exists (select 1 from hidden_messages h where h.user_id = viewer and h.message_id = m.id)
          order by m.thread_id, m.id limit page_limit;
      end if;
    end
    $$`;
