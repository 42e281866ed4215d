// Read tracking: a participant's read position only moves forward; its unread count is recounted from there.
// The recount runs under a shared lock of the conversation, so no send or delete lands between the count and
// its write (those take the conversation's write lock); reads of the same conversation run side by side, but
// each reader's own row is locked, so two read marks of one reader run one after the other and the later never
// moves the position back.
import { event } from '../events/catalog.js';
import { lockConversation, lockParticipant } from '../store/locks.js';
import { countUnread, latestMessageId, messageInConversation } from '../store/messages.js';
import { readPositions, setReadPosition } from '../store/participants.js';
import type { Actor, ChatContext } from './context.js';
import { requireParticipant } from './access.js';
import { invalid, notFound } from '../contract/api-errors.js';
import { unitOfWork } from './unit-of-work.js';
import type { Page } from './conversations.js';
import { iso, isoOrNull } from '../contract/resources.js';

export async function markRead(
  ctx: ChatContext,
  actor: Actor,
  conversationId: number,
  messageId?: number,
): Promise<{ conversation_id: number; user_id: number; read_at: string; last_read_message_id: number }> {
  const readAt = new Date();
  const payload = { conversation_id: conversationId, user_id: actor.userId, read_at: iso(readAt) };
  const position = await unitOfWork(ctx, actor, async ({ trx, emit, inboxChanged }) => {
    await lockConversation(trx, conversationId, 'read');
    const participant = await lockParticipant(trx, conversationId, actor.userId);
    if (!participant) throw notFound('Conversation');
    let target: number;
    if (messageId !== undefined) {
      if (!(await messageInConversation(trx, conversationId, messageId))) throw invalid('message_id', 'The message is not in this conversation.');
      target = messageId;
    } else {
      target = await latestMessageId(trx, conversationId);
    }
    const position = Math.max(target, participant.last_read_message_id);
    // Only the messages after the new position are counted, never the whole history.
    const { unread, mentions } = await countUnread(trx, conversationId, actor.userId, position);
    const reader = await setReadPosition(trx, conversationId, actor.userId, { messageId: position, at: readAt, unreadCount: unread, unreadMentionCount: mentions });
    emit(event('ConversationRead', conversationId, payload));
    inboxChanged(conversationId, [reader]);
    return position;
  });
  return { ...payload, last_read_message_id: position };
}

/** One participant's read position: the last message they read (0: none yet) and when they last marked read. */
export interface ReadPosition {
  readonly user_id: number;
  readonly last_read_message_id: number;
  readonly last_read_at: string | null;
}

/**
 * Every participant's read position (the caller's included), paged by ascending user id: next_cursor is the
 * last user id of the page, passed back as cursor. Lets a client show "Seen by" again after a reload.
 */
export async function listReadPositions(
  ctx: ChatContext,
  actor: Actor,
  conversationId: number,
  options: { cursor?: number; limit: number },
): Promise<Page<ReadPosition>> {
  await requireParticipant(ctx.db, conversationId, actor.userId);
  const rows = await readPositions(ctx.db, conversationId, { afterUserId: options.cursor, limit: options.limit + 1 });
  const page = rows.slice(0, options.limit);
  const data = page.map((r) => ({ user_id: r.user_id, last_read_message_id: r.last_read_message_id, last_read_at: isoOrNull(r.last_read_at) }));
  return { data, next_cursor: rows.length > options.limit ? String(page.at(-1)!.user_id) : null };
}
