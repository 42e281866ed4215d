// Reads asked in the same turn of the event loop, made together: a reconnect storm's thousands of clients each
// authorize a channel and sync within seconds, and one query for the requests of a turn costs a little more than
// one for a single request. While the loader has a read running, the turn's I/O callbacks (requests parsed, query
// results) all ask before the next batch runs (setImmediate); while it has none, a load is read at once. Either
// way a batch starts after every load in it was asked: none sees less than a read of its own. No cache: a load
// always reads again.
import DataLoader from 'dataloader';
import type { DB } from './database.js';

/** At most this many keys in one batch: the lists travel as array parameters. */
export const TURN_BATCH_MAX = 500;

/**
 * A loader per database (made on first use) for `read`, which answers its keys in their order. A batch that fails
 * fails each of its loads with the same error.
 */
export function turnBatched<K, V>(read: (db: DB, keys: readonly K[]) => Promise<V[]>): (db: DB) => DataLoader<K, V> {
  const loaders = new WeakMap<DB, DataLoader<K, V>>();
  return (db) => {
    let loader = loaders.get(db);
    if (!loader) {
      // While none of this loader's reads runs, a load is read as soon as its caller's code has asked (the keys it
      // asks together in one read): a lone request does not wait for the rest of the turn, another request's answer
      // being written, say. While reads run, the loads of a turn wait for its end and are read together.
      let running = 0;
      const batch = async (keys: readonly K[]): Promise<V[]> => {
        running++;
        try {
          return await read(db, keys);
        } finally {
          running--;
        }
      };
      loader = new DataLoader(batch, { cache: false, maxBatchSize: TURN_BATCH_MAX, batchScheduleFn: (run) => (running === 0 ? process.nextTick(run) : setImmediate(run)) });
      loaders.set(db, loader);
    }
    return loader;
  };
}
