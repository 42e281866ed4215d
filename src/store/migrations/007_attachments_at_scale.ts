import { sql, type Kysely } from 'kysely';

// Attachments at scale: an image's dimensions (after its EXIF orientation) and the storage key of its WebP
// thumbnail (at most 320 px), all null for files that are not images (or that could not be read as one).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table attachments
      add column width int,
      add column height int,
      add column thumbnail_key text
  `.execute(db);
}
