import { sql, type Kysely } from 'kysely';

// A user's reactions by user (an export reads them a page at a time, an erasure deletes them in batches): without
// it each page scans every reaction of every message.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index message_reactions_by_user on message_reactions (user_id, message_id)`.execute(db);
}
