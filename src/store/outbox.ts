// The transactional outbox's rows (migration 005; docs/notifications.md). Writers insert in the action's own
// transaction (one multi-row INSERT); workers on every node claim due rows with FOR UPDATE SKIP LOCKED, so a
// row is delivered by one node at a time, then delete it (delivered), reschedule it (retry) or mark it failed.
import { sql } from 'kysely';
import type { DB } from './database.js';
import type { Tx } from './transaction.js';

export interface OutboxDraft {
  /** The deliverer: 'webhook', 'push', ... (src/notifications/outbox-worker.ts). */
  readonly kind: string;
  /** What the deliverer delivers to (a webhook URL); '' when the kind needs none. */
  readonly target?: string;
  /** Rows of a conversation are delivered in id order; null: no order kept. */
  readonly conversation_id: number | null;
  /** The event type (MessageSent, ...). */
  readonly type: string;
  readonly payload: unknown;
  readonly created_at?: Date;
}

export interface OutboxRow {
  readonly id: number;
  readonly kind: string;
  readonly target: string;
  readonly conversation_id: number | null;
  readonly type: string;
  readonly payload: unknown;
  readonly attempts: number;
  readonly created_at: Date;
}

/** Inserts the rows in one statement (inside the caller's transaction, so they commit or roll back with the action). */
export async function insertOutbox(db: DB | Tx, rows: readonly OutboxDraft[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('outbox')
    .values(
      rows.map((r) => ({
        kind: r.kind,
        target: r.target ?? '',
        conversation_id: r.conversation_id,
        type: r.type,
        payload: JSON.stringify(r.payload),
        ...(r.created_at ? { created_at: r.created_at } : {}),
        last_error: null,
        failed_at: null,
      })),
    )
    .execute();
}

/**
 * Claims up to `limit` due rows of the given kinds, in one statement: rows locked FOR UPDATE SKIP LOCKED
 * (another node's claim skips them) and leased until `leaseUntil` (next_attempt_at moved ahead, so no node
 * claims them again while they are being delivered; a node that dies leaves them to be claimed when the lease
 * ends). Only rows with no earlier row of the same conversation, kind and target still waiting are claimed (in
 * order per conversation; an earlier row that failed for good no longer holds the later ones back).
 */
export async function claimDue(db: DB | Tx, kinds: readonly string[], limit: number, now: Date, leaseUntil: Date): Promise<OutboxRow[]> {
  if (kinds.length === 0) return [];
  const { rows } = await sql<OutboxRow>`
    update outbox set next_attempt_at = ${leaseUntil}
    where id in (
      select o.id
      from outbox o
      where o.failed_at is null and o.next_attempt_at <= ${now} and o.kind = any(${[...kinds]}::text[])
        and (o.conversation_id is null or not exists (
          select 1 from outbox e
          where e.conversation_id = o.conversation_id and e.kind = o.kind and e.target = o.target
            and e.id < o.id and e.failed_at is null))
      order by o.id
      limit ${limit}
      for update skip locked)
    returning id, kind, target, conversation_id, type, payload, attempts, created_at`.execute(db);
  return rows.sort((a, b) => Number(a.id) - Number(b.id)).map((r) => ({ ...r, id: Number(r.id), conversation_id: r.conversation_id === null ? null : Number(r.conversation_id), created_at: new Date(r.created_at) }));
}

export async function deleteOutboxRows(db: DB | Tx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('outbox').where('id', 'in', [...ids]).execute();
}

export async function rescheduleOutboxRow(db: DB | Tx, id: number, at: Date, error: string): Promise<void> {
  await db.updateTable('outbox').set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: at, last_error: error.slice(0, 1000) })).where('id', '=', id).execute();
}

export async function failOutboxRow(db: DB | Tx, id: number, now: Date, error: string): Promise<void> {
  await db.updateTable('outbox').set((eb) => ({ attempts: eb('attempts', '+', 1), failed_at: now, last_error: error.slice(0, 1000) })).where('id', '=', id).execute();
}

/** Rows waiting (not failed) and the creation time of the oldest, for the metrics. */
export async function outboxBacklog(db: DB): Promise<{ pending: number; oldest: Date | null }> {
  const row = await db
    .selectFrom('outbox')
    .select((eb) => [eb.fn.countAll<number>().as('pending'), eb.fn.min('created_at').as('oldest')])
    .where('failed_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), oldest: row.oldest === null ? null : new Date(row.oldest as unknown as string) };
}

/** The earliest next_attempt_at of a waiting row (when the worker should look again), or null. */
export async function nextDueAt(db: DB): Promise<Date | null> {
  const row = await db.selectFrom('outbox').select((eb) => eb.fn.min('next_attempt_at').as('at')).where('failed_at', 'is', null).executeTakeFirstOrThrow();
  return row.at === null ? null : new Date(row.at as unknown as string);
}
