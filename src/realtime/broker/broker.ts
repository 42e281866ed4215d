// The broker, one of the four parts a realtime node is built with (as Centrifuge's Node holds a Broker): each an
// interface here with a memory and a Redis implementation side by side (memory.ts, redis.ts). The broker carries
// a node's publications to a channel's subscribers on every node, and orders and occupancy questions to the
// other nodes; presence members (../presence/), channel occupancy for the webhooks (../occupancy/) and pending
// channel authorizations (../authorizations/) have parts of their own. The node hands its publications to the
// broker and receives every publication back through its handler, its own included: local delivery is the
// broker's callback. memory.ts: one node (the callback at once, nothing else); redis.ts: the callback at once
// for this node, and per-channel Redis topics for the nodes that have subscribers of the channel
// (redis-survey.ts asks the other nodes for their occupancy).
//
// Delivery is at-most-once: a publication that cannot be handed on is logged and dropped; clients recover
// what they missed over HTTP.
import type { OccupancyQuery, OccupancyReport } from '../api-backend.js';

/**
 * What travels on a channel: an event (each node builds the frame), a ready frame (a client event, a presence
 * change), or one event to each of many channels with data of its own made of a shared head and tail around a part
 * per channel (`middles[i]` for `channels[i]`: a group's InboxUpdated, one per member), so that the shared part is
 * carried and encoded once however many channels there are.
 */
export type Publication =
  | { readonly kind: 'event'; readonly event: string; readonly data: string; readonly exceptSocketId?: string }
  | { readonly kind: 'frame'; readonly frame: string; readonly exceptSocketId?: string }
  | { readonly kind: 'each'; readonly event: string; readonly head: string; readonly tail: string; readonly middles: readonly string[]; readonly exceptSocketId?: string };

/**
 * An order for every node: drop a user's subscriptions to a channel, or close a user's signed-in sockets (with
 * `subscribed`, also those holding a subscription recorded as theirs: a user banned from the service).
 */
export type NodeCommand =
  | { readonly kind: 'unsubscribe'; readonly channel: string; readonly userId: string }
  | { readonly kind: 'terminate'; readonly userId: string; readonly subscribed?: boolean };

/** What a broker calls on the node it serves. */
export interface BrokerHandler {
  /** A publication for this node's subscribers of `channels`, from this node or another. */
  publication(channels: readonly string[], publication: Publication): void;
  /** An order from another node. */
  command(command: NodeCommand): void;
  /** Another node asks for this node's occupancy of the channels a query covers. */
  occupancy(query: OccupancyQuery): OccupancyReport;
}

export interface Broker {
  /** Connects the node: from now on publications, orders and questions reach `handler`. Called once, before any socket. */
  start(handler: BrokerHandler): Promise<void>;
  /**
   * To each channel's subscribers on every node, except the socket exceptSocketId: this node's at once (the
   * handler is called before this returns), the other nodes' through the broker. Never rejects.
   */
  publish(channels: readonly string[], publication: Publication): void | Promise<void>;
  /**
   * Runs fn; the publications it makes (synchronously) are one dispatch, which may reach the other nodes together:
   * a group's MessageSent and its members' InboxUpdated delivered in one go cost a member's socket one write. Local
   * delivery is unchanged (at once). Optional: without it each publication crosses on its own.
   */
  batch?<T>(fn: () => T): T;
  /**
   * This node's first subscriber of `channel`: the other nodes' publications to it are wanted. Returns what
   * resolves once they flow (never rejects), or undefined when there is nothing to wait for.
   */
  subscribe(channel: string): Promise<void> | undefined;
  /** This node's last subscriber of `channel` left: its publications are no longer wanted here. */
  unsubscribe(channel: string): void;
  /** An order to every other node (this node carries out its own). Rejects when it could not be sent. */
  command(command: NodeCommand): Promise<void>;
  /** The other nodes' occupancy for a query, merged (those that answer in time; empty on one node). */
  survey(query: OccupancyQuery): Promise<OccupancyReport>;
  /** Publications received from other nodes so far (for /metrics). */
  received(): number;
}
