import { sql, type Kysely } from 'kysely';

// Search (API v1.1): full-text search of messages and a name search of users, the same on PostgreSQL and on
// the embedded PGlite, with no extension (unaccent is a contrib extension: not on every PostgreSQL, and PGlite
// would have to load it on every start).
//
//  - parley_fold(text): lower case, accents off. NFKD splits letters from their marks (and folds compatibility
//    forms: ligatures, full-width letters, superscripts), the combining marks U+0300–U+036F go, NFC puts the
//    rest together again (Hangul, kana); the Latin letters NFKD does not split (ø, ł, đ, ß, æ, œ, ...) are
//    mapped by hand. Immutable, so it can be indexed; the messages' tsvector and every query go through it.
//  - messages.search: the tsvector of the folded body ('simple' configuration: every word, no stemming, no
//    stop words), a stored generated column, with a GIN index over the messages not deleted. Stored, not an
//    expression index, so a query may also check it row by row (walking a user's conversations newest first)
//    without folding the body again.
//  - users.search_name: the folded name (generated), with a GIN index over its words for the user search
//    and a btree for its order (collation C: byte order, the order the cursor pages by).
// One statement per query: PGlite's extended protocol takes a single statement at a time.
const statements = [
  String.raw`create or replace function parley_fold(t text) returns text
    language sql immutable strict parallel safe as $$
      select lower(normalize(regexp_replace(normalize(
        replace(replace(replace(replace(replace(replace(replace(
          translate(t, 'ØøŁłĐđĦħıŦŧĿŀ', 'OoLlDdHhiTtLl'),
          'ß', 'ss'), 'Æ', 'AE'), 'æ', 'ae'), 'Œ', 'OE'), 'œ', 'oe'), 'Þ', 'TH'), 'þ', 'th'),
        NFKD), '[\u0300-\u036f]', '', 'g'), NFC))
    $$`,
  `alter table messages add column search tsvector
     generated always as (to_tsvector('simple'::regconfig, parley_fold(coalesce(body, '')))) stored`,
  `create index messages_search on messages using gin (search) where deleted_at is null`,
  `alter table users add column search_name text generated always as (parley_fold(name)) stored`,
  `create index users_search_words on users using gin (to_tsvector('simple'::regconfig, search_name))`,
  `create index users_search_order on users (search_name collate "C", id)`,
  // The words of a search, each a prefix query ('word':*) on the folded text, as the body's tsvector was
  // made: the same parser, so "e-mail" or "3.14" are split or kept alike on both sides. A word that is a
  // prefix of another word of the search is dropped (any lexeme the longer one matches, it matches too).
  // Each lexeme is quoted for the tsquery syntax, so nothing in the text is taken as an operator.
  String.raw`create or replace function parley_search_terms(q text) returns tsquery[]
    language sql immutable strict parallel safe as $$
      select coalesce(array_agg(format('''%s'':*', replace(replace(w.lexeme, '', '\'), '''', ''''''))::tsquery order by w.lexeme), '{}')
      from unnest(to_tsvector('simple'::regconfig, parley_fold(q))) w
      where not exists (
        select 1 from unnest(to_tsvector('simple'::regconfig, parley_fold(q))) o
        where o.lexeme <> w.lexeme and starts_with(o.lexeme, w.lexeme))
    $$`,
  // ts_match_vq (tsvector @@ tsquery) under another name, with its estimates: a condition the planner
  // estimates as well as @@ but never hands to the GIN index. A prefix like 't':* matches thousands of
  // lexemes, and GIN reads every one of their posting lists before it can intersect them with the other
  // words' (more than 100 ms for "t wakromi" over a million messages, against 1 ms for 'wakromi':* alone).
  `create operator @@# (leftarg = tsvector, rightarg = tsquery, function = ts_match_vq, restrict = tsmatchsel, join = tsmatchjoinsel)`,
  // Message ids of a search, newest first: the messages not deleted of the conversations the reader is in now
  // (optionally one of them, optionally older than a message) whose words match every term. Dynamic SQL, one
  // condition per term with the term as a literal, so each search is planned for its own words: the GIN index
  // for rare words, the messages newest first (primary key) for common ones, the reader's conversations one by
  // one for a reader in few; a prepared statement's generic plan would pick one for every search. Only the
  // longest term (the likeliest to be rare: a prefix of one or two letters is the costly kind) may use the
  // index; the others are checked on the rows it finds (@@#).
  String.raw`create or replace function parley_search_messages(reader bigint, q text, in_conversation bigint, before_id bigint, max_rows integer)
    returns table (id bigint) language plpgsql stable as $$
    declare
      conditions text := '';
      term text;
      first boolean := true;
    begin
      for term in select t::text from unnest(parley_search_terms(q)) t order by length(t::text) desc, t::text loop
        conditions := conditions || format(' and m.search %s %L::tsquery', case when first then '@@' else '@@#' end, term);
        first := false;
      end loop;
      if first then return; end if;
      return query execute
        'select m.id from messages m where m.deleted_at is null' || conditions
        || ' and m.conversation_id in (select p.conversation_id from participants p where p.user_id = $1)'
        || case when in_conversation is null then '' else ' and m.conversation_id = $2' end
        || case when before_id is null then '' else ' and m.id < $3' end
        || ' order by m.id desc limit $4'
        using reader, in_conversation, before_id, max_rows;
    end
    $$`,
  // Users whose name has a word starting with each term, by folded name (byte order) then id, after a
  // (search_name, id) position: planned per search too.
  String.raw`create or replace function parley_search_users(q text, after_name text, after_id bigint, max_rows integer)
    returns table (id bigint, name text, avatar_url text, search_name text) language plpgsql stable as $$
    declare
      conditions text := '';
      term text;
      first boolean := true;
    begin
      for term in select t::text from unnest(parley_search_terms(q)) t order by length(t::text) desc, t::text loop
        conditions := conditions || format(' and to_tsvector(''simple''::regconfig, u.search_name) %s %L::tsquery', case when first then '@@' else '@@#' end, term);
        first := false;
      end loop;
      if first then return; end if;
      return query execute
        'select u.id, u.name, u.avatar_url, u.search_name from users u where true' || conditions
        || case when after_name is null then '' else ' and (u.search_name collate "C", u.id) > ($1 collate "C", $2)' end
        || ' order by u.search_name collate "C", u.id limit $3'
        using after_name, after_id, max_rows;
    end
    $$`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
