// Channel occupancy over every node (the Pusher HTTP API's channel info, channel list and presence users):
// a question on one Redis topic, which every node subscribes to, and a reply topic per node. PUBLISH returns
// how many subscribers got the question, so the asking node knows how many answers to wait for; it waits at
// most timeoutMs (a node that died a moment ago, or is stalled) and answers with what it has.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisConnections } from '../../redis/connections.js';
import { mergeOccupancy, type OccupancyQuery, type OccupancyReport } from '../api-backend.js';

/** How long a query waits for the other nodes' answers. */
export const OCCUPANCY_TIMEOUT_MS = 1_000;

interface Request {
  readonly from: string;
  readonly id: string;
  readonly query: OccupancyQuery;
}

/** A node's answer: [channel, subscription count, presence user ids?] per occupied channel. */
interface Reply {
  readonly id: string;
  readonly channels: [string, number, string[]?][];
}

interface Pending {
  readonly report: OccupancyReport;
  received: number;
  expected: number | undefined;
  done(): void;
}

export interface RedisSurvey {
  start(): Promise<void>;
  /** The other nodes' occupancy for `query`, merged in the order they answer. */
  survey(query: OccupancyQuery): Promise<OccupancyReport>;
}

/** `answer`: this node's own occupancy, sent to a node that asks. */
export function redisSurvey(
  redis: RedisConnections,
  node: string,
  answer: (query: OccupancyQuery) => OccupancyReport,
  logger: Logger,
  timeoutMs = OCCUPANCY_TIMEOUT_MS,
): RedisSurvey {
  const requests = `${redis.prefix}occupancy`;
  const repliesTo = (nodeId: string) => `${redis.prefix}occupancy-reply:${nodeId}`;
  const pending = new Map<string, Pending>();

  function reply(request: Request): void {
    const report = answer(request.query);
    const message: Reply = { id: request.id, channels: [...report].map(([channel, o]) => (o.userIds ? [channel, o.subscriptionCount, o.userIds] : [channel, o.subscriptionCount])) };
    redis.pubsub.publish(repliesTo(request.from), JSON.stringify(message)).catch((err: unknown) => {
      logger.warn({ err: (err as Error).message }, 'occupancy reply failed');
    });
  }

  function receive(message: Reply): void {
    const waiting = pending.get(message.id);
    if (waiting === undefined) return; // too late
    const theirs: OccupancyReport = new Map(message.channels.map(([channel, subscriptionCount, userIds]) => [channel, userIds ? { subscriptionCount, userIds } : { subscriptionCount }]));
    mergeOccupancy(waiting.report, theirs);
    waiting.received++;
    if (waiting.expected !== undefined && waiting.received >= waiting.expected) waiting.done();
  }

  return {
    async start() {
      redis.pubsub.onMessage((topic, raw) => {
        if (topic !== requests && topic !== repliesTo(node)) return;
        let message: unknown;
        try {
          message = JSON.parse(raw);
        } catch {
          return;
        }
        if (topic === repliesTo(node)) receive(message as Reply);
        else if ((message as Request).from !== node) reply(message as Request);
      });
      await Promise.all([redis.pubsub.subscribe(requests), redis.pubsub.subscribe(repliesTo(node))]);
    },

    async survey(query) {
      const id = randomUUID();
      const report: OccupancyReport = new Map();
      let timer: NodeJS.Timeout | undefined;
      const settled = new Promise<void>((resolve) => {
        const entry: Pending = { report, received: 0, expected: undefined, done: resolve };
        pending.set(id, entry);
        timer = setTimeout(resolve, timeoutMs);
      });
      try {
        // Counts this node too: it receives its own question and ignores it.
        const receivers = await redis.pubsub.publish(requests, JSON.stringify({ from: node, id, query } satisfies Request));
        const entry = pending.get(id)!;
        entry.expected = Math.max(0, receivers - 1);
        if (entry.received >= entry.expected) entry.done();
        await settled;
        if (entry.received < entry.expected) logger.warn({ expected: entry.expected, received: entry.received }, 'occupancy: some nodes did not answer in time');
        return report;
      } finally {
        clearTimeout(timer);
        pending.delete(id);
      }
    },
  };
}
