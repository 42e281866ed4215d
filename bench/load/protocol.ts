// Messages between the benchmark driver and its client worker processes (child_process IPC).
import type { HistogramData } from '../lib/stats.js';

/** One simulated client: a socket subscribed to these channels. */
export interface ClientSpec {
  readonly channels: readonly string[];
  /** Bearer token for the channel auth endpoint (auth kind 'endpoint'). */
  readonly token?: string;
  /** The socket URL of this client, when not the command's (clients of one pool spread over several nodes). */
  readonly url?: string;
  /** The auth endpoint of this client's node, when not the auth mode's. */
  readonly authUrl?: string;
}

/** How private channels are authorized. */
export type AuthMode =
  | { readonly kind: 'none' }
  /** Signed in the worker with the app secret, as an app's backend would. */
  | { readonly kind: 'sign'; readonly appKey: string; readonly appSecret: string }
  /** POSTed to Parley's /broadcasting/auth with each client's token, as pusher-js does. */
  | { readonly kind: 'endpoint'; readonly url: string };

export interface ConnectCommand {
  readonly type: 'connect';
  /** ws://host:port/app/{key}?protocol=7... */
  readonly url: string;
  readonly clients: readonly ClientSpec[];
  readonly auth: AuthMode;
  /** Source addresses (127.0.0.x) used in turn, so many sockets do not exhaust one address's ephemeral ports. */
  readonly localAddresses: readonly string[];
  /** Connects (with their subscriptions) in flight at once. */
  readonly concurrency: number;
  readonly timeoutMs: number;
}

export interface MeasureCommand {
  readonly type: 'measure';
  /** Report a message as complete once every client of this worker has each of these events for it. */
  readonly completion?: readonly string[];
}

export type DriverMessage = ConnectCommand | MeasureCommand | { readonly type: 'report' } | { readonly type: 'close' };

export interface EventFigures {
  readonly count: number;
  /** Arrival time minus the send time carried in the payload. */
  readonly latency: HistogramData;
}

export interface WorkerReport {
  readonly type: 'report';
  readonly events: Record<string, EventFigures>;
  /** Monotonic ms (process.hrtime) of the first and last marked frame since 'measure'. */
  readonly firstAt: number;
  readonly lastAt: number;
  /** Sockets closed during the measurement, by close code. */
  readonly closed: Record<string, number>;
  readonly open: number;
}

export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'progress'; readonly connected: number; readonly failed: number }
  | { readonly type: 'connected'; readonly connected: number; readonly failed: number; readonly errors: string[]; readonly ms: number }
  /** Every client of the worker has all completion events of message `seq`; lastAt is when the last one arrived. */
  | { readonly type: 'complete'; readonly seq: number; readonly clients: number; readonly lastAt: number }
  | WorkerReport;

/**
 * The marker a benchmark puts in an event's payload (a message body, or the data of a triggered event):
 * `~b~<seq>~<sent at, monotonic ms>~`. Clients find it without parsing the frame.
 */
export const marker = (seq: number, sentAt: number): string => `~b~${seq}~${sentAt.toFixed(3)}~`;
