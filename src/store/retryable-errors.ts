// Database errors after which the same work can simply run again.

interface PgErrorFields {
  readonly code?: unknown;
  readonly routine?: unknown;
  readonly message?: unknown;
}

const fields = (err: unknown): PgErrorFields | null => (err && typeof err === 'object' ? (err as PgErrorFields) : null);

/**
 * "cached plan must not change result type" (SQLSTATE 0A000): a prepared statement was planned before a table
 * it reads changed shape (another node's migration added a column a `select *` returns). PostgreSQL raises it
 * from RevalidateCachedQuery; the message is matched too, in English, for servers that do not send the routine.
 */
export function isStalePlanError(err: unknown): boolean {
  const e = fields(err);
  if (!e || e.code !== '0A000') return false;
  return e.routine === 'RevalidateCachedQuery' || (typeof e.message === 'string' && e.message.includes('cached plan must not change result type'));
}

/**
 * Errors after which a whole transaction can run again from the top: serialization_failure (40001),
 * deadlock_detected (40P01), and a stale prepared plan (the connection it ran on is discarded on release, and
 * every connection prepared before it is replaced when next checked out, so the rerun plans afresh).
 */
export function isRetryableTransactionError(err: unknown): boolean {
  const e = fields(err);
  if (!e) return false;
  return e.code === '40001' || e.code === '40P01' || isStalePlanError(err);
}
