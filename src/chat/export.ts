// A user's export (GET /users/{id}/export, server key): one JSON document with everything Parley keeps of the
// user, written as it is read. Every part is read a page at a time (store/export.ts) and each page leaves as
// JSON text before the next is read; the messages, most of it, come as JSON text from the database (on
// PostgreSQL one COPY, passed on as its bytes arrive). The caller pulls (a Readable stream), so a slow client
// slows the reading and memory stays flat whatever the number of messages.
import type { CopyOut } from '../store/copy-out.js';
import type { ReadOn } from '../store/read-replicas.js';
import {
  blocksPage,
  conversationsPage,
  participationsPage,
  pinnedMessagesPage,
  pushSubscriptionsPage,
  reactionsPage,
  sentMessagesCopy,
  sentMessagesPiece,
} from '../store/export.js';
import { mutedAt } from '../store/read-model.js';
import { isoOrNull } from '../contract/resources.js';
import { notFound } from '../contract/api-errors.js';

/** The document's keys, in the order written. */
export const EXPORT_KEYS = ['user', 'conversations', 'messages', 'reactions', 'reads', 'blocks', 'mutes', 'pins', 'push_subscriptions'] as const;

/** Pages of one part: each page's items (JSON-ready, maybe none) and the key to read the next page after; null at the end. */
type Pager<K> = (after: K) => Promise<{ items: unknown[]; last: K } | null>;

/** One part of an array: its pages of items, read one after the other from `first`. */
type Part = () => AsyncGenerator<unknown[]>;
const part = <K>(first: K, next: Pager<K>): Part =>
  async function* pages() {
    for (let after = first, page = await next(after); page !== null; after = page.last, page = await next(after)) yield page.items;
  };

/** A JSON array written page by page, of one part or of several one after the other: "[", the items with commas between them, "]". */
async function* jsonArray(...parts: Part[]): AsyncGenerator<string> {
  yield '[';
  let written = 0;
  for (const pages of parts) {
    for await (const items of pages()) {
      if (items.length > 0) yield (written > 0 ? ',' : '') + items.map((item) => JSON.stringify(item)).join(',');
      written += items.length;
    }
  }
  yield ']';
}

/** Keyed by a number (an id): the page's last row's key; `map` gives a row's item, or null to leave it out. */
const byId = <T>(page: (after: number) => Promise<T[]>, key: (row: T) => number, map: (row: T) => unknown): Pager<number> =>
  async (after) => {
    const rows = await page(after);
    return rows.length === 0 ? null : { items: rows.map(map).filter((item) => item !== null), last: key(rows.at(-1)!) };
  };

/**
 * The user's export as JSON text, in pieces: throws a 404 ChatError before the first piece when Parley has never
 * seen the user (call next() once before sending anything). Each page is read through `read` (on a read replica
 * or the primary: chat/context.ts lagTolerant), so a replica lost midway costs no more than that page's retry.
 */
export async function* exportUser(read: ReadOn, userId: number, copyOut?: CopyOut, now: Date = new Date()): AsyncGenerator<string | Buffer> {
  // Thrown inside the read: a user not yet on a replica is looked for on the primary.
  const user = await read(async (db) => {
    const row = await db.selectFrom('users').select(['id', 'name', 'avatar_url']).where('id', '=', userId).executeTakeFirst();
    if (!row) throw notFound('User');
    return row;
  });
  yield `{"user":${JSON.stringify({ id: user.id, name: user.name, avatar_url: user.avatar_url })}`;

  yield ',"conversations":';
  yield* jsonArray(part(0, byId((after) => read((db) => conversationsPage(db, userId, after)), (c) => c.id, (c) => ({
    id: c.id, type: c.type, name: c.name, role: c.role, joined_at: c.joined_at.toISOString(),
  }))));

  // The messages they sent, as history items (attachment URLs included), oldest first: JSON text written by the
  // database, passed on as it comes (store/export.ts). On PostgreSQL one COPY on the primary (a statement that
  // long on a replica could be cancelled by its replay midway); else a piece at a time through `read`.
  yield ',"messages":[';
  if (copyOut) {
    yield* copyOut(sentMessagesCopy(userId));
  } else {
    for (let after = 0, piece = await read((db) => sentMessagesPiece(db, userId, after)); piece !== null; after = piece.last, piece = await read((db) => sentMessagesPiece(db, userId, after))) {
      yield after === 0 ? piece.text : `,${piece.text}`;
    }
  }
  yield ']';

  yield ',"reactions":';
  yield* jsonArray(part<{ message_id: number; emoji: string } | null>(null, async (after) => {
    const rows = await read((db) => reactionsPage(db, userId, after));
    const last = rows.at(-1);
    if (!last) return null;
    return {
      items: rows.map((r) => ({ message_id: r.message_id, emoji: r.emoji, created_at: r.created_at.toISOString() })),
      last: { message_id: last.message_id, emoji: last.emoji },
    };
  }));

  // Reads, mutes and inbox pins: each a pass over the user's own state in their conversations.
  const participations = (map: (p: Awaited<ReturnType<typeof participationsPage>>[number]) => unknown) =>
    jsonArray(part(0, byId((after) => read((db) => participationsPage(db, userId, after)), (p) => p.conversation_id, map)));
  yield ',"reads":';
  yield* participations((p) => ({ conversation_id: p.conversation_id, last_read_message_id: p.last_read_message_id, last_read_at: isoOrNull(p.last_read_at) }));

  yield ',"blocks":';
  yield* jsonArray(part(0, byId((after) => read((db) => blocksPage(db, userId, after)), (b) => b.user_id, (b) => ({ user_id: b.user_id, created_at: b.created_at.toISOString() }))));

  yield ',"mutes":';
  yield* participations((p) => (mutedAt(p, now) ? { conversation_id: p.conversation_id, until: isoOrNull(p.muted_until) } : null));

  // Pinned conversations (no message_id), then pinned messages.
  yield ',"pins":';
  yield* jsonArray(
    part(0, byId((after) => read((db) => participationsPage(db, userId, after)), (p) => p.conversation_id, (p) =>
      p.pinned_at === null ? null : { conversation_id: p.conversation_id, pinned_at: p.pinned_at.toISOString() })),
    part(0, byId((after) => read((db) => pinnedMessagesPage(db, userId, after)), (m) => m.message_id, (m) =>
      ({ conversation_id: m.conversation_id, message_id: m.message_id, pinned_at: isoOrNull(m.pinned_at) }))),
  );

  yield ',"push_subscriptions":';
  yield* jsonArray(part(0, byId((after) => read((db) => pushSubscriptionsPage(db, userId, after)), (s) => s.id, (s) => ({ endpoint: s.endpoint, created_at: s.created_at.toISOString() }))));
  yield '}';
}
