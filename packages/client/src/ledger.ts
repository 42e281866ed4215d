// Which changes a handler has seen, so that none is seen twice: once live and again from GET /sync (the feed
// holds everything, also what arrived live), or from /sync and then late over the socket. A live event carries
// no position in the feed, so a change is known by its type and payload (keys sorted: the feed may reorder them).
//   - a change delivered live waits here until a sync returns it (then that copy is dropped);
//   - a change delivered from a sync waits a minute for a late live copy;
//   - InboxUpdated is state (the feed carries the entry as it is at the sync): a state equal to the last one
//     delivered for that conversation is not delivered again;
//   - UserTyping and UserPresenceChanged are not in the feed: always delivered.
import { EPHEMERAL_EVENTS } from './events.js';

/** How long a change from a sync waits for its late live copy. */
const LATE_LIVE_MS = 60_000;
/** A live change not returned by a sync that began this long after it arrived was before the sync's cursor. */
const FEED_LAG_MS = 10_000;

/** JSON with object keys sorted, so equal payloads give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A multiset of change keys, each with the times it was added (oldest first). */
class Seen {
  private readonly times = new Map<string, number[]>();
  size = 0;

  add(key: string, at: number): void {
    const list = this.times.get(key);
    if (list) list.push(at);
    else this.times.set(key, [at]);
    this.size++;
  }

  /** Removes one copy of key; true if there was one. */
  take(key: string): boolean {
    const list = this.times.get(key);
    if (!list) return false;
    list.shift();
    if (list.length === 0) this.times.delete(key);
    this.size--;
    return true;
  }

  /** Drops every copy added before `before`. */
  prune(before: number): void {
    for (const [key, list] of this.times) {
      const kept = list.filter((at) => at >= before);
      this.size -= list.length - kept.length;
      if (kept.length === 0) this.times.delete(key);
      else this.times.set(key, kept);
    }
  }
}

export class ChangeLedger {
  private readonly live = new Seen();
  private readonly synced = new Seen();
  private readonly inbox = new Map<number, string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Live changes still waiting for their copy from a sync (a sync now and then keeps this small). */
  get waitingLive(): number {
    return this.live.size;
  }

  /** Whether a change that arrived live is new to the handlers (and records it). */
  acceptLive(type: string, payload: unknown): boolean {
    return this.accept(type, payload, this.synced, this.live);
  }

  /** Whether a change from GET /sync is new to the handlers (and records it). */
  acceptSynced(type: string, payload: unknown): boolean {
    this.synced.prune(this.now() - LATE_LIVE_MS);
    return this.accept(type, payload, this.live, this.synced);
  }

  /** After a sync that began at `startedAt` returned everything: live changes older than it could give are before its cursor. */
  syncDone(startedAt: number): void {
    this.live.prune(startedAt - FEED_LAG_MS);
  }

  private accept(type: string, payload: unknown, other: Seen, own: Seen): boolean {
    if (EPHEMERAL_EVENTS.has(type)) return true;
    const key = `${type} ${canonicalJson(payload)}`;
    if (type === 'InboxUpdated') {
      const id = (payload as { id?: number }).id ?? 0;
      if (this.inbox.get(id) === key) return false;
      this.inbox.set(id, key);
      return true;
    }
    if (other.take(key)) return false;
    own.add(key, this.now());
    return true;
  }
}
