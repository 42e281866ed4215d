// Web Push subscriptions: one row per browser, several per user, unique by endpoint.
import { idIn } from './bulk.js';
import type { DB } from './database.js';

export interface PushSubscriptionRow {
  readonly id: number;
  readonly user_id: number;
  readonly endpoint: string;
  readonly p256dh: string;
  readonly auth: string;
}

/** Saves a browser's subscription for a user; the same endpoint saved again (by anyone) is replaced. */
export async function upsertPushSubscription(
  db: DB,
  sub: { userId: number; endpoint: string; p256dh: string; auth: string },
  now: Date,
): Promise<void> {
  await db
    .insertInto('push_subscriptions')
    .values({ user_id: sub.userId, endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth, created_at: now })
    .onConflict((oc) => oc.column('endpoint').doUpdateSet({ user_id: sub.userId, p256dh: sub.p256dh, auth: sub.auth }))
    .execute();
}

/** Removes a user's subscription by endpoint; false when the user had none with that endpoint. */
export async function deleteUserPushSubscription(db: DB, userId: number, endpoint: string): Promise<boolean> {
  const row = await db.deleteFrom('push_subscriptions').where('user_id', '=', userId).where('endpoint', '=', endpoint).returning('id').executeTakeFirst();
  return row !== undefined;
}

/** Removes a subscription the push service said is gone (404/410). */
export async function deletePushSubscriptionById(db: DB, id: number): Promise<void> {
  await db.deleteFrom('push_subscriptions').where('id', '=', id).execute();
}

/** The subscriptions of the given users, by user then id. */
export async function pushSubscriptionsOf(db: DB, userIds: readonly number[]): Promise<PushSubscriptionRow[]> {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('push_subscriptions')
    .select(['id', 'user_id', 'endpoint', 'p256dh', 'auth'])
    .where(idIn('user_id', userIds))
    .orderBy('user_id')
    .orderBy('id')
    .execute();
}
