// The database functions as they run, each in one file: repeatable definitions, as Flyway's repeatable
// migrations. After the versioned migrations (which are history, frozen once landed), each definition whose
// text differs from the one last applied (a SHA-256 kept in parley_definitions) is applied again, in one
// transaction under an advisory lock, so nodes starting together apply them once. To change a function, edit its
// file: a full `create or replace` definition.
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { FEED_HORIZON } from './feed-horizon.js';
import { IDS } from './ids.js';
import { MESSAGE_PAGE } from './message-page.js';
import { PARTICIPANTS_PREVIEW } from './participants-preview.js';
import { SEARCH_USERS } from './search-users.js';
import { SEND } from './send.js';

// Earlier releases' send functions (parley_send_messages, parley_send_messages_with_outbox) are no longer
// defined here but are left in the database, unchanged, for nodes of the previous release during a rolling
// upgrade; nothing of this release calls them.
// In the order they are applied: a function before those that use it.
export const DEFINITIONS: readonly { readonly name: string; readonly sql: string }[] = [
  { name: 'parley_ids', sql: IDS },
  { name: 'parley_participants_preview', sql: PARTICIPANTS_PREVIEW },
  { name: 'parley_feed_horizon', sql: FEED_HORIZON },
  { name: 'parley_send', sql: SEND },
  { name: 'parley_message_page', sql: MESSAGE_PAGE },
  { name: 'parley_search_users', sql: SEARCH_USERS },
];

/** The advisory lock key of applying definitions (any bigint unique to it). */
const DEFINITIONS_LOCK = 7_031_982_451_006_003n;

const checksum = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Applies the definitions that changed since they were last applied; returns their names. */
export async function applyDefinitions(db: Kysely<unknown>): Promise<string[]> {
  // One transaction under the lock, the table's creation included: nodes starting together on a fresh database
  // would otherwise race on it.
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${DEFINITIONS_LOCK})`.execute(trx);
    await sql`create table if not exists parley_definitions (name text primary key, checksum text not null, applied_at timestamptz not null default now())`.execute(trx);
    const { rows } = await sql<{ name: string; checksum: string }>`select name, checksum from parley_definitions`.execute(trx);
    const applied = new Map(rows.map((r) => [r.name, r.checksum]));
    const changed: string[] = [];
    for (const definition of DEFINITIONS) {
      const sum = checksum(definition.sql);
      if (applied.get(definition.name) === sum) continue;
      await sql.raw(definition.sql).execute(trx);
      await sql`insert into parley_definitions (name, checksum) values (${definition.name}, ${sum})
        on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`.execute(trx);
      changed.push(definition.name);
    }
    return changed;
  });
}
