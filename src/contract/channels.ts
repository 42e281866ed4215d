// The chat's channel names (docs/events.md, "Channels"): one private channel per conversation and one per user.

/** A conversation's channel or a user's own channel. */
export type ChannelKind = 'conversation' | 'user';

/** Every chat channel's name starts with this: Echo's private('chat.…'). */
export const CHAT_CHANNEL_PREFIX = 'private-chat.';
export const CONVERSATION_CHANNEL_PREFIX = `${CHAT_CHANNEL_PREFIX}conversation.`;
export const conversationChannel = (conversationId: number): string => `${CONVERSATION_CHANNEL_PREFIX}${conversationId}`;
export const userChannel = (userId: number): string => `${CHAT_CHANNEL_PREFIX}user.${userId}`;

/** Which channel names the chat authorizes, and for what. */
export function parseChatChannel(name: string): { kind: ChannelKind; id: number } | null {
  const match = /^private-chat\.(conversation|user)\.([1-9]\d{0,15})$/.exec(name);
  return match ? { kind: match[1] as ChannelKind, id: Number(match[2]) } : null;
}
