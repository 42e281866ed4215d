// The transactional outbox's rows (migration 005; docs/notifications.md). Writers insert in the action's own
// transaction (one multi-row INSERT); workers on every node claim due rows with FOR UPDATE SKIP LOCKED, so a
// row is delivered by one node at a time, then delete it (delivered), reschedule it (retry) or mark it failed.
import { sql } from 'kysely';
import { chunks } from './bulk.js';
import type { DB } from './database.js';
import type { Tx } from './transaction.js';

/**
 * The worker's bookkeeping (claims, deletes of delivered rows) commits without waiting for the WAL's flush to
 * disk (`synchronous_commit` off for that statement's own transaction): under load a flush per claim and per
 * delete queued behind the sends' commits and halved their rate. What a database crash can lose is the last
 * moments' bookkeeping, never a row: a delivered row not yet deleted is delivered again (at least once), a lost
 * lease is claimed again. The action's own transaction, which writes the rows, keeps the durable commit.
 */
const ASYNC_COMMIT = sql`select set_config('synchronous_commit', 'off', true)`;

export interface OutboxDraft {
  /** The deliverer: 'webhook', 'push', ... (src/delivery/outbox-worker.ts). */
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

/** Inserts the rows (in the caller's transaction, so they commit or roll back with the action), in statements of ROWS_PER_STATEMENT. */
export async function insertOutbox(db: DB | Tx, rows: readonly OutboxDraft[]): Promise<void> {
  for (const chunk of chunks(rows)) {
    await db
      .insertInto('outbox')
      .values(
        chunk.map((r) => ({
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
}

/** Rows written leased to the writer (to deliver after its commit), and how many were written to wait their turn. */
export interface LeasedRows {
  readonly leased: OutboxRow[];
  readonly waiting: number;
}

/**
 * Inserts the rows of an action that holds its conversations' locks exclusively (a send), in one statement;
 * a row that is the first waiting one of its conversation, kind and target (or has no conversation) is
 * inserted already leased to the caller until `leaseUntil` and comes back, for the caller to deliver at once
 * after its commit without a claim (no other node claims it while the lease runs; if the caller dies, it is
 * claimed when the lease ends). The other rows wait their turn and are claimed as usual. Exclusive locks
 * matter: a concurrent writer of the same conversation waits for this commit, then sees these rows.
 */
export async function insertOutboxLeasingHeads(db: DB | Tx, rows: readonly OutboxDraft[], leaseUntil: Date): Promise<LeasedRows> {
  if (rows.length === 0) return { leased: [], waiting: 0 };
  const drafts = rows.map((r) => ({ kind: r.kind, target: r.target ?? '', conversation_id: r.conversation_id, type: r.type, payload: r.payload }));
  const { rows: inserted } = await sql<OutboxRow & { leased: boolean }>`
    insert into outbox (kind, target, conversation_id, type, payload, next_attempt_at)
    select r.kind, r.target, r.conversation_id, r.type, r.payload,
      case when r.conversation_id is null or not exists (
          select 1 from outbox e
          where e.conversation_id = r.conversation_id and e.kind = r.kind and e.target = r.target and e.failed_at is null)
        then ${leaseUntil}::timestamptz else now() end
    from rows from (jsonb_to_recordset(${JSON.stringify(drafts)}::jsonb) as (kind text, target text, conversation_id bigint, type text, payload jsonb))
      with ordinality as r(kind, target, conversation_id, type, payload, ord)
    order by r.ord
    returning id, kind, target, conversation_id, type, payload, attempts, created_at, next_attempt_at > created_at as leased`.execute(db);
  const leased = inserted
    .filter((r) => r.leased)
    .map(({ leased: _, ...r }) => ({ ...r, id: Number(r.id), conversation_id: r.conversation_id === null ? null : Number(r.conversation_id), created_at: new Date(r.created_at) }))
    .sort((a, b) => a.id - b.id);
  return { leased, waiting: inserted.length - leased.length };
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
    with bookkeeping as (${ASYNC_COMMIT})
    update outbox set next_attempt_at = ${leaseUntil}
    where exists (select from bookkeeping) and id in (
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
  await sql`with bookkeeping as (${ASYNC_COMMIT}) delete from outbox where exists (select from bookkeeping) and id = any(${ids.map(String)}::bigint[])`.execute(db);
}

/** Ends the lease of rows at once: they are due, to be claimed in their turn. */
export async function releaseOutboxRows(db: DB | Tx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`with bookkeeping as (${ASYNC_COMMIT}) update outbox set next_attempt_at = now() where exists (select from bookkeeping) and id = any(${ids.map(String)}::bigint[])`.execute(db);
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
