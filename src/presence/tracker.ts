// Who is online: a user is online from a heartbeat until an offline signal or the timeout after the last beat.
// The tracker only keeps state and reports transitions; chat/presence.ts decides who hears of them.

export interface PresenceTracker {
  /** Records a heartbeat; true when the user was offline before (a transition to online). */
  beat(userId: number, now?: number): boolean;
  /** Records an offline signal; true when the user was online before. */
  leave(userId: number, now?: number): boolean;
  /** Users whose last beat is older than the timeout; they are marked offline as they are returned. */
  expire(now?: number): number[];
  isOnline(userId: number): boolean;
  /** Time of the last heartbeat this node saw (online users), else null. */
  lastBeat(userId: number): Date | null;
}

export function memoryPresenceTracker(timeoutMs: number): PresenceTracker {
  const lastBeats = new Map<number, number>();
  return {
    beat(userId, now = Date.now()) {
      const wasOnline = lastBeats.has(userId);
      lastBeats.set(userId, now);
      return !wasOnline;
    },
    leave(userId) {
      return lastBeats.delete(userId);
    },
    expire(now = Date.now()) {
      const expired: number[] = [];
      for (const [userId, at] of lastBeats) {
        if (now - at >= timeoutMs) {
          lastBeats.delete(userId);
          expired.push(userId);
        }
      }
      return expired;
    },
    isOnline: (userId) => lastBeats.has(userId),
    lastBeat: (userId) => {
      const at = lastBeats.get(userId);
      return at === undefined ? null : new Date(at);
    },
  };
}
