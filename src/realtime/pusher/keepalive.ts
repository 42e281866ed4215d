// Keepalive. A socket that has been silent for `activityMs` gets a ping (the server sends both a pusher:ping and a
// WebSocket-level ping: a client that answers only one of them is alive); if it stays silent for `pongMs` more,
// it is closed with 4201 so pusher-js reconnects at once. Any inbound traffic counts as a reply: a frame, a
// WebSocket pong or ping. One timer per connection, re-armed only when it fires
// (touch() is a single assignment on the message path), unref'd so it never holds the process.

export class Keepalive {
  private readonly activityMs: number;
  private readonly pongMs: number;
  private readonly onPing: () => void;
  private readonly onTimeout: () => void;
  private lastSeen = performance.now();
  private pingSentAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(activityMs: number, pongMs: number, onPing: () => void, onTimeout: () => void) {
    this.activityMs = activityMs;
    this.pongMs = pongMs;
    this.onPing = onPing;
    this.onTimeout = onTimeout;
  }

  start(): void {
    this.lastSeen = performance.now();
    this.arm(this.activityMs);
  }

  /** Records inbound traffic. */
  touch(): void {
    this.lastSeen = performance.now();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(this.fire, Math.max(ms, 1));
    this.timer.unref();
  }

  private readonly fire = (): void => {
    const now = performance.now();
    if (this.pingSentAt !== undefined) {
      if (this.lastSeen < this.pingSentAt) {
        this.timer = undefined;
        this.onTimeout();
        return;
      }
      this.pingSentAt = undefined;
    }
    const idle = now - this.lastSeen;
    if (idle < this.activityMs) {
      this.arm(this.activityMs - idle);
      return;
    }
    this.pingSentAt = now;
    this.onPing();
    this.arm(this.pongMs);
  };
}
