// Statements whose size grows with a group (a row per member, per member and URL; a list of members): PostgreSQL
// takes at most 65,535 parameters in one statement, so inserts are split into statements of at most
// ROWS_PER_STATEMENT rows (all in the caller's transaction), and a list of ids travels as one array parameter.
import { sql, type RawBuilder } from 'kysely';

/** Rows per insert statement: far below 65,535 parameters for any row of up to 65 columns. */
export const ROWS_PER_STATEMENT = 1000;

/** items in consecutive slices of at most size. */
export function* chunks<T>(items: readonly T[], size = ROWS_PER_STATEMENT): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** `column = any($1::bigint[])`: column is one of ids, however many, in one parameter. */
export function idIn(column: string, ids: readonly number[]): RawBuilder<boolean> {
  return sql<boolean>`${sql.ref(column)} = any(${ids.map(String)}::bigint[])`;
}
