// The socket: pusher-js, the channels the client holds, and a fresh attempt on a schedule while the connection
// is lost (pusher-js alone waits out 15-60 s attempts, long after a restarted server answers again). It tells the
// client three things: an event arrived, the connection was lost, and it is back with every channel subscribed.
import { ParleyError } from './errors.js';
import type { Http } from './http.js';
import { createPusher, type PusherClient, type SocketOptions } from './realtime.js';

export interface ConnectionOptions extends SocketOptions {
  reconnectDelaysMs?: readonly number[];
}

export interface ConnectionListener {
  event(name: string, payload: unknown, channel: string): void;
  /** The socket is gone: channels are subscribed again once it is back. */
  lost(): void;
  /** Connected, and every channel held is subscribed. */
  ready(): void;
}

const RECONNECT_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 15_000];

export class Connection {
  private readonly pusher: PusherClient;
  /** Channel → subscribed now (pusher-js subscribes again by itself after a reconnect). */
  private readonly channels = new Map<string, boolean>();
  private readonly waiting = new Map<string, { resolve: () => void; reject: (err: Error) => void }[]>();
  private reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  private reconnectAttempts = 0;
  private closed = false;

  constructor(
    http: Http,
    private readonly options: ConnectionOptions,
    private readonly listener: ConnectionListener,
  ) {
    this.pusher = createPusher(http, options);
    this.pusher.connection.bind('state_change', ({ current }: { current: string }) => this.onState(current));
  }

  get socketId(): string | null {
    return this.pusher.connection.socket_id ?? null;
  }

  /** Connected, with every channel subscribed. */
  get ready(): boolean {
    return this.pusher.connection.state === 'connected' && [...this.channels.values()].every(Boolean);
  }

  has(channel: string): boolean {
    return this.channels.has(channel);
  }

  /** Subscribes a channel; resolves once subscribed, rejects with a ParleyError when refused. */
  subscribe(name: string): Promise<void> {
    if (this.channels.has(name)) return this.whenSubscribed(name);
    const channel = this.pusher.subscribe(name);
    this.channels.set(name, false);
    channel.bind_global((event: string, data: unknown) => {
      if (!event.startsWith('pusher:') && !event.startsWith('pusher_internal:')) this.listener.event(event, data, name);
    });
    channel.bind('pusher:subscription_succeeded', () => {
      if (!this.channels.has(name)) return;
      this.channels.set(name, true);
      this.settle(name, null);
      if (this.ready) this.listener.ready();
    });
    channel.bind('pusher:subscription_error', (error: { status?: number; error?: string }) => {
      this.unsubscribe(name, new ParleyError(error?.status ?? 0, 'subscription_failed', `Subscribing ${name} failed: ${error?.error ?? 'refused'}`));
    });
    return this.whenSubscribed(name);
  }

  unsubscribe(name: string, reason: Error = new Error(`unsubscribed ${name}`)): void {
    if (!this.channels.delete(name)) return;
    this.pusher.unsubscribe(name);
    this.settle(name, reason);
    if (!this.closed && this.ready) this.listener.ready(); // it may have been the last one not yet subscribed
  }

  /** While the connection is lost: a fresh attempt now. */
  reconnect(): void {
    if (this.closed || this.pusher.connection.state === 'connected') return;
    this.pusher.disconnect();
    this.pusher.connect();
  }

  close(): void {
    this.closed = true;
    this.stopReconnecting();
    for (const name of this.waiting.keys()) this.settle(name, new Error('disconnected'));
    this.channels.clear();
    this.pusher.disconnect();
  }

  private whenSubscribed(name: string): Promise<void> {
    if (this.channels.get(name)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const list = this.waiting.get(name) ?? [];
      list.push({ resolve, reject });
      this.waiting.set(name, list);
    });
  }

  private settle(name: string, error: Error | null): void {
    for (const w of this.waiting.get(name)?.splice(0) ?? []) (error ? w.reject(error) : w.resolve());
  }

  private onState(current: string): void {
    if (this.closed) return;
    if (current === 'connected') {
      this.stopReconnecting();
      if (this.ready) this.listener.ready();
      return;
    }
    for (const name of this.channels.keys()) this.channels.set(name, false);
    this.listener.lost();
    this.reconnectLater();
  }

  /** A fresh attempt after each delay of the schedule while the connection stays lost. */
  private reconnectLater(): void {
    if (this.reconnectTimer) return;
    const delays = this.options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
    const delay = delays[Math.min(this.reconnectAttempts, delays.length - 1)] ?? 1_000;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.reconnectAttempts++;
      this.reconnect();
      if (!this.closed && this.pusher.connection.state !== 'connected') this.reconnectLater();
    }, delay);
  }

  private stopReconnecting(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.reconnectAttempts = 0;
  }
}
