// The event table of docs/events.md as code: each event's class name, broadcast name, channel and payload type. v1's
// ten events keep exactly their payload keys; v1.1 adds MessageReactionsUpdated as an eleventh; v1.2 the thread events.
import type { ConversationResource, MessageResource, ParticipantResource, ReactionSummary } from '../chat/resources.js';

export const CHANGE_TYPES = ['added', 'removed', 'role_changed'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** v1.2 adds `banned`: removed by a group ban (chat/group-bans.ts). */
export const REVOKE_REASONS = ['removed', 'left', 'group_deleted', 'banned'] as const;
export type RevokeReason = (typeof REVOKE_REASONS)[number];

/** MessageSent carries exactly these keys; MessageUpdated adds edited_at. */
export type MessageSentPayload = Omit<MessageResource, 'edited_at'>;

export function messageSentPayload(message: MessageResource): MessageSentPayload {
  const { edited_at: _editedAt, ...payload } = message;
  return payload;
}

export interface EventPayloads {
  MessageSent: MessageSentPayload;
  MessageUpdated: MessageResource;
  MessageDeleted: { id: number; conversation_id: number };
  ConversationRead: { conversation_id: number; user_id: number; read_at: string };
  UserTyping: { conversation_id: number; user_id: number; is_typing: boolean };
  GroupParticipantsChanged: {
    conversation_id: number;
    change_type: ChangeType;
    actor_user_id: number;
    target_user_ids: number[];
    participant_count: number;
    participants_preview: ParticipantResource[];
  };
  ConversationInboxUpdated: ConversationResource;
  UserPresenceChanged: { user_id: number; is_online: boolean };
  UserBlockChanged: {
    blocker_id: number;
    blocked_user_id: number;
    blocked: boolean;
    messaging_blocked_user_ids: number[];
  };
  GroupMembershipRevoked: { conversation_id: number; user_id: number; reason: RevokeReason };
  /** v1.1: the message's whole reaction summary after a change, one broadcast on the conversation channel. */
  MessageReactionsUpdated: { conversation_id: number; message_id: number; reactions: ReactionSummary[] };
  /** v1.2: a reply in a thread (never MessageSent): the MessageResource plus thread_id. */
  ThreadReplySent: { conversation_id: number; thread_id: number; message: MessageResource & { thread_id: number } };
  /** v1.2: a thread's counts after a reply (or a reply's deletion). */
  ThreadUpdated: ThreadSummary & { conversation_id: number; thread_id: number };
  /** v1.2: a message pinned or unpinned (pinned_at and pinned_by null once unpinned). */
  MessagePinned: { conversation_id: number; message_id: number; pinned: boolean; pinned_by: number | null; pinned_at: string | null };
  /** v1.2: the user's own state of a conversation changed (mute, archive, pin, clear), on their own channel only. */
  ConversationStateChanged: {
    conversation_id: number;
    muted: boolean;
    muted_until: string | null;
    archived_at: string | null;
    pinned_at: string | null;
    cleared_at: string | null;
  };
  /** v1.2: a message hidden for the user alone (DELETE /messages/{id}?for=me), on their own channel only. */
  MessageHidden: { conversation_id: number; message_id: number };
  /** v1.2: a user read a thread up to now. */
  ThreadRead: { conversation_id: number; thread_id: number; user_id: number; read_at: string };
}

/** A thread as history items show it under its root (v1.2). */
export interface ThreadSummary {
  reply_count: number;
  last_reply_at: string | null;
  /** The root's sender and the latest 10 repliers, ascending. */
  participant_ids: number[];
}

export type EventName = keyof EventPayloads;
type ChannelKind = 'conversation' | 'user';

export const EVENTS: { readonly [N in EventName]: { readonly broadcastAs: string; readonly channel: ChannelKind } } = {
  MessageSent: { broadcastAs: 'MessageSent', channel: 'conversation' },
  MessageUpdated: { broadcastAs: 'MessageUpdated', channel: 'conversation' },
  MessageDeleted: { broadcastAs: 'MessageDeleted', channel: 'conversation' },
  ConversationRead: { broadcastAs: 'ConversationRead', channel: 'conversation' },
  UserTyping: { broadcastAs: 'UserTyping', channel: 'conversation' },
  GroupParticipantsChanged: { broadcastAs: 'GroupParticipantsChanged', channel: 'conversation' },
  ConversationInboxUpdated: { broadcastAs: 'InboxUpdated', channel: 'user' },
  UserPresenceChanged: { broadcastAs: 'UserPresenceChanged', channel: 'user' },
  UserBlockChanged: { broadcastAs: 'UserBlockChanged', channel: 'user' },
  GroupMembershipRevoked: { broadcastAs: 'GroupMembershipRevoked', channel: 'user' },
  MessageReactionsUpdated: { broadcastAs: 'MessageReactionsUpdated', channel: 'conversation' },
  ThreadReplySent: { broadcastAs: 'ThreadReplySent', channel: 'conversation' },
  ThreadUpdated: { broadcastAs: 'ThreadUpdated', channel: 'conversation' },
  ThreadRead: { broadcastAs: 'ThreadRead', channel: 'conversation' },
  MessagePinned: { broadcastAs: 'MessagePinned', channel: 'conversation' },
  ConversationStateChanged: { broadcastAs: 'ConversationStateChanged', channel: 'user' },
  MessageHidden: { broadcastAs: 'MessageHidden', channel: 'user' },
};

/** Every chat channel's name starts with this: Echo's private('chat.…'). */
export const CHAT_CHANNEL_PREFIX = 'private-chat.';
export const CONVERSATION_CHANNEL_PREFIX = `${CHAT_CHANNEL_PREFIX}conversation.`;
export const conversationChannel = (conversationId: number): string => `${CONVERSATION_CHANNEL_PREFIX}${conversationId}`;
export const userChannel = (userId: number): string => `${CHAT_CHANNEL_PREFIX}user.${userId}`;

/** One event to deliver: a name from the table, the ids whose channels receive it, and its payload. */
export interface DomainEvent<N extends EventName = EventName> {
  readonly name: N;
  /** Conversation ids or user ids, by the event's channel kind. */
  readonly to: readonly number[];
  readonly payload: EventPayloads[N];
  /** The payload as JSON text, when its producer encoded it already (exactly JSON.stringify(payload)). */
  readonly json?: string;
}

export function event<N extends EventName>(name: N, to: number | readonly number[], payload: EventPayloads[N], json?: string): DomainEvent<N> {
  const e = { name, to: typeof to === 'number' ? [to] : to, payload };
  return json === undefined ? e : { ...e, json };
}

export function channelsOf(e: DomainEvent): string[] {
  const toChannel = EVENTS[e.name].channel === 'conversation' ? conversationChannel : userChannel;
  return e.to.map(toChannel);
}

/** Which channel names the chat authorizes, and for what. */
export function parseChatChannel(name: string): { kind: ChannelKind; id: number } | null {
  const match = /^private-chat\.(conversation|user)\.([1-9]\d{0,15})$/.exec(name);
  return match ? { kind: match[1] as ChannelKind, id: Number(match[2]) } : null;
}
