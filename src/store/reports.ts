// Reports of messages (v1.2): written by participants (once per reporter and message), read and resolved by the
// host app's backend. Resolved under the reported message's conversation write lock (see locks.ts), and only
// while open, so a report is resolved once.
import type { DB } from './database.js';
import type { ReportAction, ReportReason, ReportStatus } from './schema.js';

export interface ReportRow {
  readonly id: number;
  readonly message_id: number;
  readonly conversation_id: number;
  readonly reporter_id: number;
  readonly reason: ReportReason;
  readonly note: string | null;
  readonly status: ReportStatus;
  readonly action: ReportAction | null;
  readonly created_at: Date;
  readonly resolved_at: Date | null;
}

/** The new report; undefined when this reporter reported the message already. */
export async function insertReport(
  db: DB,
  report: { message_id: number; conversation_id: number; reporter_id: number; reason: ReportReason; note: string | null },
  now: Date,
): Promise<ReportRow | undefined> {
  return db
    .insertInto('message_reports')
    .values({ ...report, created_at: now })
    .onConflict((oc) => oc.columns(['message_id', 'reporter_id']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findReport(db: DB, id: number): Promise<ReportRow | undefined> {
  return db.selectFrom('message_reports').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Resolves an open report; undefined when it is not open (resolved already, or gone). */
export async function resolveReport(db: DB, id: number, action: ReportAction, now: Date): Promise<ReportRow | undefined> {
  return db
    .updateTable('message_reports')
    .set({ status: 'resolved', action, resolved_at: now })
    .where('id', '=', id)
    .where('status', '=', 'open')
    .returningAll()
    .executeTakeFirst();
}

/** A page of reports with a status, newest first, before report id `before` (exclusive). */
export async function reportPage(db: DB, options: { status: ReportStatus; before?: number; limit: number }): Promise<ReportRow[]> {
  let query = db.selectFrom('message_reports').selectAll().where('status', '=', options.status).orderBy('id', 'desc').limit(options.limit);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  return query.execute();
}

/** The sender of the message a report is about. */
export async function reportedSenderId(db: DB, reportId: number): Promise<number> {
  const row = await db
    .selectFrom('message_reports as r')
    .innerJoin('messages as m', 'm.id', 'r.message_id')
    .select('m.sender_id')
    .where('r.id', '=', reportId)
    .executeTakeFirstOrThrow();
  return row.sender_id;
}
