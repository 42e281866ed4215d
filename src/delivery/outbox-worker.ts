// The outbox's delivery worker, one per node (docs/notifications.md). It claims due rows with FOR UPDATE SKIP
// LOCKED in one statement that leases them (next_attempt_at moved LEASE_MS ahead), so each row is delivered
// by one node at a time and no transaction stays open while a deliverer waits on the network; then it
// deletes a delivered row, reschedules a failed one (exponential backoff with jitter, the first retry within
// 10 s) or, past MAX_AGE_MS, marks it failed with an error log and a metric. A node that dies mid-delivery
// leaves its rows to be claimed again when the lease runs out: delivery is at least once.
//
// In order per conversation: a row is claimed only when no earlier row of its conversation, kind and target
// is still waiting (src/store/outbox.ts, claimDue).
//
// A send's rows skip the claim when they can (deliverLeased): written already leased to this node when they are
// first in their conversation's queue, they are delivered straight after the commit from memory, which spares
// the database a claim (an UPDATE of every row) per delivery.
//
// Adding a kind: write rows with `kind: 'mykind'` in the action's transaction (insertOutbox, src/store/outbox.ts),
// then register a deliverer for it before start():
//   worker.register({ kind: 'mykind', deliver: async (row) => { ...; throw to retry } });
// deliver() resolves when the row is delivered (it is then deleted) and throws when it should be tried again.
// Rows of a kind with no registered deliverer stay in the table untouched.
import type { Logger } from 'pino';
import type { DB } from '../store/database.js';
import { claimDue, deleteOutboxRows, releaseOutboxRows, failOutboxRow, nextDueAt, rescheduleOutboxRow, type OutboxRow } from '../store/outbox.js';
import { retrying } from '../store/transaction.js';

export interface Deliverer {
  readonly kind: string;
  /** Resolves when delivered; throws for a retry. */
  deliver(row: OutboxRow): Promise<void>;
}

export interface OutboxEvents {
  delivered(kind: string): void;
  retried(kind: string): void;
  failed(kind: string): void;
}

export interface OutboxWorker {
  register(deliverer: Deliverer): void;
  /** Look for due rows now (called after a commit that wrote some). */
  wake(): void;
  /**
   * Delivers rows this node wrote already leased to itself (insertOutboxLeasingHeads, src/store/outbox.ts):
   * no claim needed. Rows of one conversation go one after the other, in id order.
   */
  deliverLeased(rows: readonly OutboxRow[]): void;
  start(): void;
  /** Stops claiming and waits for the deliveries under way. */
  stop(): Promise<void>;
}

export const LEASE_MS = 60_000;
export const MAX_AGE_MS = 24 * 3600_000;
const BATCH = 50;
const MAX_IN_FLIGHT = 200;
const FLUSH_MS = 5;

/** The pause before retry number `attempt` (1 = the first retry): 2.5-5 s, doubling up to 15-30 min. */
export function retryDelayMs(attempt: number, baseMs = 5_000): number {
  const cap = 30 * 60_000;
  const full = Math.min(cap, baseMs * 2 ** Math.max(0, attempt - 1));
  return full / 2 + Math.random() * (full / 2);
}

export function createOutboxWorker(options: {
  db: DB;
  logger: Logger;
  events?: OutboxEvents;
  /** How often to look for rows other nodes wrote (or whose retry came due) when nothing woke this node. */
  pollMs?: number;
  retryBaseMs?: number;
  maxAgeMs?: number;
  /** Wakes within this time are gathered into one claim (under load: fewer, fuller claims). */
  gatherMs?: number;
}): OutboxWorker {
  const { db } = options;
  const logger = options.logger.child({ component: 'outbox' });
  const pollMs = options.pollMs ?? 1_000;
  const maxAgeMs = options.maxAgeMs ?? MAX_AGE_MS;
  const gatherMs = options.gatherMs ?? 10;
  let gathering: NodeJS.Timeout | null = null;
  const deliverers = new Map<string, Deliverer>();
  let running = false;
  let looping: Promise<void> | null = null;
  let again = false;
  let timer: NodeJS.Timeout | null = null;
  // Deliveries under way (each row leased, so no node claims it again meanwhile); a slow receiver holds up
  // only its own rows, never the claiming of others.
  const inFlight = new Set<Promise<unknown>>();
  // Delivered rows, deleted together in one statement a moment later (rows delivered within FLUSH_MS share it).
  let delivered: OutboxRow[] = [];
  let flushing: Promise<void> | null = null;
  // Whether rows may be waiting that no claim has taken yet: set by every wake (a commit that wrote rows to wait
  // their turn, the poll, a retry), cleared when a look at the table finds no waiting row at all.
  let mayBeWaiting = true;
  let wakes = 0;

  function flushDelivered(): Promise<void> {
    flushing ??= new Promise<void>((resolve) => setTimeout(resolve, FLUSH_MS)).then(async () => {
      const rows = delivered;
      delivered = [];
      flushing = null;
      await retrying(() => deleteOutboxRows(db, rows.map((r) => r.id)));
      for (const row of rows) options.events?.delivered(row.kind);
      // The conversations' next rows, if any, may go now. When every row written lately was leased and
      // delivered (the usual case under a steady load), there are none: no claim.
      if (mayBeWaiting) wake();
    });
    return flushing;
  }

  /** Delivers a leased row and records the outcome; true when delivered. */
  async function deliverOne(row: OutboxRow): Promise<boolean> {
    const deliverer = deliverers.get(row.kind)!;
    try {
      await deliverer.deliver(row);
      delivered.push(row);
      await flushDelivered();
      return true;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const now = new Date();
      if (now.getTime() - row.created_at.getTime() >= maxAgeMs) {
        await failOutboxRow(db, row.id, now, message);
        options.events?.failed(row.kind);
        logger.error({ id: row.id, kind: row.kind, target: row.target, type: row.type, attempts: row.attempts + 1, err: message }, 'outbox: given up after 24 h');
      } else {
        const delay = retryDelayMs(row.attempts + 1, options.retryBaseMs);
        await rescheduleOutboxRow(db, row.id, new Date(now.getTime() + delay), message);
        options.events?.retried(row.kind);
        logger.warn({ id: row.id, kind: row.kind, target: row.target, type: row.type, attempt: row.attempts + 1, retryInMs: Math.round(delay), err: message }, 'outbox: delivery failed, retrying');
        wake(); // the next look is timed for the retry
      }
      return false;
    }
  }

  /** Leased rows this node will not deliver now: their lease ends at once, so they are claimed in their turn. */
  async function leaveToClaims(rows: readonly OutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    await retrying(() => releaseOutboxRows(db, rows.map((r) => r.id)));
    wake();
  }

  function track(delivery: Promise<unknown>, id: number): void {
    const tracked = delivery
      .catch((err: unknown) => logger.error({ err, id }, 'outbox: could not record a delivery'))
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  }

  function deliverLeased(rows: readonly OutboxRow[]): void {
    if (!running) return; // claimed when their lease ends, by this node once started or by another
    // Started after this turn of the event loop: the send's answers and the next batch's write go out first, and
    // the deliveries' work (payload, signature, POST) overlaps that write's wait on the database instead of
    // delaying it (which, sends being written one batch at a time, lowered their rate).
    track(new Promise<void>((resolve) => setImmediate(() => resolve(startChains(rows)))), rows[0]?.id ?? 0);
  }

  function startChains(rows: readonly OutboxRow[]): void {
    const chains = new Map<string, OutboxRow[]>();
    for (const row of [...rows].sort((a, b) => a.id - b.id)) {
      if (!deliverers.has(row.kind)) continue;
      // Rows of a conversation (per kind and target) one after the other; the others side by side.
      const key = row.conversation_id === null ? `row:${row.id}` : `${row.conversation_id}:${row.kind}:${row.target}`;
      const chain = chains.get(key);
      if (chain) chain.push(row);
      else chains.set(key, [row]);
    }
    for (const chain of chains.values()) {
      track(
        (async () => {
          for (const [i, row] of chain.entries()) {
            // A failed row stays waiting (retried later): the rows after it wait for it, to be claimed in order.
            if (!(await deliverOne(row))) {
              await leaveToClaims(chain.slice(i + 1));
              return;
            }
          }
        })(),
        chain[0]!.id,
      );
    }
  }

  async function pass(): Promise<number> {
    const kinds = [...deliverers.keys()];
    const now = new Date();
    const room = MAX_IN_FLIGHT - inFlight.size;
    if (room <= 0) return 0; // woken again as deliveries finish
    const rows = await retrying(() => claimDue(db, kinds, Math.min(BATCH, room), now, new Date(now.getTime() + LEASE_MS)));
    // Rows claimed together belong to different conversations (or none): delivered side by side.
    for (const row of rows) track(deliverOne(row), row.id);
    return rows.length;
  }

  async function loop(): Promise<void> {
    do {
      again = false;
      try {
        while (running && (await pass()) > 0) again = false;
      } catch (err) {
        if (running) logger.warn({ err }, 'outbox: claiming failed; trying again shortly');
      }
    } while (running && again);
    looping = null;
    schedule();
  }

  async function schedule(): Promise<void> {
    if (!running) return;
    if (timer) clearTimeout(timer);
    let wait = pollMs;
    try {
      const wakesBefore = wakes;
      const due = await nextDueAt(db);
      // Nothing a claim could take now: the rows left are leased (being delivered) or wait for a later retry,
      // for which the timer below or the poll wakes the worker. (Counting leased rows kept this set for as long
      // as any delivery was under way, so under load every delete of delivered rows was followed by a claim and
      // this look, some 200 pairs of queries a second that found nothing.)
      if ((due === null || due.getTime() > Date.now()) && wakes === wakesBefore) mayBeWaiting = false;
      // A retry coming due before the next poll: woken then. (Due rows held back behind an earlier row of their
      // conversation wait for the poll, or for the wake after that row's delivery.)
      const until = due ? due.getTime() - Date.now() : Infinity;
      if (until > 0 && until < pollMs) wait = Math.max(20, until);
    } catch {
      // the database is away: look again after pollMs
    }
    if (!running) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(wake, wait);
    timer.unref();
  }

  function wake(): void {
    mayBeWaiting = true;
    wakes++;
    if (!running || deliverers.size === 0) return;
    if (looping) {
      again = true;
      return;
    }
    // Each commit and each delivery wakes the worker: gathered, a burst of them makes one claim, not one each.
    gathering ??= setTimeout(() => {
      gathering = null;
      if (!running) return;
      if (looping) again = true;
      else looping = loop();
    }, gatherMs);
  }

  return {
    deliverLeased,
    register(deliverer) {
      deliverers.set(deliverer.kind, deliverer);
    },
    wake,
    start() {
      running = true;
      wake();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = null;
      if (gathering) clearTimeout(gathering);
      gathering = null;
      await looping;
      await Promise.all([...inFlight]);
      await flushing;
    },
  };
}
