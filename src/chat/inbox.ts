// InboxUpdated events: each receiving user gets its own ConversationResource. Built in a constant number of
// queries however many participants there are.
import { event, type DomainEvent } from '../events/catalog.js';
import type { DB } from '../store/database.js';
import { conversationResource, loadReaderStates, loadShared, type KnownConversation, type ReaderState } from './views.js';

/**
 * InboxUpdated to the given readers (default: every participant) of one conversation. A caller that just
 * wrote the conversation passes what it knows (see KnownConversation): one query (the preview) remains.
 */
export async function inboxEvents(db: DB, conversationId: number, readers?: readonly ReaderState[], known?: KnownConversation): Promise<DomainEvent[]> {
  const [shared, states] = await Promise.all([
    loadShared(db, conversationId, known),
    readers ? Promise.resolve(readers) : loadReaderStates(db, conversationId),
  ]);
  return states.map((state) => event('ConversationInboxUpdated', state.user_id, conversationResource(shared, state)));
}

export async function inboxEventsFor(db: DB, conversationId: number, userIds: readonly number[]): Promise<DomainEvent[]> {
  return inboxEvents(db, conversationId, await loadReaderStates(db, conversationId, userIds));
}
