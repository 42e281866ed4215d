// A webhook receiver for the benchmarks (bench/load/webhook-receiver.ts), started as a process of its own.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { track } from '../../testkit/processes.js';

const RECEIVER = fileURLToPath(new URL('../load/webhook-receiver.ts', import.meta.url));

export interface WebhookReceiver {
  readonly url: string;
  readonly pid: number;
  /** MessageSent webhooks received so far. */
  received(): Promise<number>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const child = track(fork(RECEIVER, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const [listening] = (await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`the webhook receiver exited (${String(code)}) before listening`))),
  ])) as [{ type: string; port: number }];
  return {
    url: `http://127.0.0.1:${listening.port}/hooks`,
    pid: child.pid!,
    async received() {
      const answer = once(child, 'message') as Promise<[{ type: string; received: number }]>;
      child.send({ type: 'count' });
      return (await answer)[0].received;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}
