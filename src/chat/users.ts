// Users belong to the host application: created or updated by the server key, or from a token's claims.
import { claimsDiffer, knownUser, rememberUser } from '../http/token-cache.js';
import type { DB } from '../store/database.js';
import type { UserResource } from './resources.js';
import { userResource } from '../store/read-model.js';

export interface UserProfile {
  readonly name?: string;
  readonly avatar_url?: string | null;
}

/** Insert or update a user; `created` tells which. */
export async function upsertUser(db: DB, id: number, profile: UserProfile): Promise<{ user: UserResource; created: boolean }> {
  const now = new Date();
  const row = await db
    .insertInto('users')
    .values({ id, name: profile.name ?? '', avatar_url: profile.avatar_url ?? null, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        name: profile.name === undefined ? eb.ref('users.name') : eb.ref('excluded.name'),
        avatar_url: profile.avatar_url === undefined ? eb.ref('users.avatar_url') : eb.ref('excluded.avatar_url'),
        updated_at: now,
      })),
    )
    .returning(['id', 'name', 'avatar_url', 'created_at'])
    .executeTakeFirstOrThrow();
  // This node's token authentication compares claims with it (http/token-cache.ts).
  rememberUser(db, id, row);
  return { user: userResource(row), created: row.created_at.getTime() === now.getTime() };
}

/**
 * A token's user: created when first seen, its profile refreshed when the claims carry one that differs.
 * The profile this node last read or wrote (http/token-cache.ts) stands in for the SELECT: claims equal to it
 * cost nothing, claims that differ are written straight away.
 */
export async function ensureUser(db: DB, id: number, claims: UserProfile): Promise<void> {
  const known = knownUser(db, id);
  if (known) {
    if (claimsDiffer(claims, known)) await upsertUser(db, id, claims);
    return;
  }
  const existing = await db.selectFrom('users').select(['name', 'avatar_url']).where('id', '=', id).executeTakeFirst();
  if (!existing || claimsDiffer(claims, existing)) await upsertUser(db, id, claims);
  else rememberUser(db, id, existing);
}

export async function usersExist(db: DB, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('users').select('id').where('id', 'in', ids).execute();
  const found = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !found.has(id));
}
