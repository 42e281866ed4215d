// src/online-status: the chat's online status (who is online, POST /presence/heartbeat and /presence/offline),
// named apart from the members of Pusher presence channels (src/realtime/presence/).
//
// Who is online: a user is online from a heartbeat until an offline signal or the timeout after the last beat.
// The tracker only keeps state and reports transitions; chat/online-status.ts decides who hears of them. Each
// transition is reported once, whichever node sees it (the Redis tracker makes that hold across nodes).
import type { RedisConnections } from '../redis/connections.js';

export interface OnlineStatusTracker {
  /** Records a heartbeat; true when the user was offline before (a transition to online). */
  beat(userId: number, now?: number): Promise<boolean>;
  /** Records an offline signal; true when the user was online before. */
  leave(userId: number): Promise<boolean>;
  /** Users whose last beat is older than the timeout, each returned to exactly one caller, now offline. */
  expire(now?: number): Promise<number[]>;
  /** Time of the last heartbeat of each online user among userIds. */
  lastBeats(userIds: readonly number[]): Promise<Map<number, Date>>;
}

export function memoryOnlineStatusTracker(timeoutMs: number): OnlineStatusTracker {
  const lastBeats = new Map<number, number>();
  return {
    async beat(userId, now = Date.now()) {
      const wasOnline = lastBeats.has(userId);
      lastBeats.set(userId, now);
      return !wasOnline;
    },
    async leave(userId) {
      return lastBeats.delete(userId);
    },
    async expire(now = Date.now()) {
      const expired: number[] = [];
      for (const [userId, at] of lastBeats) {
        if (now - at >= timeoutMs) {
          lastBeats.delete(userId);
          expired.push(userId);
        }
      }
      return expired;
    },
    async lastBeats(userIds) {
      const result = new Map<number, Date>();
      for (const id of userIds) {
        const at = lastBeats.get(id);
        if (at !== undefined) result.set(id, new Date(at));
      }
      return result;
    },
  };
}

/**
 * Shared online status: a sorted set of user id → last beat. ZADD reports a new member (came online) and ZREM a
 * removed one (went offline) atomically, so of several nodes exactly one sees each transition.
 */
export function redisOnlineStatusTracker(redis: RedisConnections, timeoutMs: number): OnlineStatusTracker {
  const key = `${redis.prefix}presence`;
  return {
    async beat(userId, now = Date.now()) {
      return (await redis.commands.zadd(key, now, String(userId))) === 1;
    },
    async leave(userId) {
      return (await redis.commands.zrem(key, String(userId))) === 1;
    },
    async expire(now = Date.now()) {
      const stale = await redis.commands.zrangebyscore(key, '-inf', now - timeoutMs, 'LIMIT', 0, 1000);
      const expired: number[] = [];
      for (const member of stale) {
        if ((await redis.commands.zrem(key, member)) === 1) expired.push(Number(member));
      }
      return expired;
    },
    async lastBeats(userIds) {
      const result = new Map<number, Date>();
      if (userIds.length === 0) return result;
      const scores = await redis.commands.zmscore(key, ...userIds.map(String));
      userIds.forEach((id, i) => {
        const score = scores[i];
        if (score !== null && score !== undefined) result.set(id, new Date(Number(score)));
      });
      return result;
    },
  };
}
