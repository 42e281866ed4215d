// Read replicas (DATABASE_REPLICA_URLS): the one home of the rule that sends a read that tolerates lag (history,
// threads, pins, search, user search, exports) to a streaming replica or to the primary.
//
// How fresh a replica is, measured in the primary's WAL: every probe (a few times per max lag) this node asks
// the primary for its WAL position (pg_current_wal_lsn) and then each replica how far it has replayed
// (pg_last_wal_replay_lsn). A replica that has replayed the position the primary had when asked at time T holds
// every commit made before T: its lag is at most now − T. It serves reads while that is within the max lag, and
// ages out by itself when its probes stop answering. (pg_last_xact_replay_timestamp is not used: it grows while
// the primary is idle, and a replica cut off from its primary would look current.)
//
// Read-your-writes, by a time fence: after a user's write commits (before its answer is sent), that user's reads
// go to the primary for the max lag. Past it, a replica in use has replayed every commit older than the max lag,
// so the write too. The fence needs no LSN of the write (no extra round trip per write) and is only a key with a
// time to live, which several nodes share through Redis (see WriteFences).
//
// A read that fails on a replica (the replica went away since its last probe, a query cancelled by a conflict
// with recovery, or a 404 because the replica has not yet replayed something another user did, such as adding
// the reader to a group) runs again on the primary: a client never sees a replica's failure.
import { sql, Kysely } from 'kysely';
import type { DB } from './database.js';
import { postgresDialect } from './database.js';
import type { Schema } from './schema.js';

/** Remembers, for max lag ms, that a user wrote: their reads meanwhile go to the primary. */
export interface WriteFences {
  mark(userId: number): Promise<void>;
  /** True while the user's fence lasts (also when it cannot be known: the primary is always right). */
  active(userId: number): Promise<boolean>;
}

/** This node's fences, in memory: enough for one node, or for several whose users stick to one node each. */
export function memoryWriteFences(ttlMs: number): WriteFences {
  const until = new Map<number, number>();
  return {
    async mark(userId) {
      const now = performance.now();
      // Expired fences are dropped whenever the map grows large: it holds about a max lag's worth of writers.
      if (until.size >= 10_000) for (const [id, end] of until) if (end <= now) until.delete(id);
      until.set(userId, now + ttlMs);
    },
    async active(userId) {
      const end = until.get(userId);
      if (end === undefined) return false;
      if (end > performance.now()) return true;
      until.delete(userId);
      return false;
    },
  };
}

/** Runs a read on a database: the replica chosen for it, or the primary. */
export type ReadOn = <T>(fn: (db: DB) => Promise<T>) => Promise<T>;

/** What the replicas did since this node started (the metrics). */
export interface ReplicaStats {
  /** Reads a replica answered. */
  readonly replicaReads: number;
  /** Reads that went to the primary, by why: the user's own recent write, no replica within the max lag, or the replica's read failed. */
  readonly primaryReads: { readonly own_write: number; readonly no_replica: number; readonly replica_failed: number };
  /** Replicas within the max lag at the last probe. */
  readonly usable: number;
}

export interface ReadReplicas {
  /** Runs a lag-tolerant read of `userId`'s (null: no user's own, e.g. the server's) on a replica when one may serve it, else on the primary. */
  read<T>(userId: number | null, fn: (db: DB) => Promise<T>): Promise<T>;
  /** userId's write has committed: their reads see it from now on (call before answering the write). */
  wrote(userId: number): Promise<void>;
  stats(): ReplicaStats;
  close(): Promise<void>;
}

export interface ReadReplicaOptions {
  readonly urls: readonly string[];
  readonly maxLagMs: number;
  readonly fences: WriteFences;
  /** As DATABASE_PREPARED_STATEMENTS (prepared statements run on a hot standby as on the primary). */
  readonly preparedStatements: boolean;
  /** Hears a replica's state change (usable, lagging, down), to log it. */
  readonly onChange?: (change: { replica: number; state: ReplicaState; detail?: string }) => void;
}

export type ReplicaState = 'usable' | 'lagging' | 'down';

/** How long a probe's query may take before its replica counts as down. */
const PROBE_TIMEOUT_MS = 1_000;

/** A position in the WAL, e.g. '16/B374D848', as a number of bytes. */
const lsnBytes = (lsn: string): bigint => {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
};

interface Replica {
  readonly index: number;
  readonly db: DB;
  readonly probe: DB;
  /** performance.now() of the newest primary position this replica has replayed; null: none within the window. */
  freshAsOf: number | null;
  state: ReplicaState | null;
}

/** Opens a pool per replica and starts probing; resolves after the first probe (a replica down at start is skipped, not an error). */
export async function openReadReplicas(primary: DB, options: ReadReplicaOptions): Promise<ReadReplicas> {
  const { maxLagMs, fences } = options;
  // A few probes per max lag: a replica that keeps up shows a lag of about one probe interval.
  const probeMs = Math.min(250, Math.max(10, Math.floor(maxLagMs / 4)));
  const replicas: Replica[] = options.urls.map((url, index) => {
    const pool = { max: 10, connectionTimeoutMillis: PROBE_TIMEOUT_MS };
    const probePool = { max: 1, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS };
    return {
      index,
      db: new Kysely<Schema>({ dialect: postgresDialect(url, options.preparedStatements, pool).dialect }),
      probe: new Kysely<Schema>({ dialect: postgresDialect(url, false, probePool).dialect }),
      freshAsOf: null,
      state: null,
    };
  });
  // The primary's WAL positions of the last probes, oldest first: {when asked, position}.
  const samples: { at: number; lsn: bigint }[] = [];
  const counts = { replicaReads: 0, own_write: 0, no_replica: 0, replica_failed: 0 };
  let next = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const setState = (replica: Replica, state: ReplicaState, detail?: string) => {
    if (replica.state !== state) options.onChange?.({ replica: replica.index, state, detail });
    replica.state = state;
  };
  const lagOf = (replica: Replica, now: number) => (replica.freshAsOf === null ? Infinity : now - replica.freshAsOf);
  const usable = (now: number) => replicas.filter((r) => r.state !== 'down' && lagOf(r, now) <= maxLagMs);

  async function probeReplica(replica: Replica): Promise<void> {
    try {
      const { rows } = await sql<{ replayed: string | null }>`select pg_last_wal_replay_lsn()::text as replayed`.execute(replica.probe);
      const replayed = rows[0]?.replayed ?? null;
      if (replayed === null) {
        replica.freshAsOf = null;
        return setState(replica, 'down', 'not a replica (not in recovery)');
      }
      const position = lsnBytes(replayed);
      let sample: { at: number; lsn: bigint } | undefined;
      for (let i = samples.length - 1; i >= 0 && !sample; i--) if (samples[i]!.lsn <= position) sample = samples[i];
      // Never backwards: replay only moves on, and an older probe's answer may arrive after a newer one's.
      if (sample && (replica.freshAsOf === null || sample.at > replica.freshAsOf)) replica.freshAsOf = sample.at;
      if (!sample) replica.freshAsOf = null;
      setState(replica, lagOf(replica, performance.now()) <= maxLagMs ? 'usable' : 'lagging');
    } catch (err) {
      replica.freshAsOf = null;
      setState(replica, 'down', err instanceof Error ? err.message : String(err));
    }
  }

  async function probe(): Promise<void> {
    const at = performance.now();
    try {
      const { rows } = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primary);
      samples.push({ at, lsn: lsnBytes(rows[0]!.lsn) });
    } catch {
      // The primary does not answer: no new position, so the replicas age out and reads go to the primary (which fails as it would).
    }
    // Positions older than the max lag (and a probe's margin) can no longer make a replica usable.
    while (samples.length > 1 && samples[0]!.at < at - maxLagMs - 4 * probeMs) samples.shift();
    await Promise.all(replicas.map(probeReplica));
  }

  const loop = () => {
    if (stopped) return;
    timer = setTimeout(() => void probe().finally(loop), probeMs);
    timer.unref();
  };
  await probe();
  loop();

  return {
    async read<T>(userId: number | null, fn: (db: DB) => Promise<T>): Promise<T> {
      const candidates = usable(performance.now());
      if (candidates.length === 0) {
        counts.no_replica++;
        return fn(primary);
      }
      if (userId !== null && (await fences.active(userId).catch(() => true))) {
        counts.own_write++;
        return fn(primary);
      }
      const replica = candidates[next++ % candidates.length]!;
      try {
        const result = await fn(replica.db);
        counts.replicaReads++;
        return result;
      } catch {
        counts.replica_failed++;
        return fn(primary);
      }
    },
    wrote: (userId) => fences.mark(userId),
    stats: () => ({
      replicaReads: counts.replicaReads,
      primaryReads: { own_write: counts.own_write, no_replica: counts.no_replica, replica_failed: counts.replica_failed },
      usable: usable(performance.now()).length,
    }),
    async close() {
      stopped = true;
      clearTimeout(timer);
      await Promise.allSettled(replicas.flatMap((r) => [r.db.destroy(), r.probe.destroy()]));
    },
  };
}
