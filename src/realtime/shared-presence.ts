// Presence channel members across nodes. On one node the channel registry's roster is the truth; with
// several, a user's tabs may sit on different nodes, so member_added and member_removed must be decided
// where all nodes see the same count: each node adds itself once per (channel, user) it holds, and the
// announcements go out when that count goes 0 → 1 and 1 → 0. A node that dies without leaving has its
// share removed by the others (sweep). Channel occupancy (channel_occupied, channel_vacated) is decided the
// same way, once per cluster.
import type { PresenceMember, PresenceSnapshot } from './channels.js';
import type { SharedOccupancy } from './fanout/redis-occupied.js';

export type SharedJoin = { readonly full: true } | { readonly full: false; readonly first: boolean; readonly members: PresenceSnapshot };

export interface SharedPresence {
  /** This node's first connection of `member` on `channel`. `full` when the channel already has maxMembers other users. */
  join(channel: string, member: PresenceMember, maxMembers: number): Promise<SharedJoin>;
  /** This node's last connection of userId left `channel`: true when no node holds the user any more. */
  leave(channel: string, userId: string): Promise<boolean>;
  members(channel: string): Promise<PresenceSnapshot>;
  /** Marks this node alive and removes the share of nodes that stopped doing so: returns the members no node holds any more. */
  sweep(): Promise<{ channel: string; userId: string }[]>;
  /** This node is going away: its share is removed at once (returns the members no node holds any more). */
  withdraw(): Promise<{ channel: string; userId: string }[]>;
}

/**
 * Who is on which channel, as the node's presence store: on one node its own registry (nothing to share);
 * with several, presence members and channel occupancy counted across the cluster (Redis).
 */
export type PresenceStore =
  | { readonly kind: 'local' }
  | { readonly kind: 'shared'; readonly members: SharedPresence; readonly occupancy: SharedOccupancy };

/** One node: the channel registry's rosters and occupancy are the truth. */
export const LOCAL_PRESENCE: PresenceStore = Object.freeze({ kind: 'local' });
