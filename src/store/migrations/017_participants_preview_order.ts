import { sql, type Kysely } from 'kysely';

// A conversation's participants in the order of its participants_preview (owners, then admins, then members; each
// by seniority): the preview reads its first ten from here and stops, so it costs the same for a group of 10,000
// as for a direct conversation, and one plan fits both (src/store/functions/participants-preview.ts). "if not
// exists": on a large table an operator creates it beforehand, concurrently (docs/deployment.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index if not exists participants_preview_order on participants
    (conversation_id, (case role when 'owner' then 0 when 'admin' then 1 else 2 end), joined_at, user_id)`.execute(db);
}
