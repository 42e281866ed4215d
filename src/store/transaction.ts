// One transaction per use case. PostgreSQL may abort one of two transactions that wait on each other
// (deadlock) or, under stricter isolation, a serialization failure; both are safe to run again from the top,
// so they are retried here, a few times with a jittered pause, and never reach a client as a 500.
import type { Transaction } from 'kysely';
import type { DB } from './database.js';
import type { Schema } from './schema.js';

export type Tx = Transaction<Schema>;

/** SQLSTATEs after which the whole transaction can simply run again. */
const RETRYABLE_CODES = new Set(['40001', '40P01']);

export function isRetryableTransactionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && RETRYABLE_CODES.has(e.code)) return true;
  // A prepared statement planned before another node's migration changed a table it reads.
  return e.code === '0A000' && typeof e.message === 'string' && e.message.includes('cached plan must not change result type');
}

export const MAX_TRANSACTION_ATTEMPTS = 5;

/** Runs fn in a transaction; retried from the top when PostgreSQL aborted it for a reason a rerun removes. */
export async function inTransaction<T>(db: DB, fn: (trx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn);
    } catch (err) {
      if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isRetryableTransactionError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }
}
