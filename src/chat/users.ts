// Users belong to the host application: created or updated by the server key, or from a token's claims.
import type { DB } from '../store/database.js';
import * as users from '../store/users.js';
import type { UserResource } from './resources.js';

export type UserProfile = users.ProfileChanges;

/** Insert or update a user; `created` tells which. */
export async function upsertUser(db: DB, id: number, profile: UserProfile): Promise<{ user: UserResource; created: boolean }> {
  return users.upsertUser(db, id, profile, new Date());
}

/** A token's user: created when first seen, its profile refreshed when the claims carry one that differs. */
export async function ensureUser(db: DB, id: number, claims: UserProfile): Promise<void> {
  await users.ensureUser(db, id, claims, new Date());
}
