// Pinned messages (v1.2, docs/api.md "Pinned messages"): a group's owner or admins, or either person of a direct
// conversation, pin and unpin its messages, at most MAX_PINS at once; MessagePinned tells the conversation. A
// deleted message is unpinned (store/messages.ts, softDelete).
import { event } from '../events/catalog.js';
import { lockConversationOfMessage } from '../store/locks.js';
import { findVisibleMessage } from '../store/messages.js';
import { MAX_PINS, pinnedCount, pinnedIds, setPinned } from '../store/pins.js';
import { loadHistoryItems } from '../store/read-model.js';
import { requireParticipant } from './access.js';
import { lagTolerant, type Actor, type ChatContext } from './context.js';
import type { Page } from './conversations.js';
import { decodeTimeCursor, encodeTimeCursor } from './cursors.js';
import { ChatError, forbidden, notFound } from '../contract/api-errors.js';
import { iso, isoOrNull, type HistoryItem } from '../contract/resources.js';
import { unitOfWork } from './unit-of-work.js';

export interface PinState {
  readonly message_id: number;
  readonly pinned: boolean;
  readonly pinned_at: string | null;
  readonly pinned_by: number | null;
}

/** PUT (pinned) or DELETE (not) /messages/{id}/pin. Idempotent: a message already so answers its state, and nothing is fired. */
export async function pinMessage(ctx: ChatContext, actor: Actor, messageId: number, pinned: boolean): Promise<PinState> {
  const now = new Date();
  return unitOfWork(ctx, actor, async ({ trx, emit }) => {
    // The write lock: pins of one conversation are counted and written one after the other.
    const conversation = await lockConversationOfMessage(trx, messageId, 'write');
    if (!conversation) throw notFound('Message');
    const message = await findVisibleMessage(trx, messageId);
    if (!message) throw notFound('Message');
    const { participant } = await requireParticipant(trx, conversation.id, actor.userId).catch(() => {
      throw notFound('Message');
    });
    if (conversation.type === 'group' && participant.role === 'member') {
      throw forbidden('forbidden_role', 'Only a group owner or admin may pin or unpin messages.');
    }
    if (pinned && message.pinned_at === null && (await pinnedCount(trx, conversation.id)) >= MAX_PINS) {
      throw new ChatError('too_many_pins', `A conversation may have at most ${MAX_PINS} pinned messages: unpin one first.`);
    }
    const changed = await setPinned(trx, messageId, pinned ? { by: actor.userId, at: now } : null);
    const state: PinState = changed
      ? { message_id: messageId, pinned, pinned_at: pinned ? iso(now) : null, pinned_by: pinned ? actor.userId : null }
      : { message_id: messageId, pinned: message.pinned_at !== null, pinned_at: isoOrNull(message.pinned_at), pinned_by: message.pinned_by };
    if (changed) emit(event('MessagePinned', conversation.id, { conversation_id: conversation.id, ...state }));
    return state;
  });
}

/** GET /conversations/{id}/pins: the pinned messages as history items, most recently pinned first. Cursor "<ms>.<id>". */
export async function listPins(ctx: ChatContext, actor: Actor, conversationId: number, options: { cursor?: string; limit: number }): Promise<Page<HistoryItem>> {
  const { rows, items } = await lagTolerant(ctx, actor.userId, async (db) => {
    await requireParticipant(db, conversationId, actor.userId);
    const after = options.cursor === undefined ? undefined : decodeTimeCursor(options.cursor);
    const rows = await pinnedIds(db, conversationId, { after, limit: options.limit + 1 });
    return { rows, items: await loadHistoryItems(db, rows.slice(0, options.limit).map((r) => r.id)) };
  });
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return {
    data: page.flatMap((r) => items.get(r.id) ?? []),
    next_cursor: rows.length > options.limit && last ? encodeTimeCursor({ at: last.pinned_at, id: last.id }) : null,
  };
}
