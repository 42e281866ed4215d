// Blocks between users. Written under the lock of the pair's users (see locks.ts).
import type { DB } from './database.js';

/** Everyone the user has blocked or is blocked by: the users it cannot message directly. */
export async function messagingBlockedUserIds(db: DB, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('blocks')
    .select('blocked_id as id')
    .where('blocker_id', '=', userId)
    .union(db.selectFrom('blocks').select('blocker_id as id').where('blocked_id', '=', userId))
    .execute();
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

export async function isBlockedEitherWay(db: DB, a: number, b: number): Promise<boolean> {
  const row = await db
    .selectFrom('blocks')
    .select('blocker_id')
    .where((eb) =>
      eb.or([
        eb.and([eb('blocker_id', '=', a), eb('blocked_id', '=', b)]),
        eb.and([eb('blocker_id', '=', b), eb('blocked_id', '=', a)]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

/** The users a user has blocked, newest block first. */
export async function blockedUsers(db: DB, blockerId: number) {
  return db
    .selectFrom('blocks')
    .innerJoin('users', 'users.id', 'blocks.blocked_id')
    .select(['users.id', 'users.name', 'users.avatar_url'])
    .where('blocks.blocker_id', '=', blockerId)
    .orderBy('blocks.created_at', 'desc')
    .execute();
}

export async function insertBlock(db: DB, blockerId: number, blockedId: number, now: Date): Promise<void> {
  await db
    .insertInto('blocks')
    .values({ blocker_id: blockerId, blocked_id: blockedId, created_at: now })
    .onConflict((oc) => oc.columns(['blocker_id', 'blocked_id']).doNothing())
    .execute();
}

/** False when there was no such block. */
export async function deleteBlock(db: DB, blockerId: number, blockedId: number): Promise<boolean> {
  const row = await db.deleteFrom('blocks').where('blocker_id', '=', blockerId).where('blocked_id', '=', blockedId).returning('blocked_id').executeTakeFirst();
  return row !== undefined;
}
