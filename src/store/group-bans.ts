// Group bans (v1.2): who may not be added to a group again, until `until` (null: until unbanned). Written and
// checked under the group's write lock (see locks.ts), so a ban and an add of the same user never both pass.
import { holds, inForce } from './bans.js';
import { idIn } from './bulk.js';
import type { DB } from './database.js';

export interface GroupBan {
  readonly user_id: number;
  readonly reason: string | null;
  readonly until: Date | null;
  readonly created_at: Date;
}

const COLUMNS = ['user_id', 'reason', 'until', 'created_at'] as const;

/** Bans a user from a group, or renews their ban with this reason and period. */
export async function upsertGroupBan(
  db: DB,
  ban: { conversation_id: number; user_id: number; banned_by: number; reason: string | null; until: Date | null },
  now: Date,
): Promise<GroupBan> {
  return db
    .insertInto('group_bans')
    .values({ ...ban, created_at: now })
    .onConflict((oc) => oc.columns(['conversation_id', 'user_id']).doUpdateSet({ banned_by: ban.banned_by, reason: ban.reason, until: ban.until, created_at: now }))
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Lifts a ban still in force; false when there is none. */
export async function deleteGroupBan(db: DB, conversationId: number, userId: number, now: Date): Promise<boolean> {
  const rows = await db
    .deleteFrom('group_bans')
    .where('conversation_id', '=', conversationId)
    .where('user_id', '=', userId)
    .returning('until')
    .execute();
  return rows.some((r) => holds(r.until, now));
}

/** A group's bans in force at `now`, most recent first. */
export async function activeGroupBans(db: DB, conversationId: number, now: Date): Promise<GroupBan[]> {
  return db
    .selectFrom('group_bans')
    .select(COLUMNS)
    .where('conversation_id', '=', conversationId)
    .where(inForce('until', now))
    .orderBy('created_at', 'desc')
    .orderBy('user_id')
    .execute();
}

/** Which of userIds are banned from the group at `now`. */
export async function bannedFromGroup(db: DB, conversationId: number, userIds: readonly number[], now: Date): Promise<number[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectFrom('group_bans')
    .select('user_id')
    .where('conversation_id', '=', conversationId)
    .where(idIn('user_id', userIds))
    .where(inForce('until', now))
    .orderBy('user_id')
    .execute();
  return rows.map((r) => r.user_id);
}
