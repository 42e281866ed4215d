// Pending channel authorizations in memory, for a node alone (see authorizations.ts). Entries expire after a
// TTL and the map has a hard cap, so unclaimed authorizations cannot pile up. Answers at once.
import type { AuthorizationLedger } from './authorizations.js';

interface Entry {
  readonly userId: string;
  readonly expiresAt: number;
}

export class MemoryAuthorizationLedger implements AuthorizationLedger {
  // Insertion order is expiry order (same TTL for all, re-inserts move to the end), so the
  // expired entries are always a prefix of the map and sweeping stops at the first live one.
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(ttlMs = 60_000, maxEntries = 100_000, now: () => number = () => performance.now()) {
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
    this.now = now;
  }

  remember(socketId: string, channel: string, userId: string): void {
    const key = keyOf(socketId, channel);
    this.entries.delete(key);
    this.entries.set(key, { userId, expiresAt: this.now() + this.ttlMs });
    this.sweep();
  }

  /** Returns and forgets the user id remembered for this socket and channel, if still fresh. */
  claim(socketId: string, channel: string): string | undefined {
    const key = keyOf(socketId, channel);
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    return entry.expiresAt > this.now() ? entry.userId : undefined;
  }

  /** Forgets every pending authorization of userId for channel (the user lost access to it). */
  forgetUser(channel: string, userId: string): void {
    const suffix = `\n${channel}`;
    for (const [key, entry] of this.entries) {
      if (entry.userId === userId && key.endsWith(suffix)) this.entries.delete(key);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt > now && this.entries.size <= this.maxEntries) break;
      this.entries.delete(key); // expired, or the oldest one over the cap
    }
  }
}

function keyOf(socketId: string, channel: string): string {
  return `${socketId}\n${channel}`;
}
