// A background pass on this node's timer: the first soon after start, then on an interval, until stopped; stop()
// waits for a pass under way, and `stopping` tells a long pass to end early. (One node at a time is the pass's own
// business: its advisory locks.)
export interface Periodic {
  start(options?: { firstDelayMs?: number; intervalMs?: number }): void;
  stop(): Promise<void>;
  /** True while stop() waits: a pass of many batches ends after the batch under way. */
  readonly stopping: boolean;
}

export function periodic(pass: () => Promise<unknown>, defaults: { firstDelayMs: number; intervalMs: number }, onError: (err: unknown) => void): Periodic {
  let timer: NodeJS.Timeout | null = null;
  let first: NodeJS.Timeout | null = null;
  let running: Promise<unknown> = Promise.resolve();
  let stopping = false;
  const run = () => {
    running = pass().catch(onError);
  };
  return {
    get stopping() {
      return stopping;
    },
    start({ firstDelayMs = defaults.firstDelayMs, intervalMs = defaults.intervalMs } = {}) {
      first ??= setTimeout(run, firstDelayMs).unref();
      timer ??= setInterval(run, intervalMs).unref();
    },
    async stop() {
      stopping = true;
      if (timer) clearInterval(timer);
      if (first) clearTimeout(first);
      timer = first = null;
      await running;
      stopping = false; // a pass asked for later runs to its end
    },
  };
}
