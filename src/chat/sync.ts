// GET /sync: what a user missed, from the change feed (store/change-feed.ts), as the events they would have
// received live. A cursor is a feed position with the time it was handed out (for CHAT_SYNC_RETENTION_S) and,
// when taken with the inbox, that read's snapshot: the transactions it saw already are skipped, so "load the
// inbox, then sync from its cursor" neither misses nor repeats a change.
import { conversationChanges, feedHorizon, LAST_SEQ, readChangesOf, type ChangeRow, type FeedPosition, type FeedRead } from '../store/change-feed.js';
import type { DB } from '../store/database.js';
import type { Tx } from '../store/transaction.js';
import { turnBatched } from '../store/turn-batches.js';
import { requireGroup } from './access.js';
import { inboxEntries } from './inbox-entries.js';
import type { Actor, ChatContext } from './context.js';
import { ChatError, invalid } from '../contract/api-errors.js';

export interface Change {
  readonly type: string;
  readonly conversation_id: number | null;
  readonly data: unknown;
  readonly at: string;
}

export interface SyncPage {
  /** Each change as JSON text (a Change): payloads pass from the feed to the answer without being decoded. */
  readonly changes: string[];
  readonly cursor: string;
  readonly has_more: boolean;
}

/** The answer of GET /sync as JSON text: {"data": {changes, cursor, has_more}}. */
export const syncAnswerJson = (page: SyncPage): string =>
  `{"data":{"changes":[${page.changes.join(',')}],"cursor":${JSON.stringify(page.cursor)},"has_more":${page.has_more}}}`;

export const SYNC_LIMIT = { default: 500, max: 1000 } as const;

interface Cursor extends FeedPosition {
  /** When the cursor was handed out (ms since the epoch). */
  readonly t: number;
  /** A snapshot (pg_snapshot text) whose committed transactions were seen already; null: none. */
  readonly seen: string | null;
}

const SNAPSHOT = /^(\d{1,20}):(\d{1,20}):((?:\d{1,20})(?:,\d{1,20})*)?$/;

const XID8_MAX = 2n ** 64n - 1n;

/**
 * Whether PostgreSQL reads the text as a pg_snapshot, as its input function checks it: xmin and xmax from 1 with
 * xmin ≤ xmax, each running transaction in [xmin, xmax) and in order. Checked here because the syncs of a turn
 * share one statement (feedReadsOfTurn): a forged cursor must fail its own request, not the others'.
 */
function isSnapshot(text: string): boolean {
  const match = SNAPSHOT.exec(text);
  if (!match) return false;
  const [xmin, xmax] = [BigInt(match[1]!), BigInt(match[2]!)];
  if (xmin < 1n || xmax > XID8_MAX || xmin > xmax) return false;
  let previous = xmin;
  for (const xid of match[3]?.split(',').map(BigInt) ?? []) {
    if (xid < previous || xid >= xmax) return false;
    previous = xid;
  }
  return true;
}

export function encodeCursor(cursor: Cursor): string {
  const parts: (number | string)[] = [1, cursor.tx, cursor.seq, cursor.t];
  if (cursor.seen !== null) parts.push(cursor.seen);
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

// Made when thrown: an error captures a stack trace, which every sync paid for when it was made up front.
const badCursor = (): ChatError => invalid('since', 'The cursor is not one this API returned.');

export function decodeCursor(text: string): Cursor {
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString());
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(parts) || parts.length < 4 || parts.length > 5 || parts[0] !== 1) throw badCursor();
  const [, tx, seq, t, seen] = parts as unknown[];
  const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!count(tx) || !count(seq) || !count(t)) throw badCursor();
  if (seen !== undefined && (typeof seen !== 'string' || seen.length > 20_000 || !isSnapshot(seen))) throw badCursor();
  return { tx, seq, t, seen: seen ?? null };
}

const isAfter = (a: FeedPosition, b: FeedPosition): boolean => a.tx > b.tx || (a.tx === b.tx && a.seq > b.seq);

/** The upper bound (xmax) of a pg_snapshot text: no transaction at or above it is seen. */
const snapshotEnd = (snapshot: string): number => Number(snapshot.split(':')[1]);

/** How long a sync waits for the transactions that were running when it read (see syncChanges). */
export const SYNC_SETTLE_MS = 500;

/** Waits until every transaction of this database below `end` has ended: true, or false after `waitMs`. */
async function horizonReaches(db: DB, end: number, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, Math.max(0, deadline - Date.now()))));
    if ((await feedHorizon(db)).horizon >= end) return true;
    if (Date.now() >= deadline) return false;
  }
}

/** The position of a feed read now: every change committed before it is before the cursor. */
export async function cursorNow(db: DB | Tx): Promise<string> {
  const { horizon, end: xmax, snapshot } = await feedHorizon(db);
  // Transactions between the horizon and the snapshot's end that had committed were seen by this read.
  return encodeCursor({ tx: horizon - 1, seq: LAST_SEQ, t: Date.now(), seen: xmax > horizon ? snapshot : null });
}

/**
 * The feed reads of the syncs asked in the same turn of the event loop, in one statement (store/turn-batches.ts):
 * after a node dies thousands of clients sync within seconds, and one statement for a turn's syncs costs the
 * database and the node little more than one for a single sync.
 */
const feedReadsOfTurn = turnBatched((db: DB, reads: readonly FeedRead[]) => readChangesOf(db, reads));

/** A user's changes after a cursor; a call without one answers the position now. */
export async function syncChanges(ctx: ChatContext, actor: Actor, options: { since?: string; limit: number }): Promise<SyncPage> {
  if (options.since === undefined) return { changes: [], cursor: await cursorNow(ctx.db), has_more: false };
  const since = decodeCursor(options.since);
  if (Date.now() - since.t > ctx.limits.syncRetentionSeconds * 1000) {
    throw new ChatError('cursor_expired', 'The cursor is older than the change feed keeps (CHAT_SYNC_RETENTION_S): load the state again, then sync from its cursor.');
  }
  const read: FeedRead = { userId: actor.userId, after: since, seen: since.seen, limit: options.limit + 1 };
  let { horizon, end, rows } = await feedReadsOfTurn(ctx.db).load(read);
  // Transactions that began before this read were still running: until they end, their changes and those of
  // every later one are held back (store/change-feed.ts). Most end within milliseconds; waiting for them (not
  // long) means a sync has every change committed before it was asked, as a client just back online expects.
  if (rows.length <= options.limit && horizon < end && (await horizonReaches(ctx.db, end, SYNC_SETTLE_MS))) {
    ({ horizon, rows } = await feedReadsOfTurn(ctx.db).load(read));
  }
  const hasMore = rows.length > options.limit;
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  // A full page ends at its last change; otherwise everything below the horizon has been read.
  const readTo: FeedPosition = last ?? since;
  const next = hasMore || isAfter(readTo, { tx: horizon - 1, seq: LAST_SEQ }) ? readTo : { tx: horizon - 1, seq: LAST_SEQ };
  // Past the snapshot's end nothing of it can be skipped any more.
  const seen = since.seen !== null && next.tx < snapshotEnd(since.seen) ? since.seen : null;
  return {
    changes: await render(ctx.db, actor.userId, page),
    cursor: encodeCursor({ tx: next.tx, seq: next.seq, t: Date.now(), seen }),
    has_more: hasMore,
  };
}

/**
 * The page's rows as changes. InboxUpdated is state: each conversation's latest inbox change in the page becomes
 * the user's entry as it is now, at that change's place, and none for a conversation the user is no longer in.
 */
async function render(db: DB, userId: number, rows: readonly ChangeRow[]): Promise<string[]> {
  const lastInbox = new Map<number, number>();
  rows.forEach((r, i) => {
    if (r.type === 'InboxUpdated' && r.conversation_id !== null) lastInbox.set(r.conversation_id, i);
  });
  const entries = await inboxEntries(db, userId, [...lastInbox.keys()]);
  const changes: string[] = [];
  rows.forEach((r, i) => {
    let data = r.data;
    if (r.type === 'InboxUpdated') {
      if (r.conversation_id === null || lastInbox.get(r.conversation_id) !== i) return;
      const entry = entries.get(r.conversation_id);
      if (entry === undefined) return;
      data = JSON.stringify(entry);
    }
    changes.push(changeJson(r, data));
  });
  return changes;
}

/** The events a group's own history of changes lists: who joined, left, was removed or got another role. */
const GROUP_CHANGE_TYPES = ['GroupParticipantsChanged'];

export const GROUP_CHANGES_LIMIT = { default: 50, max: 100 } as const;

/**
 * GET /groups/{id}/changes: the group's membership changes (GroupParticipantsChanged, as broadcast), newest first,
 * for as long as the change feed keeps them (CHAT_SYNC_RETENTION_S), so a client can show "Alice added Carol"
 * between the messages after a reload. Participants only. next_cursor: pass it back as cursor for older ones.
 */
export async function groupChanges(ctx: ChatContext, actor: Actor, groupId: number, options: { cursor?: string; limit: number }): Promise<{ data: string[]; next_cursor: string | null }> {
  await requireGroup(ctx.db, groupId, actor.userId);
  const before = options.cursor === undefined ? undefined : decodeChangePosition(options.cursor);
  const rows = await conversationChanges(ctx.db, groupId, GROUP_CHANGE_TYPES, { before, limit: options.limit + 1 });
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return { data: page.map((r) => changeJson(r)), next_cursor: rows.length > options.limit && last ? `${last.tx}.${last.seq}` : null };
}

function decodeChangePosition(text: string): FeedPosition {
  const match = /^(\d{1,19})\.(\d{1,19})$/.exec(text);
  const position = match && { tx: Number(match[1]), seq: Number(match[2]) };
  if (!position || !Number.isSafeInteger(position.tx) || !Number.isSafeInteger(position.seq)) throw invalid('cursor', 'The cursor is not one this API returned.');
  return position;
}

/** A change as JSON text (a Change): the payload passed on as the feed holds it. */
const changeJson = (r: ChangeRow, data: string | null = r.data): string =>
  `{"type":${JSON.stringify(r.type)},"conversation_id":${r.conversation_id},"data":${data},"at":"${r.at.toISOString()}"}`;
