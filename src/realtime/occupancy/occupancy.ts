// Occupancy: which channels have subscribers anywhere, for the channel_occupied and channel_vacated webhooks; one
// of the four parts a realtime node is built with. The interface is here, with a memory implementation for a
// node alone (memory.ts) and a Redis one for several nodes (redis.ts) side by side; the node calls it the same
// way either way. A channel is occupied when its first subscriber on any node arrives and vacated when its last
// one on every node leaves, so each webhook is sent once per cluster, by the node that made the change. (How
// many subscribers a channel has, for the Pusher HTTP API, is asked of every node through the broker.)
import type { MaybePromise } from '../maybe-promise.js';

/** The memory implementation answers at once (plain values), the Redis one with promises. */
export interface OccupancyTracker {
  /** This node's first subscriber of `channel`: true when no other node had one (the channel is occupied now). */
  occupy(channel: string): MaybePromise<boolean>;
  /** This node's last subscriber of `channel` left: true when no node has one any more (the channel is vacated). */
  vacate(channel: string): MaybePromise<boolean>;
  /** Marks this node alive and removes the share of nodes that stopped doing so: returns the channels vacated by that. */
  sweep(): MaybePromise<string[]>;
  /** This node is going away: its share is removed at once; returns the channels no node holds any more. */
  withdraw(): MaybePromise<string[]>;
}
