// The change feed (migration 012): appended in each action's transaction, read by GET /sync.
//
// A position is (tx, seq): the writing transaction's id and the row's order in it. Transaction ids are handed
// out when a transaction first locks or writes, and transactions commit in another order, so the feed is read
// only below the horizon: the oldest transaction id still running in this database (see feedHorizon). Every
// transaction below it has ended, so the rows there are final: a position handed out is never passed by a later
// commit.
// Ordering by transaction id is the order of commits wherever it matters: every use case takes its locks
// before it writes (store/locks.ts), so of two transactions that touch the same rows the one that locked them
// first also got the lower id and committed first.
import { sql } from 'kysely';
import type { DB } from './database.js';
import type { Tx } from './transaction.js';

/** One change to append: about a conversation (user_id null: for all its participants) or one user's own. */
export interface ChangeDraft {
  readonly conversation_id: number | null;
  readonly user_id: number | null;
  /** The event's broadcast name (MessageSent, InboxUpdated, ...). */
  readonly type: string;
  /** The payload as JSON text; null for InboxUpdated (each reader's entry is loaded at the sync). */
  readonly json: string | null;
}

export interface FeedPosition {
  readonly tx: number;
  readonly seq: number;
}

export interface ChangeRow extends FeedPosition {
  readonly conversation_id: number | null;
  readonly user_id: number | null;
  readonly type: string;
  /** The payload as JSON text; null for InboxUpdated. */
  readonly data: string | null;
  readonly at: Date;
}

/** The largest seq: (tx, LAST_SEQ) stands after every row of transaction tx. */
export const LAST_SEQ = Number.MAX_SAFE_INTEGER;

/** Appends the changes in one statement, in their order, inside the action's transaction. */
export async function appendChanges(trx: Tx | DB, changes: readonly ChangeDraft[]): Promise<void> {
  if (changes.length === 0) return;
  // The payloads are JSON text already: spliced in, not encoded again.
  const rows = changes.map((c) => `{"c":${c.conversation_id ?? 'null'},"u":${c.user_id ?? 'null'},"t":${JSON.stringify(c.type)},"d":${c.json ?? 'null'}}`);
  await sql`insert into sync_changes (conversation_id, user_id, type, data)
    select (e.v->>'c')::bigint, (e.v->>'u')::bigint, e.v->>'t', case when json_typeof(e.v->'d') = 'null' then null else e.v->'d' end
    from json_array_elements(${`[${rows.join(',')}]`}::json) with ordinality as e(v, ord)
    order by e.ord`.execute(trx);
}

/**
 * The horizon of the statement's snapshot, with its end (xmax) and the snapshot itself: the database function
 * parley_feed_horizon (src/store/functions/feed-horizon.ts), which says why it leaves out other databases'
 * transactions.
 */
const HORIZON = sql`parley_feed_horizon() h0`;

/**
 * Where the feed stands now: every row below (horizon, 0) is final. `snapshot` is this statement's snapshot
 * (pg_snapshot text), whose committed transactions at or above the horizon a reader loaded in the same
 * snapshot has seen already; `end` its xmax (transactions at or above it had not started).
 */
export async function feedHorizon(db: DB | Tx): Promise<{ horizon: number; end: number; snapshot: string }> {
  const { rows } = await sql<{ horizon: string; xmax: string; snapshot: string }>`
    select h0.horizon, h0.xmax, h0.snapshot from ${HORIZON}`.execute(db);
  return { horizon: Number(rows[0]!.horizon), end: Number(rows[0]!.xmax), snapshot: rows[0]!.snapshot };
}

/** Above this many changes in the whole feed after a position, a read never walks them (it probes each conversation). */
export const FEED_WALK_MAX = 5_000;

/**
 * Below it, a read walks the changes when there are fewer than this many per conversation of the user (plus a few):
 * a probe costs about one index descent per conversation, a walk a row and a membership probe per change of the
 * whole server. A user of one group syncing after 1,000 other conversations' changes probes once instead of
 * walking 1,000 rows (5,000 clients catching up after a node died each walked the same thousand rows).
 */
export const FEED_WALK_PER_CONVERSATION = 4;

/** A user's read of the feed: their changes after a position, at most `limit` of them. */
export interface FeedRead {
  readonly userId: number;
  readonly after: FeedPosition;
  /** A snapshot (pg_snapshot text) whose committed transactions are skipped (a cursor taken with the inbox). */
  readonly seen: string | null;
  readonly limit: number;
}

/** What a read found, with where the feed stood when it did (see feedHorizon). */
export interface FeedPage {
  readonly horizon: number;
  readonly end: number;
  readonly rows: ChangeRow[];
}

/** When a read walks the feed rather than probing each conversation (see FEED_WALK_PER_CONVERSATION). */
export interface WalkThreshold {
  readonly max: number;
  readonly perConversation: number;
}

const WALK: WalkThreshold = { max: FEED_WALK_MAX, perConversation: FEED_WALK_PER_CONVERSATION };

/**
 * Users' changes after their positions and below the horizon, in feed order, in one statement: each read's own
 * rows, and the rows of every conversation its user was a participant of at the time (from the transaction that
 * added them to the one that removed them, both included), skipping the transactions its `seen` snapshot saw.
 * Payloads come as JSON text, to be passed on without decoding. The horizon is taken once by the same statement,
 * in the same snapshot, and returned with each read's rows: one round trip for all of them.
 *
 * Two plans give the same rows, chosen for each read. When the whole feed has few changes after the position
 * against the user's conversations (a client that syncs often, a quiet server, a user of many conversations;
 * counted up to the threshold, see FEED_WALK_PER_CONVERSATION), those are walked in order and each is checked
 * against the user's participation spans: one probe per change. Otherwise each of the user's conversations is read
 * from its own index range: one probe per conversation, however busy the rest of the server is. The count decides
 * in the statement itself: the plan not taken is never run (a filter on the count, evaluated once per read).
 */
export async function readChangesOf(db: DB, reads: readonly FeedRead[], walk: WalkThreshold = WALK): Promise<FeedPage[]> {
  if (reads.length === 0) return [];
  const unseen = sql`(r.seen is null or not pg_visible_in_snapshot(c.tx::text::xid8, r.seen::pg_snapshot))`;
  // tx >= after_tx restates the row comparison as a plain range, which the planner estimates from its statistics.
  const afterPosition = sql`(c.tx, c.seq) > (r.after_tx, r.after_seq) and c.tx >= r.after_tx and c.tx < (select horizon from h)`;
  const columns = sql`c.tx, c.seq, c.conversation_id, c.user_id, c.type, c.data::text as data, c.at`;
  const inSpan = sql`c.tx >= m.joined_tx and (m.left_tx is null or c.tx <= m.left_tx)`;
  const walking = sql`(select n from few) < (select n from threshold)`;
  const { rows } = await sql<RawChangeRow & { i: string; horizon: string; xmax: string }>`
    with h as materialized (select h0.horizon, h0.xmax from ${HORIZON}),
    r as materialized (select * from unnest(
        ${reads.map((q) => q.userId)}::bigint[], ${reads.map((q) => q.after.tx)}::bigint[], ${reads.map((q) => q.after.seq)}::bigint[],
        ${reads.map((q) => q.seen)}::text[], ${reads.map((q) => q.limit)}::int[]
      ) with ordinality as r(user_id, after_tx, after_seq, seen, lim, i))
    select r.i, h.horizon, h.xmax, x.* from r cross join h
    left join lateral (
      -- Walk below this many changes: a few per conversation the user was in after the position, at most walk.max.
      with threshold as materialized (select least(${walk.max}::numeric, ${walk.perConversation}::numeric * count(*) + 16)::bigint as n
        from sync_memberships m where m.user_id = r.user_id and (m.left_tx is null or m.left_tx >= r.after_tx)),
      -- In key order: an index range from the position, never a scan of the whole feed for the first rows.
      few as materialized (select count(*) as n from (select 1 from sync_changes c where ${afterPosition} order by c.tx, c.seq limit (select n from threshold)) f),
      changes as (
        (select ${columns} from sync_changes c
          where ${walking} and ${afterPosition} and ${unseen}
            and (c.user_id = r.user_id or (c.user_id is null and exists (
              select 1 from sync_memberships m where m.user_id = r.user_id and m.conversation_id = c.conversation_id and ${inSpan})))
          order by c.tx, c.seq limit r.lim)
        union all
        (select ${columns} from sync_changes c
          where not ${walking} and c.user_id = r.user_id and ${afterPosition} and ${unseen}
          order by c.tx, c.seq limit r.lim)
        union all
        (select ${columns} from sync_memberships m
          cross join lateral (
            select c.* from sync_changes c
            where c.conversation_id = m.conversation_id and c.user_id is null and ${afterPosition} and ${inSpan} and ${unseen}
            order by c.tx, c.seq limit r.lim) c
          where not ${walking} and m.user_id = r.user_id and (m.left_tx is null or m.left_tx >= r.after_tx))
      )
      select * from changes order by tx, seq limit r.lim
    ) x on true
    order by r.i, x.tx, x.seq`.execute(db);
  const [horizon, end] = [Number(rows[0]!.horizon), Number(rows[0]!.xmax)];
  const pages = reads.map((): FeedPage => ({ horizon, end, rows: [] }));
  // A read without a change has one row, which says only the horizon.
  for (const row of rows) if ((row.tx as unknown) !== null) pages[Number(row.i) - 1]!.rows.push(changeRow(row));
  return pages;
}

/** One user's read (readChangesOf). */
export async function readChanges(db: DB, read: FeedRead, walk: WalkThreshold = WALK): Promise<FeedPage> {
  return (await readChangesOf(db, [read], walk))[0]!;
}

const changeRow = (r: RawChangeRow): ChangeRow => ({
  tx: Number(r.tx),
  seq: Number(r.seq),
  conversation_id: r.conversation_id === null ? null : Number(r.conversation_id),
  user_id: r.user_id === null ? null : Number(r.user_id),
  type: r.type,
  data: r.data,
  at: r.at,
});

interface RawChangeRow {
  tx: string | number;
  seq: string | number;
  conversation_id: string | number | null;
  user_id: string | number | null;
  type: string;
  data: string | null;
  at: Date;
}

/**
 * A conversation's changes of the given types (rows for all its participants), newest first, before a position
 * (or from the newest): what a conversation's own history of events looks like, for as long as the feed keeps it.
 * Only committed rows are seen (this statement's snapshot); no order across commits is promised here.
 */
export async function conversationChanges(
  db: DB | Tx,
  conversationId: number,
  types: readonly string[],
  options: { before?: FeedPosition; limit: number },
): Promise<ChangeRow[]> {
  const before = options.before ? sql`and (tx, seq) < (${options.before.tx}::bigint, ${options.before.seq}::bigint)` : sql``;
  const { rows } = await sql<RawChangeRow>`
    select tx, seq, conversation_id, user_id, type, data::text as data, at from sync_changes
    where conversation_id = ${conversationId} and user_id is null and type = any(${[...types]}::text[]) ${before}
    order by tx desc, seq desc
    limit ${options.limit}`.execute(db);
  return rows.map(changeRow);
}

/** Deletes up to `batch` changes written before `before`, and participation spans that ended before it; the number of changes deleted. */
export async function pruneChanges(db: DB | Tx, before: Date, batch: number): Promise<number> {
  // From the oldest transaction up (the primary key's order, which follows time but for a long transaction):
  // the first batch that is not past retention ends the pruning.
  const deleted = await sql`delete from sync_changes where (tx, seq) in (
    select tx, seq from (select tx, seq, at from sync_changes order by tx, seq limit ${batch}) oldest where at < ${before})`.execute(db);
  await sql`delete from sync_memberships where ctid in (
    select ctid from sync_memberships where left_at < ${before} limit ${batch})`.execute(db);
  return Number(deleted.numAffectedRows ?? 0n);
}
