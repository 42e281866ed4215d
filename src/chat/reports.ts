// Reports of messages (v1.2): a participant reports a message once (a MessageReported webhook tells the host
// app); the host app's backend reads the queue and resolves each report once: dismiss it, delete the message for
// everyone, or ban its sender from the service. Each a unit of work under the message's conversation lock.
import { recordAudit } from '../store/audit.js';
import { lockConversationOfMessage, lockUsers } from '../store/locks.js';
import { findVisibleMessage } from '../store/messages.js';
import { findMembership } from '../store/participants.js';
import { loadHistoryItems, userResource } from '../store/read-model.js';
import { findReport, insertReport, reportedSenderId, reportPage, resolveReport, type ReportRow } from '../store/reports.js';
import type { ReportAction, ReportReason, ReportStatus } from '../store/schema.js';
import type { DB } from '../store/database.js';
import { SERVER, type Actor, type ChatContext } from './context.js';
import type { Page } from './conversations.js';
import { decodeIdCursor } from './cursors.js';
import { ChatError, notFound } from '../contract/api-errors.js';
import { deleteForEveryone } from './messages.js';
import { iso, isoOrNull, type HistoryItem, type UserResource } from '../contract/resources.js';
import { unitOfWork } from './unit-of-work.js';
import { banUserIn } from './user-bans.js';

/** The longest note a report may carry, in characters. */
export const REPORT_NOTE_MAX_CHARS = 1000;

/** A report as its reporter is answered. */
export interface NewReportView {
  readonly id: number;
  readonly message_id: number;
  readonly reason: ReportReason;
  readonly status: ReportStatus;
}

/** A report as the server's queue shows it. */
export interface ReportView extends NewReportView {
  readonly note: string | null;
  readonly action: ReportAction | null;
  readonly created_at: string;
  readonly resolved_at: string | null;
  readonly reporter: UserResource;
  /** The message as history shows it (deleted_at set once deleted); null if it is gone for good. */
  readonly message: HistoryItem | null;
}

export async function reportMessage(
  ctx: ChatContext,
  actor: Actor,
  messageId: number,
  input: { reason: ReportReason; note?: string | null },
): Promise<NewReportView> {
  const note = input.note?.trim() || null;
  return unitOfWork(ctx, actor, async ({ trx, webhook }) => {
    // Read lock: the reporter's membership holds until the report is written.
    const conversation = await lockConversationOfMessage(trx, messageId, 'read');
    const message = conversation && (await findVisibleMessage(trx, messageId));
    if (!message || !(await findMembership(trx, message.conversation_id, actor.userId))) throw notFound('Message');
    const report = await insertReport(trx, { message_id: messageId, conversation_id: message.conversation_id, reporter_id: actor.userId, reason: input.reason, note }, new Date());
    if (!report) throw new ChatError('already_reported', 'You have reported this message already.');
    webhook('MessageReported', { report_id: report.id, message_id: messageId, conversation_id: message.conversation_id, reporter_id: actor.userId, reason: report.reason }, message.conversation_id);
    return { id: report.id, message_id: messageId, reason: report.reason, status: report.status };
  });
}

async function reportViews(db: DB, reports: readonly ReportRow[]): Promise<ReportView[]> {
  if (reports.length === 0) return [];
  const [messages, reporters] = await Promise.all([
    loadHistoryItems(db, [...new Set(reports.map((r) => r.message_id))]),
    db.selectFrom('users').select(['id', 'name', 'avatar_url']).where('id', 'in', [...new Set(reports.map((r) => r.reporter_id))]).execute(),
  ]);
  const reporterById = new Map(reporters.map((u) => [u.id, userResource(u)]));
  return reports.map((r) => ({
    id: r.id,
    message_id: r.message_id,
    reason: r.reason,
    status: r.status,
    note: r.note,
    action: r.action,
    created_at: iso(r.created_at),
    resolved_at: isoOrNull(r.resolved_at),
    reporter: reporterById.get(r.reporter_id)!,
    message: messages.get(r.message_id) ?? null,
  }));
}

/** The reports with a status, newest first; the cursor is the last report's id. */
export async function listReports(ctx: ChatContext, options: { status: ReportStatus; cursor?: string; limit: number }): Promise<Page<ReportView>> {
  const rows = await reportPage(ctx.db, { status: options.status, before: decodeIdCursor(options.cursor), limit: options.limit + 1 });
  const page = rows.slice(0, options.limit);
  return { data: await reportViews(ctx.db, page), next_cursor: rows.length > options.limit ? String(page.at(-1)!.id) : null };
}

export async function resolve(ctx: ChatContext, reportId: number, action: ReportAction): Promise<ReportView> {
  const unlocked = await findReport(ctx.db, reportId);
  if (!unlocked) throw notFound('Report');
  const now = new Date();
  const resolved = await unitOfWork(ctx, SERVER, async (work) => {
    // A ban takes the sender's row before the conversation's (the lock order; banUserIn).
    const sender = action === 'ban_user' ? await reportedSenderId(work.trx, reportId) : null;
    if (sender !== null) await lockUsers(work.trx, [sender]);
    // The message's conversation, locked: the report is resolved once, and its message deleted once.
    await lockConversationOfMessage(work.trx, unlocked.message_id, 'write');
    const report = await resolveReport(work.trx, reportId, action, now);
    if (!report) throw new ChatError('conflict', 'This report is resolved already.');
    await recordAudit(work.trx, { actor_id: null, action: 'report_resolved', conversation_id: report.conversation_id, message_id: report.message_id, details: { report_id: report.id, action } });
    if (action === 'dismiss') return report;
    if (action === 'delete_message') {
      const message = await findVisibleMessage(work.trx, report.message_id);
      if (message) await deleteForEveryone(work, message, now); // deleted already: nothing more to do
    } else {
      await banUserIn(work, { user_id: sender!, reason: `report ${report.id}: ${report.reason}`, until: null }, now);
    }
    return report;
  });
  return (await reportViews(ctx.db, [resolved]))[0]!;
}
