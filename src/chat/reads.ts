// Read tracking: a participant's read position only moves forward; its unread count is recounted from there.
import { event } from '../events/catalog.js';
import { requireParticipant } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { invalid } from './errors.js';
import { inboxEvents } from './inbox.js';
import { iso } from './resources.js';

export async function markRead(
  ctx: ChatContext,
  actor: Actor,
  conversationId: number,
  messageId?: number,
): Promise<{ conversation_id: number; user_id: number; read_at: string; last_read_message_id: number }> {
  const { participant } = await requireParticipant(ctx.db, conversationId, actor.userId);
  let target: number;
  if (messageId !== undefined) {
    const message = await ctx.db
      .selectFrom('messages')
      .select('id')
      .where('id', '=', messageId)
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst();
    if (!message) throw invalid('message_id', 'The message is not in this conversation.');
    target = message.id;
  } else {
    const latest = await ctx.db
      .selectFrom('messages')
      .select((eb) => eb.fn.max('id').as('id'))
      .where('conversation_id', '=', conversationId)
      .executeTakeFirst();
    target = latest?.id ?? 0;
  }
  const position = Math.max(target, participant.last_read_message_id);
  const readAt = new Date();
  // Only the messages after the new position are counted, never the whole history.
  const unread = await ctx.db
    .selectFrom('messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('conversation_id', '=', conversationId)
    .where('id', '>', position)
    .where('sender_id', '<>', actor.userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  const reader = await ctx.db
    .updateTable('participants')
    .set({ last_read_message_id: position, last_read_at: readAt, unread_count: Number(unread.n) })
    .where('conversation_id', '=', conversationId)
    .where('user_id', '=', actor.userId)
    .returning(['user_id', 'unread_count', 'last_read_at'])
    .executeTakeFirstOrThrow();

  const payload = { conversation_id: conversationId, user_id: actor.userId, read_at: iso(readAt) };
  await ctx.broadcaster.dispatch(
    [event('ConversationRead', conversationId, payload), ...(await inboxEvents(ctx.db, conversationId, [reader]))],
    actor.socketId,
  );
  return { ...payload, last_read_message_id: position };
}
