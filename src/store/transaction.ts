// One transaction per use case. PostgreSQL may abort one of two transactions that wait on each other
// (deadlock) or, under stricter isolation, a serialization failure; both are safe to run again from the top,
// so they are retried here, a few times with a jittered pause, and never reach a client as a 500.
import type { Transaction } from 'kysely';
import type { DB } from './database.js';
import { isRetryableTransactionError } from './retryable-errors.js';
import type { Schema } from './schema.js';

export type Tx = Transaction<Schema>;

export const MAX_TRANSACTION_ATTEMPTS = 5;

/** Runs work (one transaction, or one statement that is its own) again while it fails for a reason a rerun removes. */
export async function retrying<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isRetryableTransactionError(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }
}

/** Runs fn in a transaction; retried from the top when PostgreSQL aborted it for a reason a rerun removes. */
export function inTransaction<T>(db: DB, fn: (trx: Tx) => Promise<T>): Promise<T> {
  return retrying(() => db.transaction().execute(fn));
}
