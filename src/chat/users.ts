// Users belong to the host application: created or updated by the server key, or from a token's claims.
import type { DB } from '../store/database.js';
import * as users from '../store/users.js';
import { ChatError } from '../contract/api-errors.js';
import { userBannedError } from './user-bans.js';
import type { UserResource } from '../contract/resources.js';

export type UserProfile = users.ProfileChanges;

/** The longest user name, in characters (code points, as the API's schemas count them): `PUT /users` and tokens alike. */
export const USER_NAME_MAX_CHARS = 200;
/** The longest avatar URL of a user. */
export const USER_AVATAR_URL_MAX_CHARS = 2048;

/** Insert or update a user; `created` tells which. An erased user stays erased: 409. */
export async function upsertUser(db: DB, id: number, profile: UserProfile): Promise<{ user: UserResource; created: boolean }> {
  const result = await users.upsertUser(db, id, profile, new Date());
  if (result.erased) throw new ChatError('conflict', 'This user was erased; their id cannot be used again.');
  return result;
}

/**
 * A token's user: created when first seen, its profile refreshed when the claims carry one that differs; 401 once
 * erased, 403 user_banned while a service ban holds (the one read, or none, of every authenticated request).
 */
export async function ensureUser(db: DB, id: number, claims: UserProfile): Promise<void> {
  const standing = await users.ensureUser(db, id, claims, new Date());
  if (standing === 'erased') throw new ChatError('unauthenticated', 'This user was erased.');
  if (standing === 'banned') throw userBannedError();
}
