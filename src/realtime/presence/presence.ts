// Presence: the members of Pusher presence channels (presence-*), one of the four parts a realtime node is built
// with (as Centrifuge's Node holds a PresenceManager). The interface is here, with a memory implementation for a
// node alone (memory.ts) and a Redis one for several nodes (redis.ts) side by side; the node calls it the same
// way either way. A user's tabs may sit on different nodes, so member_added and member_removed are decided where
// every node sees the same count: each node adds itself once per (channel, user) it holds, and the
// announcements go out when that count goes 0 → 1 and 1 → 0. A node that dies without leaving has its share
// removed by the others (sweep). (The chat's online status is another thing: src/online-status/.)
import type { PresenceMember, PresenceSnapshot } from '../channels.js';
import type { MaybePromise } from '../maybe-promise.js';

/** What joining a presence channel found: the channel full, or whether the user is new to it and who is there. */
export type PresenceJoin = { readonly full: true } | { readonly full: false; readonly first: boolean; readonly members: PresenceSnapshot };

/** A member no node holds any more. */
export interface PresenceLeft {
  readonly channel: string;
  readonly userId: string;
}

/** The memory implementation answers at once (plain values), the Redis one with promises. */
export interface PresenceManager {
  /** This node's first connection of `member` on `channel`. `full` when the channel already has maxMembers other users. */
  join(channel: string, member: PresenceMember, maxMembers: number): MaybePromise<PresenceJoin>;
  /** This node's last connection of userId left `channel`: true when no node holds the user any more. */
  leave(channel: string, userId: string): MaybePromise<boolean>;
  members(channel: string): MaybePromise<PresenceSnapshot>;
  /** Marks this node alive and removes the share of nodes that stopped doing so: returns the members no node holds any more. */
  sweep(): MaybePromise<PresenceLeft[]>;
  /** This node is going away: its share is removed at once (returns the members no node holds any more). */
  withdraw(): MaybePromise<PresenceLeft[]>;
}
