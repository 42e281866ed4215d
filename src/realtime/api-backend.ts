// What the Pusher HTTP API needs of the built-in server (the realtime node is it): publish to every node,
// read channel occupancy over every node, and end a user's connections everywhere. The HTTP layer sees only
// PusherApiBackend.

/** Which channels an occupancy query covers: one by name, or every occupied one starting with prefix. */
export type OccupancyQuery = { readonly channel: string } | { readonly prefix: string };

/** One channel's occupancy: sockets subscribed, and for presence channels the users present (join order). */
export interface Occupancy {
  subscriptionCount: number;
  userIds?: string[];
}

/** Occupied channels only; a channel nobody is subscribed to is absent. */
export type OccupancyReport = Map<string, Occupancy>;

/** Adds `from` into `into`: subscriptions summed, presence users united (a user with tabs on two nodes counts once). */
export function mergeOccupancy(into: OccupancyReport, from: OccupancyReport): OccupancyReport {
  for (const [channel, theirs] of from) {
    const ours = into.get(channel);
    if (ours === undefined) {
      into.set(channel, { subscriptionCount: theirs.subscriptionCount, ...(theirs.userIds ? { userIds: [...theirs.userIds] } : {}) });
      continue;
    }
    ours.subscriptionCount += theirs.subscriptionCount;
    if (theirs.userIds) {
      const seen = new Set(ours.userIds ?? []);
      ours.userIds = [...(ours.userIds ?? []), ...theirs.userIds.filter((id) => !seen.has(id))];
    }
  }
  return into;
}

export interface PusherApiBackend {
  /** To each channel's subscribers on every node, except the socket exceptSocketId; `data` goes out as sent. */
  publish(channels: readonly string[], event: string, data: string, exceptSocketId?: string): void | Promise<void>;
  occupancy(query: OccupancyQuery): Promise<OccupancyReport>;
  terminateUserConnections(userId: string): Promise<void>;
}
