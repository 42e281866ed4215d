// Domain events → channels, broadcast name and payload → the fan-out driver. Called after commit, before the
// HTTP response (synchronous dispatch, docs/events.md "Timing rules").
import type { Logger } from 'pino';
import { EVENTS, type RevokeReason } from '../contract/events.js';
import { channelsOf, jsonOf, type DomainEvent } from './catalog.js';

/** Where frames go: the built-in server's realtime node (which reaches every node through its broker), an external Pusher server, or the log. */
export interface Fanout {
  /** `data` is the event's payload as JSON text (what the Pusher HTTP API carries), encoded once by the caller. */
  publish(channels: readonly string[], event: string, data: string, exceptSocketId?: string): void | Promise<void>;
  /**
   * One event to each of `channels`, channel i's data being head + middles[i] + tail (exactly its payload's JSON text):
   * the shared part carried once however many channels (a group's InboxUpdated). Without it, one publish per channel.
   */
  publishEach?(channels: readonly string[], event: string, head: string, tail: string, middles: readonly string[], exceptSocketId?: string): void | Promise<void>;
  /** Runs fn, whose (synchronously started) publishes may be written together at its end (one write per socket). */
  batch?<T>(fn: () => T): T;
  /**
   * Stop delivering channel to userId's sockets (a member who lost a group). An external Pusher server cannot
   * drop one subscription, only end the user's connections: `endConnections: false` says that is not needed.
   */
  unsubscribeUser(channel: string, userId: string, options?: { readonly endConnections?: boolean }): void | Promise<void>;
  /** Close every socket of userId, on every node (a user banned from the service), so that they do not reconnect. */
  disconnectUser(userId: string): void | Promise<void>;
}

export interface Broadcaster {
  dispatch(events: readonly DomainEvent[], exceptSocketId?: string): Promise<void>;
  unsubscribeUser(channel: string, userId: number, reason: RevokeReason): Promise<void>;
  disconnectUser(userId: number): Promise<void>;
}

export function createBroadcaster(fanout: Fanout, logger: Logger, onDispatched: (broadcastAs: string) => void = () => {}): Broadcaster {
  return {
    async dispatch(events, exceptSocketId) {
      // Every publish starts in order before any is awaited: local sockets get the frames in order at once,
      // and the cross-node publishes share one pipelined round trip instead of one each.
      const start = () => runs(events, fanout.publishEach !== undefined).map(async (run) => {
        const first = run[0]!;
        const broadcastAs = EVENTS[first.name].broadcastAs;
        try {
          if (run.length === 1) await fanout.publish(channelsOf(first), broadcastAs, jsonOf(first), exceptSocketId);
          else {
            const { head, tail } = first.part!.shared;
            await fanout.publishEach!(run.flatMap(channelsOf), broadcastAs, head, tail, run.map((e) => e.part!.middle), exceptSocketId);
          }
          for (let i = 0; i < run.length; i++) onDispatched(broadcastAs);
        } catch (err) {
          // Delivery is at-most-once: the write is committed, clients catch up over HTTP.
          logger.error({ err, event: first.name }, 'event delivery failed');
        }
      });
      // One batch: a socket that gets several of these events (a member's MessageSent and InboxUpdated) gets them in one write.
      await Promise.all(fanout.batch ? fanout.batch(start) : start());
    },
    async unsubscribeUser(channel, userId, reason) {
      try {
        // Leaving is the user's own doing and a deleted group says nothing more: only a removal by someone else
        // (removed, banned) needs the user's connections ended where one subscription cannot be dropped.
        await fanout.unsubscribeUser(channel, String(userId), { endConnections: reason !== 'left' && reason !== 'group_deleted' });
      } catch (err) {
        // The membership change is committed and must be answered: this node's sockets are already dropped,
        // and pending authorizations expire within a minute on their own.
        logger.error({ err, channel, userId }, 'unsubscribing a user was incomplete');
      }
    },
    async disconnectUser(userId) {
      try {
        await fanout.disconnectUser(String(userId));
      } catch (err) {
        // The ban is committed and must be answered; the user's tokens are refused on every node already.
        logger.error({ err, userId }, 'closing a user’s sockets was incomplete');
      }
    },
  };
}

/**
 * The events in order, in runs to publish together: events next to each other that share the head and tail of
 * their JSON (JsonPart), each to one channel, form one run when the fanout can publish them as one; every other
 * event is a run of its own.
 */
function runs(events: readonly DomainEvent[], each: boolean): DomainEvent[][] {
  const out: DomainEvent[][] = [];
  for (const e of events) {
    const last = out.at(-1);
    const joins = each && e.part !== undefined && e.to.length === 1 && last !== undefined && last[0]!.name === e.name && last[0]!.part?.shared === e.part.shared && last[0]!.to.length === 1;
    if (joins) last.push(e);
    else out.push([e]);
  }
  return out;
}

/** BROADCAST_DRIVER=log: events are written to the log instead of sockets (debugging, or no real-time). */
export function logFanout(logger: Logger): Fanout {
  return {
    publish: (channels, event, data, exceptSocketId) => logger.info({ channels, event, data: JSON.parse(data) as unknown, exceptSocketId }, 'broadcast'),
    unsubscribeUser: (channel, userId) => logger.info({ channel, userId }, 'unsubscribe user'),
    disconnectUser: (userId) => logger.info({ userId }, 'disconnect user'),
  };
}
