// The audit log as the host app's backend reads it (GET /audit): newest first, by actor or conversation.
import { auditPage, type AuditRecord } from '../store/audit.js';
import type { ChatContext } from './context.js';
import type { Page } from './conversations.js';
import { decodeIdCursor } from './cursors.js';
import { iso } from '../contract/resources.js';

/** An entry as GET /audit answers it: its time as ISO 8601. */
export type AuditEntryView = Omit<AuditRecord, 'at'> & { readonly at: string };

export async function listAudit(
  ctx: ChatContext,
  options: { cursor?: string; limit: number; actor_id?: number; conversation_id?: number },
): Promise<Page<AuditEntryView>> {
  const rows = await auditPage(ctx.db, { before: decodeIdCursor(options.cursor), limit: options.limit + 1, actorId: options.actor_id, conversationId: options.conversation_id });
  const page = rows.slice(0, options.limit).map((r) => ({ ...r, at: iso(r.at) }));
  return { data: page, next_cursor: rows.length > options.limit ? String(page.at(-1)!.id) : null };
}
