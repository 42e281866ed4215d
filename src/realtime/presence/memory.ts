// Presence members in memory, for a node alone: every member is this node's, so a user's first connection here
// is the first anywhere. Answers at once.
import type { PresenceMember, PresenceSnapshot } from '../channels.js';
import type { PresenceJoin, PresenceManager } from './presence.js';

export function memoryPresence(): PresenceManager {
  /** presence channel → user id → user_info of the user's first connection; insertion order is join order. */
  const channels = new Map<string, Map<string, unknown>>();
  const snapshot = (channel: string): PresenceSnapshot => {
    const members = channels.get(channel);
    const ids = [...(members?.keys() ?? [])];
    return { ids, hash: Object.fromEntries(members ?? []), count: ids.length };
  };
  return {
    join(channel: string, member: PresenceMember, maxMembers: number): PresenceJoin {
      let members = channels.get(channel);
      if (members?.has(member.userId)) return { full: false, first: false, members: snapshot(channel) };
      if ((members?.size ?? 0) >= maxMembers) return { full: true };
      if (members === undefined) channels.set(channel, (members = new Map()));
      members.set(member.userId, member.info);
      return { full: false, first: true, members: snapshot(channel) };
    },
    leave(channel, userId) {
      const members = channels.get(channel);
      if (!members?.delete(userId)) return false;
      if (members.size === 0) channels.delete(channel);
      return true;
    },
    members: snapshot,
    sweep: () => [],
    // The node's sockets are closed before it withdraws: every member has left by then.
    withdraw: () => [],
  };
}
