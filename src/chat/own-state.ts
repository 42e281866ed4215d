// Each user's own state of a conversation (v1.2, docs/api.md "A user's own conversation state"): mute (v1.1),
// archive, pin and clear, each answered with the ConversationResource and told to the user's other tabs with
// ConversationStateChanged on their own channel; a message hidden for them alone (MessageHidden there).
import { event } from '../events/catalog.js';
import { lockConversation, lockConversationOfMessage, lockParticipant, lockUsers } from '../store/locks.js';
import { findVisibleMessage } from '../store/messages.js';
import { clearHistory, hideMessage, MAX_PINNED_CONVERSATIONS, pinnedConversationCount, setOwnState } from '../store/own-state.js';
import { readerStates, setMute } from '../store/participants.js';
import type { Tx } from '../store/transaction.js';
import { mutedAt } from '../store/read-model.js';
import type { Actor, ChatContext } from './context.js';
import { getConversation } from './conversations.js';
import { ChatError, invalid, notFound } from '../contract/api-errors.js';
import { isoOrNull, type ConversationView } from '../contract/resources.js';
import { unitOfWork, type Work } from './unit-of-work.js';

type Change =
  | { kind: 'mute'; until: Date | null }
  | { kind: 'unmute' }
  | { kind: 'archive'; on: boolean }
  | { kind: 'pin'; on: boolean }
  | { kind: 'clear' };

/** Applies one change of the actor's own state, then answers the conversation as they see it now. */
export async function changeOwnState(ctx: ChatContext, actor: Actor, conversationId: number, change: Change): Promise<ConversationView> {
  if (change.kind === 'mute' && change.until !== null) {
    // A date-time JavaScript cannot hold (a leap second, 23:59:60, passes the format check) is refused like any other bad time.
    if (Number.isNaN(change.until.getTime())) throw invalid('until', 'until is not a time this server can use (no leap seconds).');
    if (change.until.getTime() <= Date.now()) throw invalid('until', 'A mute ends in the future; give null to mute until unmuted.');
  }
  const now = new Date();
  await unitOfWork(ctx, actor, async (work) => {
    const { trx } = work;
    // Pins are counted per user: their row is locked first (users before conversations, store/locks.ts).
    if (change.kind === 'pin' && change.on) await lockUsers(trx, [actor.userId]);
    // A shared lock: clearing reads the newest message while no send lands.
    await lockConversation(trx, conversationId, 'read');
    const participant = await lockParticipant(trx, conversationId, actor.userId);
    if (!participant) throw notFound('Conversation');
    switch (change.kind) {
      case 'mute':
        await setMute(trx, conversationId, actor.userId, { muted: true, until: change.until });
        break;
      case 'unmute':
        await setMute(trx, conversationId, actor.userId, { muted: false, until: null });
        break;
      case 'archive':
        if ((participant.archived_at !== null) === change.on) return;
        await setOwnState(trx, conversationId, actor.userId, { archived_at: change.on ? now : null });
        break;
      case 'pin':
        if ((participant.pinned_at !== null) === change.on) return;
        if (change.on && (await pinnedConversationCount(trx, actor.userId)) >= MAX_PINNED_CONVERSATIONS) {
          throw new ChatError('too_many_pins', `At most ${MAX_PINNED_CONVERSATIONS} conversations may be pinned: unpin one first.`);
        }
        await setOwnState(trx, conversationId, actor.userId, { pinned_at: change.on ? now : null });
        break;
      case 'clear':
        await clearHistory(trx, conversationId, actor.userId, now);
        break;
    }
    await tellOwnState(work, conversationId, actor.userId);
    // Clearing reads everything: the user's inbox entry follows.
    if (change.kind === 'clear') work.inboxChanged(conversationId, await readerStates(trx, conversationId, [actor.userId]));
  });
  return getConversation(ctx, actor, conversationId);
}

/** ConversationStateChanged to the user's own channel: their state of the conversation as this transaction left it. */
async function tellOwnState(work: Work, conversationId: number, userId: number): Promise<void> {
  const state = (await lockParticipant(work.trx as Tx, conversationId, userId))!;
  const muted = mutedAt(state);
  work.emit(
    event('ConversationStateChanged', userId, {
      conversation_id: conversationId,
      muted,
      muted_until: muted ? isoOrNull(state.muted_until) : null,
      archived_at: isoOrNull(state.archived_at),
      pinned_at: isoOrNull(state.pinned_at),
      cleared_at: isoOrNull(state.cleared_at),
    }),
  );
}

/** DELETE /messages/{id}?for=me: any participant hides a message for themselves only; MessageHidden to their channel. */
export async function hideMessageForMe(ctx: ChatContext, actor: Actor, messageId: number): Promise<void> {
  await unitOfWork(ctx, actor, async ({ trx, emit, inboxChanged }) => {
    const conversation = await lockConversationOfMessage(trx, messageId, 'read');
    if (!conversation) throw notFound('Message');
    const participant = await lockParticipant(trx, conversation.id, actor.userId);
    const message = await findVisibleMessage(trx, messageId);
    if (!participant || !message) throw notFound('Message');
    if (!(await hideMessage(trx, message, actor.userId))) return;
    emit(event('MessageHidden', actor.userId, { conversation_id: conversation.id, message_id: messageId }));
    if (message.thread_id === null) inboxChanged(conversation.id, await readerStates(trx, conversation.id, [actor.userId]));
  });
}
