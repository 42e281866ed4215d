// Users: the host application's users as Parley keeps them (profile, last seen), and the profiles this node
// knows, so a token's user costs no query when its claims are what this node last read or wrote.
//
// Users are never deleted, so "known to exist" stays true. A known profile can go stale when another node
// writes the user (PUT /users/{id} there does not reach this cache). That is accepted: the cache only decides
// whether a token's claims are written, and what it leaves out is claims this node already saw written, i.e.
// not news. After a PUT on node B, a request on node A with a token whose claims A already applied keeps the
// PUT's profile (newer than the token), while claims new to A still update the user, as on one node.
import { idIn } from './bulk.js';
import { LruCache } from '../util/lru-cache.js';
import type { DB } from './database.js';

export interface Profile {
  readonly name: string;
  readonly avatar_url: string | null;
  /** Erased (DELETE /users/{id}): the profile is "Deleted user" for good and the user's tokens are refused. */
  readonly erased?: boolean;
}

/** A profile update: an absent field is left as it is. */
export interface ProfileChanges {
  readonly name?: string;
  readonly avatar_url?: string | null;
}

export const KNOWN_USERS_PER_NODE = 10_000;

// Per database (its root Kysely instance): tests and tools may run several apps in one process.
const knownByDb = new WeakMap<DB, LruCache<number, Profile>>();

function knownUsers(db: DB): LruCache<number, Profile> | null {
  // A transaction's writes may still be rolled back, and it is another Kysely instance: not cached.
  if (db.isTransaction) return null;
  let users = knownByDb.get(db);
  if (!users) knownByDb.set(db, (users = new LruCache(KNOWN_USERS_PER_NODE)));
  return users;
}

/** Would writing these changes change the profile? */
export function profileDiffers(changes: ProfileChanges, profile: Profile): boolean {
  return (changes.name !== undefined && changes.name !== profile.name) || (changes.avatar_url !== undefined && changes.avatar_url !== profile.avatar_url);
}

/** Forgets what this node knew of a user (their erasure): the next request of theirs reads the user again. */
export function forgetKnownUser(db: DB, id: number): void {
  knownUsers(db)?.delete(id);
}

/** Inserts or updates a user; `created` tells which. An erased user is left as it is: `erased` and no user. */
export async function upsertUser(db: DB, id: number, changes: ProfileChanges, now: Date) {
  const row = await db
    .insertInto('users')
    .values({ id, name: changes.name ?? '', avatar_url: changes.avatar_url ?? null, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        name: changes.name === undefined ? eb.ref('users.name') : eb.ref('excluded.name'),
        avatar_url: changes.avatar_url === undefined ? eb.ref('users.avatar_url') : eb.ref('excluded.avatar_url'),
        updated_at: now,
      })).where('users.erased_at', 'is', null),
    )
    .returning(['id', 'name', 'avatar_url', 'created_at'])
    .executeTakeFirst();
  if (!row) {
    knownUsers(db)?.set(id, { name: '', avatar_url: null, erased: true });
    return { erased: true as const };
  }
  knownUsers(db)?.set(id, { name: row.name, avatar_url: row.avatar_url });
  return { user: { id: row.id, name: row.name, avatar_url: row.avatar_url }, created: row.created_at.getTime() === now.getTime(), erased: false as const };
}

/**
 * Makes sure a user exists with these changes applied: no query when they are what this node last read or
 * wrote for the user, a write straight away when they differ from it, else a read first. False when the user
 * is erased (nothing is written).
 */
export async function ensureUser(db: DB, id: number, changes: ProfileChanges, now: Date): Promise<boolean> {
  const known = knownUsers(db)?.get(id);
  if (known) {
    if (known.erased) return false;
    return profileDiffers(changes, known) ? !(await upsertUser(db, id, changes, now)).erased : true;
  }
  const existing = await db.selectFrom('users').select(['name', 'avatar_url', 'erased_at']).where('id', '=', id).executeTakeFirst();
  if (existing?.erased_at != null) {
    knownUsers(db)?.set(id, { name: existing.name, avatar_url: existing.avatar_url, erased: true });
    return false;
  }
  if (!existing || profileDiffers(changes, existing)) return !(await upsertUser(db, id, changes, now)).erased;
  knownUsers(db)?.set(id, { name: existing.name, avatar_url: existing.avatar_url });
  return true;
}

/**
 * Whether the user is erased, and whether a service ban holds at `now`: read on every authenticated request
 * (http/auth.ts) and never cached, so an erasure and a ban hold on every node from their commit. Neither for a
 * user not yet stored.
 */
export async function userStanding(db: DB, id: number, now: Date): Promise<{ erased: boolean; banned: boolean }> {
  const row = await db
    .selectFrom('users as u')
    .select((eb) => [
      eb('u.erased_at', 'is not', null).as('erased'),
      eb.exists(eb.selectFrom('user_bans as b').select('b.user_id').whereRef('b.user_id', '=', 'u.id').where((w) => w.or([w('b.until', 'is', null), w('b.until', '>', now)]))).as('banned'),
    ])
    .where('u.id', '=', id)
    .executeTakeFirst();
  return { erased: row?.erased === true, banned: row?.banned === true };
}

/** The ids among `ids` of users Parley has never seen, or has erased (nobody may add them anywhere). */
export async function missingUsers(db: DB, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('users').select('id').where(idIn('id', ids)).where('erased_at', 'is', null).execute();
  const found = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !found.has(id));
}

export async function setLastSeen(db: DB, userId: number, at: Date): Promise<void> {
  await db.updateTable('users').set({ last_seen_at: at }).where('id', '=', userId).execute();
}

/** When each of the users was last seen online (users never seen are missing). */
export async function lastSeen(db: DB, userIds: readonly number[]): Promise<Map<number, Date | null>> {
  if (userIds.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'last_seen_at']).where(idIn('id', userIds)).execute();
  return new Map(rows.map((r) => [r.id, r.last_seen_at]));
}
