// What the Pusher HTTP API needs of the built-in server: publish to every node (through the fan-out), read
// channel occupancy (this node's, or summed over every node when several share a Redis), and end a user's
// connections everywhere. The HTTP layer sees only PusherApiBackend.
import type { Fanout } from '../events/broadcaster.js';
import { channelTypeOf } from './pusher/channel-types.js';
import type { RealtimeServer } from './index.js';

/** Which channels an occupancy query covers: one by name, or every occupied one starting with prefix. */
export type OccupancyQuery = { readonly channel: string } | { readonly prefix: string };

/** One channel's occupancy: sockets subscribed, and for presence channels the users present (join order). */
export interface Occupancy {
  subscriptionCount: number;
  userIds?: string[];
}

/** Occupied channels only; a channel nobody is subscribed to is absent. */
export type OccupancyReport = Map<string, Occupancy>;

/** The occupancy of the channels a query covers, on this node alone. */
export function localOccupancy(local: RealtimeServer, query: OccupancyQuery): OccupancyReport {
  const report: OccupancyReport = new Map();
  const add = (channel: string, subscriptionCount: number): void => {
    report.set(channel, channelTypeOf(channel) === 'presence' ? { subscriptionCount, userIds: local.presenceUserIds(channel) } : { subscriptionCount });
  };
  if ('channel' in query) {
    const info = local.channelInfo(query.channel);
    if (info !== undefined) add(query.channel, info.subscriptionCount);
  } else {
    for (const [channel, info] of local.channelList(query.prefix)) add(channel, info.subscriptionCount);
  }
  return report;
}

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

/** The other nodes of a deployment (Redis): occupancy over all of them, and ending a user's sockets on all of them. */
export interface Cluster {
  /** This node's occupancy merged with every other node's that answers in time. */
  occupancy(query: OccupancyQuery): Promise<OccupancyReport>;
  /** Closes userId's signed-in sockets on this node and tells the others to do the same. */
  terminateUserConnections(userId: string): Promise<void>;
}

export interface PusherApiBackend {
  /** To each channel's subscribers on every node, except the socket exceptSocketId; `data` goes out as sent. */
  publish(channels: readonly string[], event: string, data: string, exceptSocketId?: string): Promise<void>;
  occupancy(query: OccupancyQuery): Promise<OccupancyReport>;
  terminateUserConnections(userId: string): Promise<void>;
}

/** The API's backend: publishes through the fan-out; reads occupancy over the cluster when there is one. */
export function createPusherApiBackend(local: RealtimeServer, fanout: Fanout, cluster?: Cluster): PusherApiBackend {
  return {
    async publish(channels, event, data, exceptSocketId) {
      await fanout.publish(channels, event, data, exceptSocketId);
    },
    occupancy: async (query) => (cluster ? cluster.occupancy(query) : localOccupancy(local, query)),
    async terminateUserConnections(userId) {
      if (cluster) await cluster.terminateUserConnections(userId);
      else local.terminateUserConnections(userId);
    },
  };
}
