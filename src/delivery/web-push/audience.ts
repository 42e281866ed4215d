// Whether any browser is subscribed to Web Push on this server (on any node). Sends write 'push' outbox rows
// only while one is, so a server nobody has subscribed on keeps its one-round-trip send path (docs/notifications.md).
// Read from the database at most every refreshMs, without holding up the caller: a subscription made on
// another node is seen within that time; one made on this node at once.
import { sql } from 'kysely';
import type { DB } from '../../store/database.js';

export interface PushAudience {
  /** True while a subscription may exist (also before the first read). */
  any(): boolean;
  /** A subscription was just saved on this node. */
  subscribed(): void;
}

export function pushAudience(db: DB, refreshMs = 2000, now: () => number = Date.now): PushAudience {
  let known: boolean | null = null;
  let readAt = -Infinity;
  let reading = false;
  function read(): void {
    reading = true;
    readAt = now();
    sql<{ any: boolean }>`select exists (select 1 from push_subscriptions) as any`
      .execute(db)
      .then(({ rows }) => void (known = rows[0]?.any === true))
      // Unknown while the database cannot say: pushes are written (the safe side) and it is read again later.
      .catch(() => void (known = null))
      .finally(() => void (reading = false));
  }
  return {
    any() {
      if (!reading && now() - readAt >= refreshMs) read();
      return known ?? true;
    },
    subscribed() {
      known = true;
      readAt = now();
    },
  };
}
