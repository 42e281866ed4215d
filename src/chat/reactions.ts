// Reactions to messages (API v1.1): one row per (message, user, emoji), at most MAX_REACTION_EMOJI distinct emoji
// per message. Each write is a unit of work: lock the message's conversation (write) → check → write → one
// MessageReactionsUpdated on the conversation channel, carrying the message's whole summary.
import { event } from '../events/catalog.js';
import type { DB } from '../store/database.js';
import { lockConversationOfMessage } from '../store/locks.js';
import { findVisibleMessage } from '../store/messages.js';
import { findMembership } from '../store/participants.js';
import { addReaction, reactionSummaries, removeReaction } from '../store/reactions.js';
import { refuseIfDirectBlocked } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from '../contract/api-errors.js';
import type { ReactionSummary } from '../contract/resources.js';
import { unitOfWork } from './unit-of-work.js';

/** The most distinct emoji one message may carry (reacting with one already there is always fine). */
export const MAX_REACTION_EMOJI = 20;

/** A short name instead of an emoji, e.g. `thumbs_up` or `+1`. */
const SHORT_NAME = /^[a-z0-9_+-]{1,32}$/;

// One emoji as UTS #51 builds them: a pictograph with an optional presentation selector, skin tone and tag
// sequence (subdivision flags), several joined by ZWJ; or a flag (two regional indicators); or a keycap.
const ELEMENT = String.raw`(?:\p{Extended_Pictographic}[\uFE0E\uFE0F]?|\p{Emoji_Modifier})\p{Emoji_Modifier}?(?:[\u{E0020}-\u{E007E}]+\u{E007F})?\uFE0F?`;
const EMOJI_SEQUENCE = new RegExp(String.raw`^(?:[0-9#*]\uFE0F?\u20E3|\p{Regional_Indicator}{2}|${ELEMENT}(?:\u200D${ELEMENT})*)$`, 'u');
// The fully-qualified emoji of the Unicode version Node knows (the `v` flag's property of strings).
const RGI_EMOJI = new RegExp(String.raw`^\p{RGI_Emoji}$`, 'v');
/** Longer than any emoji (the longest RGI sequences have about 30 UTF-16 code units). */
const MAX_EMOJI_LENGTH = 64;

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** True for exactly one emoji: a single extended grapheme cluster that is an emoji (sequences included). */
export function isSingleEmoji(text: string): boolean {
  if (text.length === 0 || text.length > MAX_EMOJI_LENGTH) return false;
  const segments = graphemes.segment(text)[Symbol.iterator]();
  const first = segments.next();
  if (first.done || first.value.segment !== text) return false; // more than one grapheme
  return RGI_EMOJI.test(text) || EMOJI_SEQUENCE.test(text);
}

/** The reaction a path segment names (already percent-decoded): one emoji or a short name, else 422. */
export function parseReactionEmoji(raw: string): string {
  if (SHORT_NAME.test(raw) || isSingleEmoji(raw)) return raw;
  throw invalid('emoji', 'The reaction must be exactly one emoji or a short name of 1 to 32 characters a-z, 0-9, _, + or -.');
}

export interface ReactionsResult {
  readonly message_id: number;
  readonly reactions: ReactionSummary[];
}

/** PUT /messages/{id}/reactions/{emoji}: the caller reacts. Idempotent: reacting again changes and dispatches nothing. */
export function addMessageReaction(ctx: ChatContext, actor: Actor, messageId: number, emoji: string): Promise<ReactionsResult> {
  return changeReaction(ctx, actor, messageId, parseReactionEmoji(emoji), 'add');
}

/** DELETE /messages/{id}/reactions/{emoji}: the caller withdraws a reaction. Idempotent: withdrawing one the caller lacks changes and dispatches nothing. */
export function removeMessageReaction(ctx: ChatContext, actor: Actor, messageId: number, emoji: string): Promise<ReactionsResult> {
  return changeReaction(ctx, actor, messageId, parseReactionEmoji(emoji), 'remove');
}

async function changeReaction(ctx: ChatContext, actor: Actor, messageId: number, emoji: string, change: 'add' | 'remove'): Promise<ReactionsResult> {
  const now = new Date();
  const reactions = await unitOfWork(ctx, actor, async ({ trx, emit }) => {
    // Write lock: reactions to the conversation's messages run one at a time, so the distinct-emoji count
    // checked below is the one the insert commits against (and no delete of the message slips in between), and
    // each event's summary, read here, includes every change committed before it.
    const conversation = await lockConversationOfMessage(trx, messageId, 'write');
    if (!conversation) throw notFound('Message');
    const message = await findVisibleMessage(trx, messageId);
    const membership = message && (await findMembership(trx, message.conversation_id, actor.userId));
    if (!message || !membership) throw notFound('Message');
    await refuseIfDirectBlocked(trx, membership, actor.userId);
    const reaction = { messageId, userId: actor.userId, emoji };
    let changed: boolean;
    if (change === 'remove') changed = await removeReaction(trx, reaction);
    else {
      const outcome = await addReaction(trx, reaction, MAX_REACTION_EMOJI, now);
      if (outcome === 'too_many_emoji') throw invalid('emoji', `A message may carry at most ${MAX_REACTION_EMOJI} different reactions.`);
      changed = outcome === 'added';
    }
    const reactions = await summaryOf(trx, messageId);
    if (changed) emit(event('MessageReactionsUpdated', conversation.id, { conversation_id: conversation.id, message_id: messageId, reactions }));
    return reactions;
  });
  return { message_id: messageId, reactions };
}

async function summaryOf(db: DB, messageId: number): Promise<ReactionSummary[]> {
  return (await reactionSummaries(db, [messageId])).get(messageId) ?? [];
}
