// The external Pusher driver (BROADCAST_DRIVER=pusher), not the built-in server: events go to an external
// Pusher-compatible server (hosted Pusher, Soketi,
// Reverb, or another Parley) through the Pusher HTTP API, with the official `pusher` SDK. Parley runs no
// socket server of its own then; browsers connect to the external server.
//
// What this driver promises (docs/pusher-driver.md says it for operators):
// - Channels are sent in chunks of at most 100 (Pusher's limit per trigger). One event's chunks go one after
//   another, and events sharing a channel reach the server in the order they were published; events on
//   unrelated channels travel in parallel.
// - An event whose data is larger than maxEventBytes is not sent (the server would refuse it with 413).
//   Neither it nor a request that fails for good (4xx, 5xx or network after the retries) is silently lost:
//   each is logged at error level with event, channels, size and status, and counted in
//   parley_pusher_events_failed_total. The chat write is committed either way; clients catch up over HTTP.
//   Delivery stays at-most-once, and the chat request is answered as with the built-in server.
// - Network errors (except a timeout, when the server may have taken the event) and 5xx answers are retried
//   a bounded number of times with a short backoff; an event may then arrive twice (payloads carry ids).
// - unsubscribeUser cannot drop one subscription on a server Parley does not run: for a member removed by
//   someone else it ends the user's signed-in connections (terminate_connections), and the auth endpoint
//   refuses the re-subscription. Leaving a group and deleting it end nobody's connections.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Logger } from 'pino';
import type PusherSdk from 'pusher';
import type { Fanout } from '../events/broadcaster.js';

/** Pusher's limit on the channels of one trigger. */
export const PUSHER_CHANNELS_PER_TRIGGER = 100;

/** Why an event (or one chunk of it) was not delivered to the external server. */
export const PUSHER_FAILURE_REASONS = ['too_large', 'rejected', 'server_error', 'timeout', 'network'] as const;
export type PusherFailureReason = (typeof PUSHER_FAILURE_REASONS)[number];

export interface PusherHttpMetrics {
  /** One event (chunk) the external server did not take, by broadcast name and reason. */
  eventFailed(event: string, reason: PusherFailureReason): void;
  /** One request sent again after a transient failure. */
  retried(): void;
  /** One terminate_connections that failed for good. */
  terminationFailed(): void;
}

export interface PusherHttpOptions {
  readonly appId: string;
  readonly key: string;
  readonly secret: string;
  readonly host: string;
  readonly port: number;
  readonly scheme: 'http' | 'https';
  /** Largest `data` of one event in bytes: larger events are not sent (hosted Pusher: 10 KiB). */
  readonly maxEventBytes: number;
  /** Per request. Default 5000. */
  readonly timeoutMs?: number;
  /** Waits before each retry of a transient failure; its length is the number of retries. Default [100, 400]. */
  readonly retryDelaysMs?: readonly number[];
  readonly logger: Logger;
  readonly metrics?: PusherHttpMetrics;
  /** CHAT_BODY_MAX_CHARS: at startup, a warning when a long message may not fit in maxEventBytes. */
  readonly bodyMaxChars?: number;
}

/**
 * The longest message body (ASCII) whose events always fit in maxEventBytes: MessageSent and InboxUpdated carry
 * the body, the preview of the message replied to (as long again) and up to ~3 KB of the rest. Text outside
 * ASCII takes 2 to 3 bytes per character in UTF-8.
 */
export function bodyCharsThatFit(maxEventBytes: number): number {
  return Math.max(0, Math.floor((maxEventBytes - 3_000) / 2));
}

export interface PusherHttpFanout extends Fanout {
  /** Closes the kept-alive connections to the external server. */
  close(): void;
}

/** What a failed SDK request carries (pusher's RequestError). */
interface RequestErrorLike {
  readonly message: string;
  readonly status?: number;
  readonly body?: string;
  readonly error?: { readonly name?: string; readonly type?: string; readonly message?: string; readonly code?: string };
}

interface Failure {
  readonly reason: PusherFailureReason;
  readonly status: number | null;
  readonly detail: string;
  readonly transient: boolean;
}

const SOCKET_ID = /^\d+\.\d+$/;
/** Channel names shown in one log line; the count is always given. */
const LOGGED_CHANNELS = 20;

function classify(err: unknown): Failure {
  const e = err as RequestErrorLike;
  if (typeof e?.status === 'number') {
    const status = e.status;
    const detail = (e.body ?? '').slice(0, 300);
    if (status === 413) return { reason: 'too_large', status, detail, transient: false };
    if (status >= 500) return { reason: 'server_error', status, detail, transient: true };
    return { reason: 'rejected', status, detail, transient: false };
  }
  const cause = e?.error;
  // node-fetch's abort (the SDK's timeout): the server may have taken the event, so it is not sent again.
  if (cause?.name === 'AbortError' || cause?.type === 'aborted') return { reason: 'timeout', status: null, detail: 'no answer in time', transient: false };
  if (cause) return { reason: 'network', status: null, detail: cause.code ?? cause.message ?? String(cause), transient: true };
  // Thrown before any request (the SDK's own validation of a channel name, event name or socket id).
  return { reason: 'rejected', status: null, detail: (err as Error)?.message ?? String(err), transient: false };
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs tasks so that two tasks sharing a key run one after the other, in the order they were scheduled;
 * a task whose keys are all free starts at once (synchronously). Tasks must not reject.
 */
function keyedSequencer() {
  const tails = new Map<string, Promise<void>>();
  return {
    run(keys: readonly string[], after: Promise<void> | undefined, task: () => Promise<void>): Promise<void> {
      const waits: Promise<void>[] = [];
      for (const key of keys) {
        const tail = tails.get(key);
        if (tail) waits.push(tail);
      }
      if (after) waits.push(after);
      const done = waits.length === 0 ? task() : Promise.all(waits).then(task);
      for (const key of keys) tails.set(key, done);
      void done.then(() => {
        for (const key of keys) if (tails.get(key) === done) tails.delete(key);
      });
      return done;
    },
  };
}

/**
 * The SDK (and node-fetch 2 under it, which prints a deprecation warning for `punycode` on Node 21 and newer) is
 * loaded only when this driver is used.
 */
export async function pusherHttpFanout(options: PusherHttpOptions): Promise<PusherHttpFanout> {
  const { default: Pusher } = (await import('pusher')) as { default: typeof PusherSdk };
  const { logger, metrics, maxEventBytes } = options;
  const retryDelaysMs = options.retryDelaysMs ?? [100, 400];
  const agent = options.scheme === 'https' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const pusher = new Pusher({
    appId: options.appId,
    key: options.key,
    secret: options.secret,
    host: options.host,
    port: String(options.port),
    useTLS: options.scheme === 'https',
    timeout: options.timeoutMs ?? 5_000,
    agent,
  });
  const sequencer = keyedSequencer();
  if (options.bodyMaxChars !== undefined && options.bodyMaxChars > bodyCharsThatFit(maxEventBytes)) {
    logger.warn(
      { bodyMaxChars: options.bodyMaxChars, maxEventBytes, fits: bodyCharsThatFit(maxEventBytes) },
      `messages longer than about ${bodyCharsThatFit(maxEventBytes)} characters can make events larger than PUSHER_MAX_EVENT_BYTES; ` +
        'those are not delivered live (clients catch up over HTTP). Lower CHAT_BODY_MAX_CHARS, or raise the server’s limit and PUSHER_MAX_EVENT_BYTES',
    );
  }

  /** One request with the retry policy; resolves with null on success, or the failure after the last attempt. */
  async function attempt(send: () => Promise<{ text(): Promise<string> }>): Promise<(Failure & { attempts: number }) | null> {
    for (let attempts = 1; ; attempts++) {
      try {
        const response = await send();
        await response.text(); // consumed, so the kept-alive connection is free again
        return null;
      } catch (err) {
        const failure = classify(err);
        if (!failure.transient || attempts > retryDelaysMs.length) return { ...failure, attempts };
        metrics?.retried();
        logger.warn({ reason: failure.reason, status: failure.status, detail: failure.detail, attempt: attempts }, 'Pusher HTTP API request failed, retrying');
        await sleep(retryDelaysMs[attempts - 1]!);
      }
    }
  }

  function describeChannels(channels: readonly string[]) {
    return {
      channels: channels.length > LOGGED_CHANNELS ? [...channels.slice(0, LOGGED_CHANNELS), `… ${channels.length - LOGGED_CHANNELS} more`] : channels,
      channelCount: channels.length,
    };
  }

  return {
    publish(channels, event, data, exceptSocketId) {
      if (channels.length === 0) return;
      const bytes = Buffer.byteLength(data, 'utf8');
      if (bytes > maxEventBytes) {
        metrics?.eventFailed(event, 'too_large');
        logger.error(
          { event, ...describeChannels(channels), bytes, limit: maxEventBytes, reason: 'too_large', status: null },
          'event not sent to the Pusher server: its data is larger than PUSHER_MAX_EVENT_BYTES (clients catch up over HTTP)',
        );
        return;
      }
      // The SDK refuses (throws on) a socket id that is not Pusher's; Parley only passes valid ones.
      const params = exceptSocketId !== undefined && SOCKET_ID.test(exceptSocketId) ? { socket_id: exceptSocketId } : undefined;
      let previous: Promise<void> | undefined;
      for (const part of chunk(channels, PUSHER_CHANNELS_PER_TRIGGER)) {
        previous = sequencer.run(part, previous, async () => {
          const failure = await attempt(() => pusher.trigger(part, event, data, params));
          if (!failure) return;
          metrics?.eventFailed(event, failure.reason);
          logger.error(
            { event, ...describeChannels(part), bytes, reason: failure.reason, status: failure.status, detail: failure.detail, attempts: failure.attempts },
            'event not delivered to the Pusher server (clients catch up over HTTP)',
          );
        });
      }
      return previous;
    },

    async unsubscribeUser(channel, userId, options) {
      // A server Parley does not run cannot drop one subscription: ending the user's connections is the only way.
      if (options?.endConnections === false) return;
      const failure = await attempt(() => pusher.terminateUserConnections(userId));
      if (!failure) return;
      metrics?.terminationFailed();
      logger.error(
        { channel, userId, reason: failure.reason, status: failure.status, detail: failure.detail, attempts: failure.attempts },
        'could not end a removed member’s connections on the Pusher server',
      );
    },

    async disconnectUser(userId) {
      // A server Parley does not run knows a user's connections by their sign-in only.
      const failure = await attempt(() => pusher.terminateUserConnections(userId));
      if (!failure) return;
      metrics?.terminationFailed();
      logger.error({ userId, reason: failure.reason, status: failure.status, detail: failure.detail }, 'could not end a banned user’s connections on the Pusher server');
    },

    close() {
      agent.destroy();
    },
  };
}
