// Triggering events the way an app's backend does: the official `pusher` SDK, signed requests to
// POST /apps/{app_id}/events over a keep-alive connection pool. Plus the two load shapes the benchmarks use.
import { Agent } from 'node:http';
import Pusher from 'pusher';
import { sleep } from '../../testkit/wait.js';
import { nowMs } from './clock.js';

export interface Publisher {
  trigger(channel: string, event: string, data: string): Promise<void>;
  /** One event to several channels (at most 100): one POST /apps/{app_id}/events with `channels`. */
  triggerChannels(channels: readonly string[], event: string, data: string): Promise<void>;
  /** One POST /apps/{app_id}/batch_events with one event per data, all to the channel. */
  triggerBatch(channel: string, event: string, datas: readonly string[]): Promise<void>;
  close(): void;
}

export function pusherPublisher(options: { port: number; appId: string; key: string; secret: string; connections: number }): Publisher {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const pusher = new Pusher({
    appId: options.appId,
    key: options.key,
    secret: options.secret,
    host: '127.0.0.1',
    port: String(options.port),
    useTLS: false,
    agent,
    timeout: 30_000,
  });
  return {
    async trigger(channel, event, data) {
      const response = await pusher.trigger(channel, event, data);
      await response.text();
    },
    async triggerChannels(channels, event, data) {
      const response = await pusher.trigger([...channels], event, data);
      await response.text();
    },
    async triggerBatch(channel, event, datas) {
      const response = await pusher.triggerBatch(datas.map((data) => ({ channel, name: event, data })));
      await response.text();
    },
    close: () => agent.destroy(),
  };
}

export interface LoopResult {
  readonly sent: number;
  readonly failed: number;
  readonly errors: string[];
  /** Wall time from the first send to the last answer. */
  readonly ms: number;
}

/** Closed loop: `concurrency` operations in flight for `durationMs`, each started as the previous answered. */
export async function closedLoop(op: (seq: number) => Promise<void>, concurrency: number, durationMs: number, onTick?: (sent: number) => void): Promise<LoopResult> {
  const started = nowMs();
  const end = started + durationMs;
  let seq = 0;
  let sent = 0;
  let failed = 0;
  const errors: string[] = [];
  const ticker = onTick && setInterval(() => onTick(sent), 1000);
  async function lane(): Promise<void> {
    while (nowMs() < end) {
      try {
        await op(seq++);
        sent++;
      } catch (err) {
        failed++;
        if (errors.length < 5) errors.push((err as Error).message);
        if (failed > 100) return;
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  clearInterval(ticker);
  return { sent, failed, errors, ms: nowMs() - started };
}

/** Open loop: operations started at a fixed rate for `durationMs`, whatever the answers; resolves when all answered. */
export async function openLoop(op: (seq: number) => Promise<void>, perSecond: number, durationMs: number, onTick?: (sent: number) => void): Promise<LoopResult> {
  const started = nowMs();
  const total = Math.max(1, Math.round((perSecond * durationMs) / 1000));
  let sent = 0;
  let failed = 0;
  const errors: string[] = [];
  const pending: Promise<void>[] = [];
  const ticker = onTick && setInterval(() => onTick(sent), 1000);
  for (let seq = 0; seq < total; seq++) {
    const due = started + (seq * 1000) / perSecond;
    const wait = due - nowMs();
    if (wait > 1) await sleep(wait);
    pending.push(
      op(seq).then(
        () => void sent++,
        (err: Error) => {
          failed++;
          if (errors.length < 5) errors.push(err.message);
        },
      ),
    );
  }
  await Promise.all(pending);
  clearInterval(ticker);
  return { sent, failed, errors, ms: nowMs() - started };
}
