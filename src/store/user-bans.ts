// Users banned from the whole service (v1.2), until `until` (null: until unbanned). Read with a token's user
// (store/users.ts ensureUser: every node forgets the user at the ban's commit) and by the send function
// (store/functions/send.ts), so a ban holds on every node from its commit.
import { holds } from './bans.js';
import type { DB } from './database.js';

export interface UserBan {
  readonly user_id: number;
  readonly reason: string | null;
  readonly until: Date | null;
}

/** Bans a user, or renews their ban with this reason and period. */
export async function upsertUserBan(db: DB, ban: UserBan, now: Date): Promise<UserBan> {
  return db
    .insertInto('user_bans')
    .values({ ...ban, created_at: now })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ reason: ban.reason, until: ban.until, created_at: now }))
    .returning(['user_id', 'reason', 'until'])
    .executeTakeFirstOrThrow();
}

/** Lifts a ban in force; false when there is none. */
export async function deleteUserBan(db: DB, userId: number, now: Date): Promise<boolean> {
  const rows = await db.deleteFrom('user_bans').where('user_id', '=', userId).returning('until').execute();
  return rows.some((r) => holds(r.until, now));
}

