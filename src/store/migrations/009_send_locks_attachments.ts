// The send function of migration 003, with the attachments it sends locked (key share, ascending id) right
// after the conversations. Without the lock, a send of an upload that the attachment sweeper
// (src/chat/attachment-sweeper.ts) had locked to delete passed its check on the row still there, then failed
// its insert on the foreign key once the sweeper committed: a 500, and with it every other send of the batch.
// With it, the send waits for the sweeper and its check then finds the upload gone ('attachment_not_yours',
// 422); and an upload a send holds is skipped by the sweeper (FOR UPDATE SKIP LOCKED), so a send never
// loses its file to a sweep. Nothing else locks attachments after conversations, so the order deadlocks nothing.
// It built that function by patching 003's text; the function now lives, as it runs, in
// src/store/functions/send-messages.ts, a repeatable definition applied after the migrations (a fresh database
// gets it there, and a database that ran this migration before has the same text already).
export async function up(): Promise<void> {}
