// Presence channel members across nodes. On one node the channel registry's roster is the truth; with
// several, a user's tabs may sit on different nodes, so member_added and member_removed must be decided
// where all nodes see the same count: each node adds itself once per (channel, user) it holds, and the
// announcements go out when that count goes 0 → 1 and 1 → 0. A node that dies without leaving has its
// share removed by the others (sweep).
import type { PresenceMember, PresenceSnapshot } from './channels.js';

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
