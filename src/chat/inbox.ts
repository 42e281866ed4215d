// InboxUpdated events: each receiving user gets its own ConversationResource. Built in a constant number of
// queries however many participants there are.
import { event, type DomainEvent, type JsonPart } from '../events/catalog.js';
import type { DB } from '../store/database.js';
import { lastMessagesAsSeen } from '../store/own-state.js';
import { readerStates } from '../store/participants.js';
import { conversationResource, entryKey, loadShared, type ReaderState, type SharedConversation } from '../store/read-model.js';

/**
 * InboxUpdated to the given readers (default: every participant) of one conversation, loaded as it is now, each
 * with the last message as they see it (a reader who cleared the history or hid the last message sees another).
 */
export async function inboxEvents(db: DB, conversationId: number, readers?: readonly ReaderState[]): Promise<DomainEvent[]> {
  const [shared, states] = await Promise.all([loadShared(db, conversationId), readers ?? readerStates(db, conversationId)]);
  // Gone (deleted since the write): nobody is left to tell.
  if (!shared) return [];
  const last = shared.last_message;
  const own = last === null ? new Map() : await lastMessagesAsSeen(db, states.map((s) => [s.user_id, conversationId] as const), new Map([[conversationId, last.id]]));
  if (own.size === 0) return inboxUpdates(shared, states);
  const events = inboxUpdates(shared, states.filter((s) => !own.has(entryKey(s.user_id, conversationId))));
  for (const s of states) {
    const seen = own.get(entryKey(s.user_id, conversationId));
    if (seen !== undefined) events.push(event('ConversationInboxUpdated', s.user_id, conversationResource({ ...shared, last_message: seen }, s)));
  }
  return events;
}

/** InboxUpdated to each reader, each with its own ConversationResource: no query. */
export function inboxUpdates(shared: SharedConversation, states: readonly ReaderState[]): DomainEvent[] {
  const encoder = readerEncoder(shared);
  return states.map((state) => event('ConversationInboxUpdated', state.user_id, conversationResource(shared, state), encoder && { shared: encoder.shared, middle: encoder.middle(state) }));
}

/** The reader's own fields of a ConversationResource as JSON.stringify writes them for a reader at zero. */
const READER_FIELDS = '"unread_count":0,"last_read_at":null,';

/**
 * Encodes the ConversationResource of each reader without encoding the shared part (preview, last message)
 * again: the shared JSON is made once, as a head and a tail, and each reader's unread_count and last_read_at are
 * the part between them, so a message to a group of thousands costs one encoding of the shared part, not one per
 * member, and the realtime layer carries the shared part once (Publication 'each'). head + middle(state) + tail is
 * exactly JSON.stringify(conversationResource(shared, state)). Undefined when the layout is not as expected.
 */
export function readerEncoder(shared: SharedConversation): { shared: JsonPart['shared']; middle: (state: ReaderState) => string } | undefined {
  const template = JSON.stringify(conversationResource(shared, { unread_count: 0, last_read_at: null }));
  const at = template.indexOf(READER_FIELDS);
  // Inside a string value every quote is escaped, so the fields can occur once only, at the top level.
  if (at === -1 || template.indexOf(READER_FIELDS, at + 1) !== -1) return undefined;
  const head = `${template.slice(0, at)}"unread_count":`;
  const tail = template.slice(at + READER_FIELDS.length - 1); // from the comma before created_at
  return {
    shared: { head, tail },
    middle: (state) => `${state.unread_count},"last_read_at":${state.last_read_at === null ? 'null' : `"${state.last_read_at.toISOString()}"`}`,
  };
}
