// COPY ... TO STDOUT from PostgreSQL as a stream of the bytes the server sends (pg-copy-streams): for a reader
// that passes rows on without looking at them (a user's export). Nothing is parsed into rows or objects, so the
// process's heap barely moves whatever the size (bench/ANALYSIS.md, "compliance").
import type { RawBuilder } from 'kysely';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { DB } from './database.js';

/** Streams the output of a COPY (...) TO STDOUT statement (without parameters: COPY takes none), chunk by chunk as it arrives. */
export type CopyOut = (statement: RawBuilder<unknown>) => AsyncIterable<Buffer>;

/** Bytes of chunks between two young-generation collections (see youngCollection). */
const COLLECT_EVERY = 2 * 1024 * 1024;

/** A CopyOut on a connection of pool's (statements compiled by db), given back when the COPY has ended. */
export function copyOutFrom(pool: pg.Pool, db: DB): CopyOut {
  return async function* copyOut(statement) {
    const { sql: text, parameters } = statement.compile(db);
    if (parameters.length > 0) throw new Error('COPY takes no parameters: every value must be a literal');
    const collect = youngCollection();
    const client = await pool.connect();
    let ended = false;
    let uncollected = 0;
    try {
      for await (const chunk of client.query(copyTo(text))) {
        yield chunk as Buffer;
        uncollected += (chunk as Buffer).length;
        if (uncollected >= COLLECT_EVERY) {
          collect?.();
          uncollected = 0;
        }
      }
      ended = true;
    } finally {
      // Failed, or left before the end (the HTTP client went away): the connection may be mid-COPY, so it is
      // closed rather than given back.
      client.release(!ended);
    }
  };
}

let collector: (() => void) | null | undefined;

/**
 * A young-generation collection on demand, or null where V8 offers none. Node frees a chunk's memory only when V8
 * collects the chunk's small Buffer object, and a COPY moves megabytes while allocating almost nothing on the
 * heap, so nothing else starts a collection: V8 lets such memory reach tens of MiB before it collects for it
 * (34-41 MiB for an export of 100,000 messages). Collecting the young generation every COLLECT_EVERY bytes keeps
 * it to that, at about a millisecond each (what is young is little). The `gc` function is V8's own, taken from a
 * fresh context with --expose-gc set for that moment only (as Jest's leak detector does).
 */
function youngCollection(): (() => void) | null {
  if (collector !== undefined) return collector;
  type Gc = (options: { type: 'minor' }) => void;
  let gc = (globalThis as { gc?: Gc }).gc ?? null;
  if (!gc) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as Gc;
    } catch {
      gc = null;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  collector = gc === null ? null : () => gc({ type: 'minor' });
  return collector;
}
