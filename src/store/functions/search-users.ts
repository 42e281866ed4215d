// parley_search_users(q, after_rank, after_name, after_id, max_rows), as it runs: GET /users (people by name).
// Users with a word of their name beginning with each word of q: first those whose name begins with one of the
// words (rank 0), then the others (rank 1), each by folded name (byte order) and id, after the position
// (after_rank, after_name, after_id). Rank 0 is a range of the name index, read in order (LIKE 'word%' under
// collation C), so a common beginning costs no more than a rare one, and rank 1 is only looked for when rank 0
// does not fill the page: the GIN index on the longest word, sorted. Dynamic SQL, so each search is planned for its
// own words. Erased users (DELETE /users/{id}) are nobody to find. First defined by migration 004; a repeatable
// definition since (src/store/functions/index.ts): edit it here.
export const SEARCH_USERS = String.raw`create or replace function parley_search_users(q text, after_rank integer, after_name text, after_id bigint, max_rows integer)
    returns table (rank integer, id bigint, name text, avatar_url text, search_name text) language plpgsql stable as $$
    declare
      words text[] := parley_search_words(q);
      matches text := '';
      filters text := '';
      starts text := '';
      found integer := 0;
    begin
      if cardinality(words) = 0 or max_rows < 1 then return; end if;
      for i in 1 .. cardinality(words) loop
        matches := matches || format(' and u.search_words %s %L::tsquery', case when i = 1 then '@@' else '@@#' end, parley_prefix_query(words[i]));
        filters := filters || format(' and u.search_words @@# %L::tsquery', parley_prefix_query(words[i]));
        starts := starts || case when i = 1 then '' else ' or ' end
          || format('u.search_name collate "C" like %L', replace(replace(replace(words[i], '\', '\\'), '%', '\%'), '_', '\_') || '%');
      end loop;
      if after_rank is null or after_rank = 0 then
        return query execute
          'select 0, u.id, u.name, u.avatar_url, u.search_name from users u where u.erased_at is null and (' || starts || ')'
          || filters
          || case when after_rank is null then '' else ' and (u.search_name collate "C", u.id) > ($1 collate "C", $2)' end
          || ' order by u.search_name collate "C", u.id limit $3'
          using after_name, after_id, max_rows;
        get diagnostics found = row_count;
        if found >= max_rows then return; end if;
      end if;
      return query execute
        'select 1, u.id, u.name, u.avatar_url, u.search_name from users u where u.erased_at is null and not (' || starts || ')' || matches
        || case when after_rank = 1 then ' and (u.search_name collate "C", u.id) > ($1 collate "C", $2)' else '' end
        || ' order by u.search_name collate "C", u.id limit $3'
        using after_name, after_id, max_rows - found;
    end
    $$`;
