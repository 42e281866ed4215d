// Users: the host application's users as Parley keeps them (profile, last seen, erased), and the check of every
// token's user: created or refreshed, and refused when erased or banned, at no query when this node knows them
// (known-users.ts).
//
// A known profile can go stale when another node writes the user (PUT /users/{id} there does not reach this
// cache). That is accepted: the profile only decides whether a token's claims are written, and what it leaves out
// is claims this node already saw written, i.e. not news. After a PUT on node B, a request on node A with a token
// whose claims A already applied keeps the PUT's profile (newer than the token), while claims new to A still update
// the user, as on one node. A ban and an erasure are not left stale: every node forgets the user at their commit.
import type { ExpressionBuilder } from 'kysely';
import { inForce } from './bans.js';
import { idIn } from './bulk.js';
import type { DB } from './database.js';
import { knownUser, readGeneration, rememberUser, type KnownUser } from './known-users.js';
import type { Schema } from './schema.js';
import { turnBatched } from './turn-batches.js';

/** A profile update: an absent field is left as it is. */
export interface ProfileChanges {
  readonly name?: string;
  readonly avatar_url?: string | null;
}

/** Whether a user's tokens are accepted: yes, or not since their erasure (401), or not while banned (403). */
export type Standing = 'ok' | 'erased' | 'banned';

/** Would writing these changes change the profile? */
export function profileDiffers(changes: ProfileChanges, profile: KnownUser): boolean {
  return (changes.name !== undefined && changes.name !== profile.name) || (changes.avatar_url !== undefined && changes.avatar_url !== profile.avatar_url);
}

/** Whether a service ban of the user (users.id) holds at `now` (store/user-bans.ts). */
function bannedAt(eb: ExpressionBuilder<Schema, 'users'>, now: Date) {
  return eb
    .exists(eb.selectFrom('user_bans as b').select('b.user_id').whereRef('b.user_id', '=', 'users.id').where(inForce('b.until', now)))
    .as('banned');
}

/**
 * Inserts or updates a user; `created` tells which, `banned` whether a service ban holds. An erased user is left
 * as it is: `erased` and no user.
 */
export async function upsertUser(db: DB, id: number, changes: ProfileChanges, now: Date) {
  const since = readGeneration(db);
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
    .returning((eb) => ['id', 'name', 'avatar_url', 'created_at', bannedAt(eb, now)])
    .executeTakeFirst();
  if (!row) {
    rememberUser(db, id, { name: '', avatar_url: null, erased: true }, since);
    return { erased: true as const };
  }
  const banned = row.banned === true;
  if (!banned) rememberUser(db, id, { name: row.name, avatar_url: row.avatar_url }, since);
  const user = { id: row.id, name: row.name, avatar_url: row.avatar_url };
  return { user, created: row.created_at.getTime() === now.getTime(), banned, erased: false as const };
}

/**
 * A token's user: created with these changes when first seen, its profile refreshed when they differ (never once
 * erased, nor while banned), and their standing. No query when the changes are what this node last read or wrote
 * for a known user; a write straight away when they differ from it; else one read (profile, erasure and ban).
 */
export async function ensureUser(db: DB, id: number, changes: ProfileChanges, now: Date): Promise<Standing> {
  const known = knownUser(db, id);
  if (known) {
    if (known.erased) return 'erased';
    if (!profileDiffers(changes, known)) return 'ok';
    return standingOf(await upsertUser(db, id, changes, now));
  }
  if (db.isTransaction) return readStanding(db, id, changes, now);
  // Requests of a user this node does not know yet that arrive together (a client's channel authorizations and
  // its sync, after a reconnect) share one read, and one write if the profile changed: not one each.
  let reads = standingReads.get(db);
  if (reads === undefined) standingReads.set(db, (reads = new Map()));
  const key = JSON.stringify([id, changes.name ?? null, changes.avatar_url === undefined ? false : changes.avatar_url]);
  let standing = reads.get(key);
  if (standing === undefined) {
    standing = readStanding(db, id, changes, now).finally(() => reads.delete(key));
    reads.set(key, standing);
  }
  return standing;
}

/** The reads of unknown users under way on this node, per database, by user and claimed profile. */
const standingReads = new WeakMap<DB, Map<string, Promise<Standing>>>();

/** The users' rows as a token's check reads them (profile, erasure, a ban in force at `now`), by id. */
async function storedUsers(db: DB, ids: readonly number[], now: Date) {
  const rows = await db.selectFrom('users').select((eb) => ['id', 'name', 'avatar_url', 'erased_at', bannedAt(eb, now)]).where(idIn('id', ids)).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The unknown users of a turn's requests read together (store/turn-batches.ts): after a node dies, the others see
 * thousands of users at once. A batch tests bans at the latest of its requests' times.
 */
const storedUsersOfTurn = turnBatched(
  async (db, asked: readonly { readonly id: number; readonly now: Date }[]) => {
    const now = new Date(Math.max(...asked.map((a) => a.now.getTime())));
    const rows = await storedUsers(db, [...new Set(asked.map((a) => a.id))], now);
    return asked.map((a) => rows.get(a.id));
  },
);

async function readStanding(db: DB, id: number, changes: ProfileChanges, now: Date): Promise<Standing> {
  const since = readGeneration(db);
  const existing = db.isTransaction ? (await storedUsers(db, [id], now)).get(id) : await storedUsersOfTurn(db).load({ id, now });
  if (existing?.erased_at != null) {
    rememberUser(db, id, { name: existing.name, avatar_url: existing.avatar_url, erased: true }, since);
    return 'erased';
  }
  if (existing?.banned === true) return 'banned';
  if (!existing || profileDiffers(changes, existing)) return standingOf(await upsertUser(db, id, changes, now));
  rememberUser(db, id, { name: existing.name, avatar_url: existing.avatar_url }, since);
  return 'ok';
}

const standingOf = (written: { erased: boolean; banned?: boolean }): Standing => (written.erased ? 'erased' : written.banned ? 'banned' : 'ok');

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
