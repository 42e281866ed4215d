// Users belong to the host application: created or updated by the server key, or from a token's claims.
import type { DB } from '../store/database.js';
import type { UserResource } from './resources.js';
import { userResource } from './views.js';

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
  return { user: userResource(row), created: row.created_at.getTime() === now.getTime() };
}

/** A token's user: created when first seen, its profile refreshed when the claims carry one that differs. */
export async function ensureUser(db: DB, id: number, claims: UserProfile): Promise<void> {
  const existing = await db.selectFrom('users').select(['name', 'avatar_url']).where('id', '=', id).executeTakeFirst();
  const changed =
    !existing ||
    (claims.name !== undefined && claims.name !== existing.name) ||
    (claims.avatar_url !== undefined && claims.avatar_url !== existing.avatar_url);
  if (changed) await upsertUser(db, id, claims);
}

export async function usersExist(db: DB, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('users').select('id').where('id', 'in', ids).execute();
  const found = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !found.has(id));
}
