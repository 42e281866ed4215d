import { sql, type Kysely } from 'kysely';

// Search (API v1.1): full-text search of messages and a name search of users, the same on PostgreSQL and on
// the embedded PGlite, with no extension (unaccent is a contrib extension: not on every PostgreSQL, and PGlite
// would have to load it on every start).
//
//  - parley_fold(text): lower case, accents off. NFKD splits letters from their marks (and folds compatibility
//    forms: ligatures, full-width letters, superscripts), the combining marks U+0300–U+036F go, NFC puts the
//    rest together again (Hangul, kana); the Latin letters NFKD does not split (ø, ł, đ, ß, æ, œ, ...) are
//    mapped by hand. ASCII text (one byte per character) is only lowered: the rest changes nothing there,
//    and it is what most messages are (the whole fold costs about twice the tsvector; lower() next to
//    nothing). Immutable, so it can be indexed; the messages' tsvector and every query go through it.
//    src/chat/search.ts folds the same way in JavaScript (for highlighting).
//  - messages.search: the tsvector of the folded body ('simple' configuration: every word, no stemming, no
//    stop words), a stored generated column, with a GIN index over the messages not deleted. Stored, not an
//    expression index, so a query may also check it row by row (walking messages newest first) without
//    folding the body again. Its statistics keep 10,000 most common words (statistics target 1000, not
//    100), so the planner's estimate of a word beginning like "krom" (many rare words) is close.
//  - users.search_name: the folded name, and users.search_words its tsvector (both generated and stored),
//    with a GIN index over the words and a btree for the order (collation C: byte order, which LIKE 'abc%'
//    can use as a range, and the order the cursor pages by).
// One statement per query: PGlite's extended protocol takes a single statement at a time.
const statements = [
  String.raw`create or replace function parley_fold(t text) returns text
    language sql immutable strict parallel safe as $$
      select case when octet_length(t) = length(t) then lower(t) else lower(normalize(regexp_replace(normalize(
        replace(replace(replace(replace(replace(replace(replace(
          translate(t, 'ØøŁłĐđĦħıŦŧĿŀ', 'OoLlDdHhiTtLl'),
          'ß', 'ss'), 'Æ', 'AE'), 'æ', 'ae'), 'Œ', 'OE'), 'œ', 'oe'), 'Þ', 'TH'), 'þ', 'th'),
        NFKD), '[\u0300-\u036f]', '', 'g'), NFC)) end
    $$`,
  `alter table messages add column search tsvector
     generated always as (to_tsvector('simple'::regconfig, parley_fold(coalesce(body, '')))) stored`,
  `alter table messages alter column search set statistics 1000`,
  `create index messages_search on messages using gin (search) where deleted_at is null`,
  `alter table users add column search_name text generated always as (parley_fold(name)) stored`,
  `alter table users add column search_words tsvector generated always as (to_tsvector('simple'::regconfig, parley_fold(name))) stored`,
  `create index users_search_words on users using gin (search_words)`,
  `create index users_search_order on users (search_name collate "C", id)`,
  // The words of a search, as the texts' tsvectors were made (folded, the same parser: "e-mail" or "3.14"
  // are split or kept alike on both sides), longest first. A word that begins another word of the search is
  // dropped: any word of the text the longer one begins, it begins too.
  String.raw`create or replace function parley_search_words(q text) returns text[]
    language sql immutable strict parallel safe as $$
      select coalesce(array_agg(w.lexeme order by length(w.lexeme) desc, w.lexeme), '{}')
      from unnest(to_tsvector('simple'::regconfig, parley_fold(q))) w
      where not exists (
        select 1 from unnest(to_tsvector('simple'::regconfig, parley_fold(q))) o
        where o.lexeme <> w.lexeme and starts_with(o.lexeme, w.lexeme))
    $$`,
  // A word as a prefix query, 'word':*, quoted for the tsquery syntax (nothing in it is taken as an operator).
  String.raw`create or replace function parley_prefix_query(word text) returns tsquery
    language sql immutable strict parallel safe as $$
      select format('''%s'':*', replace(replace(word, '\', '\\'), '''', ''''''))::tsquery
    $$`,
  // ts_match_vq (tsvector @@ tsquery) under another name, with its estimates: a condition the planner
  // estimates as well as @@ but never hands to the GIN index. A prefix like 't':* matches thousands of
  // words, and GIN reads every one of their posting lists before it can intersect them with the other
  // words' (more than 100 ms for "t wakromi" over a million messages, against 1 ms for 'wakromi':* alone).
  `create operator @@# (leftarg = tsvector, rightarg = tsquery, function = ts_match_vq, restrict = tsmatchsel, join = tsmatchjoinsel)`,
  // Message ids of a search, newest first: the messages not deleted of the conversations the reader is in now
  // (optionally one of them, optionally older than a message) with a word beginning with each word of q.
  // The reader's conversations are read first and given as an array (conversation_id = any(...)): the
  // planner can then intersect the GIN index's matches with the messages of those conversations (the
  // messages_by_conversation index) before reading a row, instead of reading every match in every
  // conversation to drop most of them. Dynamic SQL with the words as literals, so each search is planned for
  // its own words and conversations: the GIN index for rare words (with the conversations' index for medium
  // ones), the messages newest first (primary key) for common ones, the conversations' messages for a reader
  // in few; a prepared statement's generic plan would pick one for every search. Only the longest word (the
  // likeliest to be rare: a beginning of one or two letters is the costly kind) may use the GIN index; the
  // others are checked on the rows it finds (@@#).
  String.raw`create or replace function parley_search_messages(reader bigint, q text, in_conversation bigint, before_id bigint, max_rows integer)
    returns table (id bigint) language plpgsql stable as $$
    declare
      words text[] := parley_search_words(q);
      conditions text := '';
      conversations bigint[];
    begin
      if cardinality(words) = 0 then return; end if;
      for i in 1 .. cardinality(words) loop
        conditions := conditions || format(' and m.search %s %L::tsquery', case when i = 1 then '@@' else '@@#' end, parley_prefix_query(words[i]));
      end loop;
      conversations := array(
        select p.conversation_id from participants p
        where p.user_id = reader and (in_conversation is null or p.conversation_id = in_conversation));
      if cardinality(conversations) = 0 then return; end if;
      return query execute
        'select m.id from messages m where m.deleted_at is null' || conditions
        || ' and m.conversation_id = any($1)'
        || case when before_id is null then '' else ' and m.id < $2' end
        || ' order by m.id desc limit $3'
        using conversations, before_id, max_rows;
    end
    $$`,
  // Users with a word of their name beginning with each word of q: first those whose name begins with one of
  // the words (rank 0), then the others (rank 1), each by folded name (byte order) and id, after the position
  // (after_rank, after_name, after_id). Rank 0 is a range of the name index, read in order (LIKE 'word%'
  // under collation C), so a common beginning costs no more than a rare one, and rank 1 is only looked for
  // when rank 0 does not fill the page: the GIN index on the longest word, sorted. Dynamic SQL as above.
  String.raw`create or replace function parley_search_users(q text, after_rank integer, after_name text, after_id bigint, max_rows integer)
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
          'select 0, u.id, u.name, u.avatar_url, u.search_name from users u where (' || starts || ')'
          || filters
          || case when after_rank is null then '' else ' and (u.search_name collate "C", u.id) > ($1 collate "C", $2)' end
          || ' order by u.search_name collate "C", u.id limit $3'
          using after_name, after_id, max_rows;
        get diagnostics found = row_count;
        if found >= max_rows then return; end if;
      end if;
      return query execute
        'select 1, u.id, u.name, u.avatar_url, u.search_name from users u where not (' || starts || ')' || matches
        || case when after_rank = 1 then ' and (u.search_name collate "C", u.id) > ($1 collate "C", $2)' else '' end
        || ' order by u.search_name collate "C", u.id limit $3'
        using after_name, after_id, max_rows - found;
    end
    $$`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
