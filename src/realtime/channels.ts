// In-memory channel registry: channel name → the connections subscribed to it, each with the user
// id that was authorized for that subscription (when known). This is the local fan-out; it knows
// nothing about the Pusher wire format beyond "send this frame".

/** What the registry needs from a connection (Connection satisfies it; tests use fakes). */
export interface Subscriber {
  readonly id: string;
  /** Kept in step with the registry so a closing connection can be removed in O(its channels). */
  readonly channels: Set<string>;
  send(frame: string | Buffer): boolean;
}

export class ChannelRegistry {
  /** channel → (subscriber → authorized user id, or undefined for a public/unattributed subscription). */
  private readonly channels = new Map<string, Map<Subscriber, string | undefined>>();
  private subscriptionCount = 0;

  /** Adds (or re-records) a subscription. Subscribing twice is harmless; a known user id replaces an unknown one. */
  subscribe(subscriber: Subscriber, channel: string, userId?: string): void {
    let members = this.channels.get(channel);
    if (members === undefined) {
      members = new Map();
      this.channels.set(channel, members);
    }
    if (!members.has(subscriber)) {
      this.subscriptionCount++;
      subscriber.channels.add(channel);
      members.set(subscriber, userId);
    } else if (userId !== undefined) {
      members.set(subscriber, userId);
    }
  }

  /** Returns whether the subscriber was subscribed. */
  unsubscribe(subscriber: Subscriber, channel: string): boolean {
    const members = this.channels.get(channel);
    if (members === undefined || !members.delete(subscriber)) return false;
    this.subscriptionCount--;
    subscriber.channels.delete(channel);
    if (members.size === 0) this.channels.delete(channel);
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
    const members = this.channels.get(channel);
    if (members === undefined) return 0;
    const dropped: Subscriber[] = [];
    for (const [subscriber, owner] of members) if (owner === userId) dropped.push(subscriber);
    for (const subscriber of dropped) this.unsubscribe(subscriber, channel);
    return dropped.length;
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
    // Iterating live is safe: a send never changes this map synchronously (a slow socket is
    // closed, and only its later 'close' event unsubscribes it).
    for (const subscriber of members.keys()) {
      if (subscriber.id !== exceptId && subscriber.send(frame)) sent++;
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

  stats(): { channels: number; subscriptions: number } {
    return { channels: this.channels.size, subscriptions: this.subscriptionCount };
  }
}
