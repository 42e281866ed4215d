// In-memory channel registry: channel name → the connections subscribed to it, each with the user
// id that was authorized for that subscription (when known), and for presence channels the roster of
// members (a user with several tabs is one member). This is the local fan-out; it knows nothing about
// the Pusher wire format beyond "send this frame".

/** What the registry needs from a connection (Connection satisfies it; tests use fakes). */
export interface Subscriber {
  readonly id: string;
  /** Kept in step with the registry so a closing connection can be removed in O(its channels). */
  readonly channels: Set<string>;
  send(frame: string | Buffer): boolean;
}

/** One member of a presence channel, as the Pusher protocol shows it. */
export interface PresenceMember {
  readonly userId: string;
  /** The `user_info` of the member's first connection (later tabs do not change it). */
  readonly info: unknown;
}

/** What a presence subscription looks like to the clients: `pusher_internal:subscription_succeeded`'s `presence`. */
export interface PresenceSnapshot {
  readonly ids: string[];
  readonly hash: Record<string, unknown>;
  readonly count: number;
}

export interface RegistryEvents {
  /** A user's last connection left a presence channel (unsubscribe, close, or dropped by the server). */
  memberRemoved(channel: string, userId: string): void;
  /** The channel's first subscriber on this node. */
  channelOccupied?(channel: string): void;
  /** The channel's last subscriber on this node left. */
  channelVacated?(channel: string): void;
}

interface RosterEntry {
  readonly info: unknown;
  connections: number;
}

export class ChannelRegistry {
  /** channel → (subscriber → authorized user id, or undefined for a public/unattributed subscription). */
  private readonly channels = new Map<string, Map<Subscriber, string | undefined>>();
  /** presence channel → user id → member; insertion order is join order. */
  private readonly rosters = new Map<string, Map<string, RosterEntry>>();
  /** Subscriptions not yet answered with subscription_succeeded (shared presence): they get no frames until then. */
  private readonly pending = new Map<string, Set<Subscriber>>();
  private subscriptionCount = 0;
  private readonly events: RegistryEvents;

  constructor(events: RegistryEvents = { memberRemoved: () => {} }) {
    this.events = events;
  }

  /** Adds (or re-records) a subscription. Subscribing twice is harmless; a known user id replaces an unknown one. */
  subscribe(subscriber: Subscriber, channel: string, userId?: string): void {
    let members = this.channels.get(channel);
    let occupied = false;
    if (members === undefined) {
      members = new Map();
      this.channels.set(channel, members);
      occupied = true;
    }
    if (!members.has(subscriber)) {
      this.subscriptionCount++;
      subscriber.channels.add(channel);
      members.set(subscriber, userId);
    } else if (userId !== undefined) {
      members.set(subscriber, userId);
    }
    if (occupied) this.events.channelOccupied?.(channel);
  }

  /**
   * Subscribes to a presence channel as `member`. Returns true when this is the user's first connection
   * on the channel (the others must be told: member_added). Subscribing the same socket twice counts once.
   */
  join(subscriber: Subscriber, channel: string, member: PresenceMember, options: { pending?: boolean } = {}): boolean {
    if (this.isSubscribed(subscriber, channel)) return false;
    this.subscribe(subscriber, channel, member.userId);
    if (options.pending) {
      let waiting = this.pending.get(channel);
      if (waiting === undefined) this.pending.set(channel, (waiting = new Set()));
      waiting.add(subscriber);
    }
    let roster = this.rosters.get(channel);
    if (roster === undefined) {
      roster = new Map();
      this.rosters.set(channel, roster);
    }
    const entry = roster.get(member.userId);
    if (entry !== undefined) {
      entry.connections++;
      return false;
    }
    roster.set(member.userId, { info: member.info, connections: 1 });
    return true;
  }

  /** A pending subscription was answered: from now on it gets the channel's frames. */
  activate(subscriber: Subscriber, channel: string): void {
    const waiting = this.pending.get(channel);
    if (waiting?.delete(subscriber) && waiting.size === 0) this.pending.delete(channel);
  }

  /** Returns whether the subscriber was subscribed. */
  unsubscribe(subscriber: Subscriber, channel: string): boolean {
    const members = this.channels.get(channel);
    if (members === undefined || !members.has(subscriber)) return false;
    this.activate(subscriber, channel);
    const userId = members.get(subscriber);
    members.delete(subscriber);
    this.subscriptionCount--;
    subscriber.channels.delete(channel);
    if (userId !== undefined) this.leaveRoster(channel, userId);
    if (members.size === 0) {
      this.channels.delete(channel);
      this.events.channelVacated?.(channel); // after member_removed, as on Pusher
    }
    return true;
  }

  /** Drops every subscription of a closing connection. */
  removeSubscriber(subscriber: Subscriber): void {
    for (const channel of [...subscriber.channels]) this.unsubscribe(subscriber, channel);
  }

  /**
   * Drops every subscription of `userId` to `channel` (all of that user's sockets) and returns how many.
   * Linear in the channel's subscribers: this runs when a member leaves a group, not per message.
   */
  unsubscribeUser(channel: string, userId: string): number {
    return this.subscribersOf(channel, userId).filter((subscriber) => this.unsubscribe(subscriber, channel)).length;
  }

  /** The subscribers of `channel` recorded as `userId`'s. */
  subscribersOf(channel: string, userId: string): Subscriber[] {
    const members = this.channels.get(channel);
    if (members === undefined) return [];
    const found: Subscriber[] = [];
    for (const [subscriber, owner] of members) if (owner === userId) found.push(subscriber);
    return found;
  }

  /**
   * Sends one already encoded frame to every subscriber of `channel` except `exceptId`.
   * The hot path: no per-subscriber encoding, the same string/Buffer goes to each socket.
   * Returns how many sockets were written to.
   */
  broadcast(channel: string, frame: string | Buffer, exceptId?: string): number {
    const members = this.channels.get(channel);
    if (members === undefined) return 0;
    let sent = 0;
    const waiting = this.pending.get(channel); // almost always undefined: one lookup per frame, not per socket
    // Iterating live is safe: a send never changes this map synchronously (a slow socket is
    // closed, and only its later 'close' event unsubscribes it).
    for (const subscriber of members.keys()) {
      if (subscriber.id !== exceptId && waiting?.has(subscriber) !== true && subscriber.send(frame)) sent++;
    }
    return sent;
  }

  hasSubscribers(channel: string): boolean {
    return this.channels.has(channel);
  }

  isSubscribed(subscriber: Subscriber, channel: string): boolean {
    return this.channels.get(channel)?.has(subscriber) ?? false;
  }

  /** The user id recorded for a subscription, if any. */
  subscriberUserId(subscriber: Subscriber, channel: string): string | undefined {
    return this.channels.get(channel)?.get(subscriber);
  }

  subscriptionCountOf(channel: string): number {
    return this.channels.get(channel)?.size ?? 0;
  }

  /** Distinct members of a presence channel. */
  memberCount(channel: string): number {
    return this.rosters.get(channel)?.size ?? 0;
  }

  isMember(channel: string, userId: string): boolean {
    return this.rosters.get(channel)?.has(userId) ?? false;
  }

  presence(channel: string): PresenceSnapshot {
    const roster = this.rosters.get(channel);
    const ids: string[] = [];
    const hash: Record<string, unknown> = {};
    for (const [userId, entry] of roster ?? []) {
      ids.push(userId);
      hash[userId] = entry.info;
    }
    return { ids, hash, count: ids.length };
  }

  /** Occupied channel names, in no particular order. */
  channelNames(): IterableIterator<string> {
    return this.channels.keys();
  }

  stats(): { channels: number; subscriptions: number } {
    return { channels: this.channels.size, subscriptions: this.subscriptionCount };
  }

  private leaveRoster(channel: string, userId: string): void {
    const roster = this.rosters.get(channel);
    const entry = roster?.get(userId);
    if (roster === undefined || entry === undefined) return;
    if (--entry.connections > 0) return;
    roster.delete(userId);
    if (roster.size === 0) this.rosters.delete(channel);
    this.events.memberRemoved(channel, userId);
  }
}
