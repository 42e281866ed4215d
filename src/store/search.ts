// Search: the SQL of message search and user search, both the database functions of migration 004 (each
// search planned for its own words; see there), the same on PostgreSQL and PGlite.
import { sql } from 'kysely';
import type { DB } from './database.js';

/**
 * Ids of the messages (not deleted) of the conversations `readerId` is a participant of now, optionally one
 * of them and older than `beforeId`, whose words match every word of `q` as a prefix (case and accents
 * folded): newest first, at most `limit`.
 */
export async function searchMessageIds(
  db: DB,
  readerId: number,
  q: string,
  options: { conversationId?: number; beforeId?: number; limit: number },
): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    select id from parley_search_messages(${readerId}::bigint, ${q}::text, ${options.conversationId ?? null}::bigint,
      ${options.beforeId ?? null}::bigint, ${options.limit}::integer)`.execute(db);
  return rows.map((r) => r.id);
}

export interface UserMatch {
  readonly id: number;
  readonly name: string;
  readonly avatar_url: string | null;
  /** The folded name: the order of the results, with the id (what a cursor holds). */
  readonly search_name: string;
}

/**
 * Users with a word of their name starting with each word of `q` (case and accents folded), by folded name
 * (byte order) and id, after the position `after`: at most `limit`.
 */
export async function searchUsers(db: DB, q: string, options: { after?: { name: string; id: number }; limit: number }): Promise<UserMatch[]> {
  const { rows } = await sql<UserMatch>`
    select id, name, avatar_url, search_name from parley_search_users(${q}::text, ${options.after?.name ?? null}::text,
      ${options.after?.id ?? null}::bigint, ${options.limit}::integer)`.execute(db);
  return rows;
}
