// After messages were taken out in bulk (an erasure's batch, a retention sweep's): InboxUpdated to every participant
// of a conversation whose last message went, and to each other reader whose unread counts fell; nobody else's
// inbox entry changed.
import type { InboxesChanged } from '../store/removal.js';
import type { Work } from './unit-of-work.js';

export function announceInboxes(work: Pick<Work, 'inboxChanged'>, changed: InboxesChanged): void {
  const whole = new Set(changed.lastMessages);
  for (const conversationId of whole) work.inboxChanged(conversationId);
  for (const [conversationId, readers] of changed.readers) if (!whole.has(conversationId)) work.inboxChanged(conversationId, readers);
}
