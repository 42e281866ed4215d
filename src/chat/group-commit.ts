// Group commit: requests that arrive together are handled as one batch (one transaction, one statement, one
// commit) instead of one each. Requests are spread over lanes by a key (the conversation); a lane runs one
// batch at a time, in arrival order, so two requests with the same key are always handled in the order they
// came, and their effects (ids, events) follow that order. Each request still gets its own result or error.

export interface GroupCommitOptions<Req, Res> {
  /** Batches run at once, each on a lane of its own (each holds one database connection while it runs). */
  readonly lanes: number;
  /** The most requests in one batch. */
  readonly maxBatch: number;
  /** Handles a batch; returns one result or Error per request, in the requests' order. */
  readonly run: (batch: readonly Req[]) => Promise<readonly (Res | Error)[]>;
}

export interface GroupCommit<Req, Res> {
  submit(key: number, request: Req): Promise<Res>;
}

interface Pending<Req, Res> {
  readonly request: Req;
  resolve(result: Res): void;
  reject(err: unknown): void;
}

export function groupCommit<Req, Res>(options: GroupCommitOptions<Req, Res>): GroupCommit<Req, Res> {
  const lanes = Array.from({ length: Math.max(1, options.lanes) }, () => ({ queue: [] as Pending<Req, Res>[], running: false }));

  async function runLane(lane: (typeof lanes)[number]): Promise<void> {
    while (lane.queue.length > 0) {
      const batch = lane.queue.splice(0, options.maxBatch);
      try {
        const results = await options.run(batch.map((p) => p.request));
        batch.forEach((p, i) => {
          const result = results[i];
          if (result instanceof Error) p.reject(result);
          else p.resolve(result as Res);
        });
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    lane.running = false;
  }

  return {
    submit(key, request) {
      const lane = lanes[Math.abs(key) % lanes.length]!;
      return new Promise<Res>((resolve, reject) => {
        lane.queue.push({ request, resolve, reject });
        if (lane.running) return;
        lane.running = true;
        // Started after the I/O callbacks of this turn of the event loop: requests that arrived together share the batch.
        setImmediate(() => void runLane(lane));
      });
    },
  };
}
