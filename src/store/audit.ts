// The audit log (v1.2): who did what to whom, one row per moderation or compliance action, written in the
// action's own transaction (so an action and its entry commit together or not at all). Read newest first by the
// server key: GET /audit.
import type { DB } from './database.js';
import type { Tx } from './transaction.js';

export const AUDIT_ACTIONS = [
  'role_changed',
  'participant_removed',
  'group_ban',
  'group_unban',
  'group_deleted',
  'group_frozen',
  'group_unfrozen',
  'slow_mode_changed',
  'report_resolved',
  'user_banned',
  'user_unbanned',
  'user_erased',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  /** The user who acted; null for the host app's backend (the server key). */
  readonly actor_id: number | null;
  readonly action: AuditAction;
  readonly conversation_id?: number | null;
  readonly target_user_id?: number | null;
  readonly message_id?: number | null;
  /** What else the action was about (a role, a reason, a period), as JSON. */
  readonly details?: Record<string, unknown>;
}

export interface AuditRecord {
  readonly id: number;
  readonly at: Date;
  readonly actor_id: number | null;
  readonly action: AuditAction;
  readonly conversation_id: number | null;
  readonly target_user_id: number | null;
  readonly message_id: number | null;
  readonly details: Record<string, unknown>;
}

/** Writes one entry in the action's transaction. */
export async function recordAudit(trx: Tx | DB, entry: AuditEntry): Promise<void> {
  await trx
    .insertInto('audit_log')
    .values({
      actor_id: entry.actor_id,
      action: entry.action,
      conversation_id: entry.conversation_id ?? null,
      target_user_id: entry.target_user_id ?? null,
      message_id: entry.message_id ?? null,
      details: JSON.stringify(entry.details ?? {}),
    })
    .execute();
}

/** A page of the log, newest first, before entry id `before` (exclusive), filtered by actor and conversation. */
export async function auditPage(
  db: DB,
  options: { before?: number; limit: number; actorId?: number; conversationId?: number },
): Promise<AuditRecord[]> {
  let query = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(options.limit);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  if (options.actorId !== undefined) query = query.where('actor_id', '=', options.actorId);
  if (options.conversationId !== undefined) query = query.where('conversation_id', '=', options.conversationId);
  return (await query.execute()) as AuditRecord[];
}
