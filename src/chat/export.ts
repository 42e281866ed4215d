// A user's export (GET /users/{id}/export, server key): one JSON document with everything Parley keeps of the
// user, written as it is read. Every part is read a page at a time (store/export.ts) and each page leaves as
// JSON text before the next is read; the caller pulls (a Readable stream), so a slow client slows the reading
// and memory stays flat whatever the number of messages.
import type { DB } from '../store/database.js';
import {
  blocksPage,
  conversationsPage,
  mutesPage,
  pinnedConversationsPage,
  pinnedMessagesPage,
  pushSubscriptionsPage,
  reactionsPage,
  readsPage,
  sentMessageIdsPage,
} from '../store/export.js';
import { loadHistoryItems } from '../store/read-model.js';
import { isoOrNull } from './resources.js';
import { notFound } from './errors.js';

/** The document's keys, in the order written. */
export const EXPORT_KEYS = ['user', 'conversations', 'messages', 'reactions', 'reads', 'blocks', 'mutes', 'pins', 'push_subscriptions'] as const;

/** Pages of one part: each page's items (JSON-ready) and the key to read the next page after; an empty page ends it. */
type Pager<K> = (after: K) => Promise<{ items: unknown[]; last: K }>;

/** A JSON array written page by page: "[", the items with commas between them, "]". */
async function* jsonArray<K>(first: K, next: Pager<K>): AsyncGenerator<string> {
  yield '[';
  let after = first;
  let written = 0;
  for (;;) {
    const { items, last } = await next(after);
    if (items.length === 0) break;
    yield (written > 0 ? ',' : '') + items.map((item) => JSON.stringify(item)).join(',');
    written += items.length;
    after = last;
  }
  yield ']';
}

/** Keyed by a number (an id): the page's last item's key. */
const byId = <T>(page: (after: number) => Promise<T[]>, key: (row: T) => number, map: (row: T) => unknown): Pager<number> =>
  async (after) => {
    const rows = await page(after);
    return { items: rows.map(map), last: rows.length > 0 ? key(rows.at(-1)!) : after };
  };

/**
 * The user's export as JSON text, in pieces: throws a 404 ChatError before the first piece when Parley has never
 * seen the user (call next() once before sending anything).
 */
export async function* exportUser(db: DB, userId: number, now: Date = new Date()): AsyncGenerator<string> {
  const user = await db.selectFrom('users').select(['id', 'name', 'avatar_url']).where('id', '=', userId).executeTakeFirst();
  if (!user) throw notFound('User');
  yield `{"user":${JSON.stringify({ id: user.id, name: user.name, avatar_url: user.avatar_url })}`;

  yield ',"conversations":';
  yield* jsonArray(0, byId((after) => conversationsPage(db, userId, after), (c) => c.id, (c) => ({
    id: c.id, type: c.type, name: c.name, role: c.role, joined_at: c.joined_at.toISOString(),
  })));

  // The messages they sent, as history items (attachment URLs included), oldest first.
  yield ',"messages":';
  yield* jsonArray(0, async (after) => {
    const ids = await sentMessageIdsPage(db, userId, after);
    const items = await loadHistoryItems(db, ids);
    return { items: ids.flatMap((id) => items.get(id) ?? []), last: ids.at(-1) ?? after };
  });

  yield ',"reactions":';
  yield* jsonArray<{ message_id: number; emoji: string } | null>(null, async (after) => {
    const rows = await reactionsPage(db, userId, after);
    const last = rows.at(-1);
    return {
      items: rows.map((r) => ({ message_id: r.message_id, emoji: r.emoji, created_at: r.created_at.toISOString() })),
      last: last ? { message_id: last.message_id, emoji: last.emoji } : after,
    };
  });

  yield ',"reads":';
  yield* jsonArray(0, byId((after) => readsPage(db, userId, after), (r) => r.conversation_id, (r) => ({
    conversation_id: r.conversation_id, last_read_message_id: r.last_read_message_id, last_read_at: isoOrNull(r.last_read_at),
  })));

  yield ',"blocks":';
  yield* jsonArray(0, byId((after) => blocksPage(db, userId, after), (b) => b.user_id, (b) => ({ user_id: b.user_id, created_at: b.created_at.toISOString() })));

  yield ',"mutes":';
  yield* jsonArray(0, byId((after) => mutesPage(db, userId, after, now), (m) => m.conversation_id, (m) => ({ conversation_id: m.conversation_id, until: isoOrNull(m.until) })));

  // Pinned conversations (no message_id), then pinned messages.
  yield ',"pins":';
  yield* jsonArray<{ part: 'conversations' | 'messages'; after: number }>({ part: 'conversations', after: 0 }, async ({ part, after }) => {
    if (part === 'conversations') {
      const rows = await pinnedConversationsPage(db, userId, after);
      if (rows.length > 0) {
        return { items: rows.map((r) => ({ conversation_id: r.conversation_id, pinned_at: isoOrNull(r.pinned_at) })), last: { part, after: rows.at(-1)!.conversation_id } };
      }
    }
    const rows = await pinnedMessagesPage(db, userId, part === 'messages' ? after : 0);
    return {
      items: rows.map((r) => ({ conversation_id: r.conversation_id, message_id: r.message_id, pinned_at: isoOrNull(r.pinned_at) })),
      last: { part: 'messages', after: rows.at(-1)?.message_id ?? after },
    };
  });

  yield ',"push_subscriptions":';
  yield* jsonArray(0, byId((after) => pushSubscriptionsPage(db, userId, after), (s) => s.id, (s) => ({ endpoint: s.endpoint, created_at: s.created_at.toISOString() })));
  yield '}';
}
