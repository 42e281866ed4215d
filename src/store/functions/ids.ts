// parley_ids(ids): the ids of a bigint[] as rows, for the statements that take a list of ids as one parameter (one
// text whatever the list's length). unnest estimates a parameter at 100 rows but a literal at its length, so each
// call's own plan looked cheaper than the shared one and PostgreSQL planned such statements anew on every call: 0.8
// ms of planning to hydrate one message in 0.05 ms, most of the database's work in a reconnect storm's syncs. A
// function's estimate is fixed, so the shared plan costs what a call's own would and is kept (planned once per
// connection). rows 10: a page or a handful; lists of ids are joined by key, which any small estimate chooses. Only
// for statements whose work per id does not vary with the data: a join by a unique key, or a read that stops after a
// few rows in index order (parley_participants_preview); where the rows per id vary widely, a shared plan fits none.
// A repeatable definition (src/store/functions/index.ts).
export const IDS = `create or replace function parley_ids(ids bigint[]) returns setof bigint
    language plpgsql stable strict
    rows 10
    as $$
    begin
      return query select unnest(ids);
    end
    $$`;
