// The inbox entries a sync renders (an InboxUpdated as it is now), loaded for all the syncs of a moment together.
// After a node dies thousands of clients sync within seconds, each for a conversation or a few: one entry alone
// takes five queries, so the syncs whose entries are asked in the same turn of the event loop share them (five
// queries for all; store/turn-batches.ts).
import type { DB } from '../store/database.js';
import { lastMessagesAsSeen } from '../store/own-state.js';
import { readerStatesOfEntries } from '../store/participants.js';
import { conversationResource, entryKey, loadSharedConversations, type Entry } from '../store/read-model.js';
import { turnBatched } from '../store/turn-batches.js';
import type { ConversationResource } from '../contract/resources.js';

/** The entries' ConversationResources (InboxUpdated's payload), each as its user sees it; undefined: not in it. */
async function loadEntries(db: DB, entries: readonly Entry[]): Promise<(ConversationResource | undefined)[]> {
  const conversationIds = [...new Set(entries.map(([, conversationId]) => conversationId))];
  const [shared, states] = await Promise.all([loadSharedConversations(db, conversationIds), readerStatesOfEntries(db, entries)]);
  // The last message as the user sees it where they cleared the history or hid it.
  const lastIds = new Map([...shared].flatMap(([id, c]) => (c.last_message ? [[id, c.last_message.id] as const] : [])));
  const own = await lastMessagesAsSeen(db, entries.filter(([u, c]) => states.has(entryKey(u, c))), lastIds);
  return entries.map(([userId, conversationId]) => {
    const key = entryKey(userId, conversationId);
    const conversation = shared.get(conversationId);
    const state = states.get(key);
    if (!conversation || !state) return undefined;
    return conversationResource(own.has(key) ? { ...conversation, last_message: own.get(key)! } : conversation, state);
  });
}

const loaderOf = turnBatched(loadEntries);

/** The user's InboxUpdated payloads of these conversations, as they are now; none for one they are not in. */
export async function inboxEntries(db: DB, userId: number, conversationIds: readonly number[]): Promise<Map<number, ConversationResource>> {
  const entries = new Map<number, ConversationResource>();
  if (conversationIds.length === 0) return entries;
  const loaded = await loaderOf(db).loadMany(conversationIds.map((id) => [userId, id] as const));
  conversationIds.forEach((id, i) => {
    const entry = loaded[i];
    if (entry instanceof Error) throw entry;
    if (entry !== undefined) entries.set(id, entry);
  });
  return entries;
}
