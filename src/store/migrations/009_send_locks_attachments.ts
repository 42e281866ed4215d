import { sql, type Kysely } from 'kysely';
import { SEND_MESSAGES_FUNCTION } from './003_chat_features.js';

// The send function of migration 003, with the attachments it sends locked (key share, ascending id) right
// after the conversations. Without the lock, a send of an upload that the attachment sweeper
// (src/chat/attachment-sweeper.ts) had locked to delete passed its check on the row still there, then failed
// its insert on the foreign key once the sweeper committed: a 500, and with it every other send of the batch.
// With it, the send waits for the sweeper and its check then finds the upload gone ('attachment_not_yours',
// 422); and an upload a send holds is skipped by the sweeper (FOR UPDATE SKIP LOCKED), so a send never
// loses its file to a sweep. Nothing else locks attachments after conversations, so the order deadlocks nothing.
const ANCHOR = 'order by id for no key update;\n';
const LOCK_ATTACHMENTS = `
      -- Lock: the attachments sent, in ascending id (key share: sends do not wait for each other).
      perform 1 from attachments
        where id in (select (d ->> 'attachment_id')::bigint from jsonb_array_elements(drafts) d)
        order by id for key share;
`;

export function sendFunctionLockingAttachments(): string {
  if (SEND_MESSAGES_FUNCTION.split(ANCHOR).length !== 2) throw new Error('migration 009: the send function of 003 is not the expected one');
  return SEND_MESSAGES_FUNCTION.replace(ANCHOR, ANCHOR + LOCK_ATTACHMENTS);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(sendFunctionLockingAttachments()).execute(db);
}
