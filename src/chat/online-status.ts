// Online status (not Pusher presence channels, src/realtime/presence/): heartbeats and offline signals become
// UserPresenceChanged, on a transition only, for every user who shares a conversation with the one whose
// online status changed.
import { event } from '../events/catalog.js';
import type { OnlineStatusTracker } from '../online-status/tracker.js';
import { contactsOf } from '../store/participants.js';
import { lastSeen, setLastSeen } from '../store/users.js';
import type { Actor, ChatContext } from './context.js';
import { forbidden } from '../contract/api-errors.js';
import { isoOrNull, type PresenceResource } from '../contract/resources.js';

async function announce(ctx: ChatContext, userId: number, isOnline: boolean, exceptSocketId?: string): Promise<void> {
  const payload = { user_id: userId, is_online: isOnline };
  // The webhook row is written once the transition is decided (presence is not a database transaction),
  // whether or not anyone shares a conversation with the user.
  if (ctx.notifications?.enabled) {
    await ctx.notifications.write(ctx.db, [event('UserPresenceChanged', userId, payload)]);
    ctx.notifications.committed();
  }
  const audience = await contactsOf(ctx.db, userId);
  if (audience.length === 0) return;
  await ctx.broadcaster.dispatch([event('UserPresenceChanged', audience, payload)], exceptSocketId);
}

export interface OnlineStatusService {
  heartbeat(ctx: ChatContext, actor: Actor): Promise<{ is_online: true }>;
  offline(ctx: ChatContext, actor: Actor): Promise<{ is_online: false }>;
  /** Ends the users whose heartbeats stopped and announces it; run by a timer. Returns the users announced. */
  sweep(ctx: ChatContext): Promise<number[]>;
  get(ctx: ChatContext, actor: Actor, userIds: readonly number[]): Promise<PresenceResource[]>;
}

export function createOnlineStatusService(tracker: OnlineStatusTracker): OnlineStatusService {
  return {
    async heartbeat(ctx, actor) {
      await ctx.rateLimiter.consume('heartbeat', actor.userId);
      if (await tracker.beat(actor.userId)) await announce(ctx, actor.userId, true, actor.socketId);
      return { is_online: true };
    },
    async offline(ctx, actor) {
      if (await tracker.leave(actor.userId)) {
        await setLastSeen(ctx.db, actor.userId, new Date());
        await announce(ctx, actor.userId, false, actor.socketId);
      }
      return { is_online: false };
    },
    async sweep(ctx) {
      const now = new Date();
      const expired = await tracker.expire(now.getTime());
      const announced: number[] = [];
      for (const userId of expired) {
        try {
          await setLastSeen(ctx.db, userId, now);
          await announce(ctx, userId, false);
          announced.push(userId);
        } catch {
          // The database is away: put the user back as long expired, so a later sweep announces the offline.
          await tracker.beat(userId, 0).catch(() => {});
        }
      }
      return announced;
    },
    async get(ctx, actor, userIds) {
      const ids = [...new Set(userIds)];
      const visible = new Set(await contactsOf(ctx.db, actor.userId));
      visible.add(actor.userId);
      const hidden = ids.filter((id) => !visible.has(id));
      if (hidden.length > 0) throw forbidden('forbidden', `You share no conversation with users ${hidden.join(', ')}.`);
      if (ids.length === 0) return [];
      const [seen, online] = await Promise.all([lastSeen(ctx.db, ids), tracker.lastBeats(ids)]);
      return ids.map((id) => ({
        user_id: id,
        is_online: online.has(id),
        last_seen_at: isoOrNull(online.get(id) ?? seen.get(id) ?? null),
      }));
    },
  };
}
