// Search: the SQL of message search and user search, both the database functions of migration 004 (each
// search planned for its own words; see there), the same on PostgreSQL and PGlite.
import { ownMessageFilter } from './own-state.js';
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
  // What the reader cleared or hid for themselves is left out (v1.2).
  const { rows } = await sql<{ id: number }>`
    select s.id from parley_search_messages(${readerId}::bigint, ${q}::text, ${options.conversationId ?? null}::bigint,
      ${options.beforeId ?? null}::bigint, ${options.limit}::integer) s
    join messages on messages.id = s.id
    where ${ownMessageFilter(readerId)}
    order by s.id desc`.execute(db);
  return rows.map((r) => r.id);
}

export interface UserMatch {
  readonly id: number;
  readonly name: string;
  readonly avatar_url: string | null;
  /** 0: the name begins with a word of the search; 1: a later word of the name does. Results list 0 first. */
  readonly rank: number;
  /** The folded name: with the rank and the id, the order of the results (what a cursor holds). */
  readonly search_name: string;
}

/** A position in the results of a user search: after this user. */
export interface UserPosition {
  readonly rank: number;
  readonly name: string;
  readonly id: number;
}

/**
 * Users with a word of their name beginning with each word of `q` (case and accents folded): those whose
 * name begins with a word of `q` first, then the others, each by folded name (byte order) and id; after
 * the position `after`, at most `limit`.
 */
export async function searchUsers(db: DB, q: string, options: { after?: UserPosition; limit: number }): Promise<UserMatch[]> {
  const { after } = options;
  const { rows } = await sql<UserMatch>`
    select rank, id, name, avatar_url, search_name from parley_search_users(${q}::text, ${after?.rank ?? null}::integer,
      ${after?.name ?? null}::text, ${after?.id ?? null}::bigint, ${options.limit}::integer)`.execute(db);
  return rows;
}
