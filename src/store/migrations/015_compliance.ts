import { sql, type Kysely } from 'kysely';

// Compliance (docs/api.md "Compliance"; docs/deployment.md: Erasure, Message retention).
//
// users.erased_at: set when an erasure is asked for, under the user's row lock; from then on the user's tokens are
// refused and the send function refuses their messages (it share-locks the sender's row first, so a send either
// commits before the mark or sees it).
//
// erasure_jobs: one row per erased user, the progress of the background erasure (src/chat/erasure.ts): the phase
// it is in and, within a phase, the last id handled (`after_id`), so a restart resumes where it stopped. A batch
// runs under the row's lock (FOR UPDATE SKIP LOCKED): one node at a time works on a job.
//
// file_deletions: storage keys of attachment files whose rows were deleted (erasure, message retention), written
// in the same transaction as the deletion; the file is deleted after the commit, then its entry. A crash between
// the two leaves the entry, and the next pass deletes the file: no file outlives its row for good.
//
// Indexes: messages by sender and forwards by original sender (an erasure and an export walk a user's messages by
// id), attachments by uploader (an erasure deletes them), and the foreign keys a hard delete of messages
// (retention) checks: replies (reply_to_id) and hidden messages (message_id).
const statements = [
  `alter table users add column erased_at timestamptz`,
  `create table erasure_jobs (
     user_id bigint primary key references users (id),
     messages text not null check (messages in ('erase', 'keep')),
     phase text not null default 'groups',
     after_id bigint not null default 0,
     after_seq bigint not null default 0,
     messages_erased bigint not null default 0,
     requested_at timestamptz not null default now(),
     completed_at timestamptz
   )`,
  `create index erasure_jobs_pending on erasure_jobs (requested_at) where completed_at is null`,
  `create table file_deletions (
     storage_key text primary key,
     queued_at timestamptz not null default now()
   )`,
  `create index messages_by_sender on messages (sender_id, id)`,
  `create index messages_forwarded_from_sender on messages (forwarded_from_sender_id, id) where forwarded_from_sender_id is not null`,
  `create index attachments_by_uploader on attachments (uploader_id, id)`,
  `create index messages_by_reply_to on messages (reply_to_id) where reply_to_id is not null`,
  `create index hidden_messages_by_message on hidden_messages (message_id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
