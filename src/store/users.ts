// Users: the host application's users as Parley keeps them (profile, last seen).
import type { DB } from './database.js';

export async function setLastSeen(db: DB, userId: number, at: Date): Promise<void> {
  await db.updateTable('users').set({ last_seen_at: at }).where('id', '=', userId).execute();
}

/** When each of the users was last seen online (users never seen are missing). */
export async function lastSeen(db: DB, userIds: readonly number[]): Promise<Map<number, Date | null>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'last_seen_at']).where('id', 'in', userIds).execute();
  return new Map(rows.map((r) => [r.id, r.last_seen_at]));
}
