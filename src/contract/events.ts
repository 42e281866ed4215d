// The event table of docs/events.md: each event's class name, broadcast name, channel kind and payload, the payloads
// as TypeBox schemas (their types here, @parley/client's by scripts/client-types.ts). v1's ten events keep exactly
// their payload keys; v1.1 adds MessageReactionsUpdated as an eleventh; v1.2 the thread, pin and own-state events.
import { Type, type Static } from 'typebox';
import type { ChannelKind } from './channels.js';
import { ConversationResource, MessageResource, ParticipantResource, ReactionSummary, ThreadSummary } from './resources.js';

const Id = Type.Integer({ minimum: 1 });
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const OneOf = <const T extends readonly string[]>(values: T) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });

export const CHANGE_TYPES = ['added', 'removed', 'role_changed'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** v1.2 adds `banned`: removed by a group ban (chat/group-bans.ts). */
export const REVOKE_REASONS = ['removed', 'left', 'group_deleted', 'banned'] as const;
export type RevokeReason = (typeof REVOKE_REASONS)[number];

/** MessageSent carries exactly these keys; MessageUpdated adds edited_at. */
export const MessageSentPayload = Type.Omit(MessageResource, ['edited_at']);
export type MessageSentPayload = Static<typeof MessageSentPayload>;

/** Each event's payload (docs/events.md). */
export const EVENT_PAYLOADS = {
  MessageSent: MessageSentPayload,
  MessageUpdated: MessageResource,
  MessageDeleted: Type.Object({ id: Id, conversation_id: Id }),
  ConversationRead: Type.Object({ conversation_id: Id, user_id: Id, read_at: Timestamp }),
  UserTyping: Type.Object({ conversation_id: Id, user_id: Id, is_typing: Type.Boolean() }),
  GroupParticipantsChanged: Type.Object({
    conversation_id: Id,
    change_type: OneOf(CHANGE_TYPES),
    actor_user_id: Id,
    target_user_ids: Type.Array(Id),
    participant_count: Type.Integer(),
    participants_preview: Type.Array(ParticipantResource),
  }),
  ConversationInboxUpdated: ConversationResource,
  UserPresenceChanged: Type.Object({ user_id: Id, is_online: Type.Boolean() }),
  UserBlockChanged: Type.Object({
    blocker_id: Id,
    blocked_user_id: Id,
    blocked: Type.Boolean(),
    messaging_blocked_user_ids: Type.Array(Id),
  }),
  GroupMembershipRevoked: Type.Object({ conversation_id: Id, user_id: Id, reason: OneOf(REVOKE_REASONS) }),
  /** v1.1: the message's whole reaction summary after a change, one broadcast on the conversation channel. */
  MessageReactionsUpdated: Type.Object({ conversation_id: Id, message_id: Id, reactions: Type.Array(ReactionSummary) }),
  /** v1.2: a reply in a thread (never MessageSent): the MessageResource plus thread_id. */
  ThreadReplySent: Type.Object({ conversation_id: Id, thread_id: Id, message: Type.Object({ ...MessageResource.properties, thread_id: Id }) }),
  /** v1.2: a thread's counts after a reply (or a reply's deletion). */
  ThreadUpdated: Type.Object({ ...ThreadSummary.properties, conversation_id: Id, thread_id: Id }),
  /** v1.2: a message pinned or unpinned (pinned_at and pinned_by null once unpinned). */
  MessagePinned: Type.Object({ conversation_id: Id, message_id: Id, pinned: Type.Boolean(), pinned_by: Nullable(Id), pinned_at: Nullable(Timestamp) }),
  /** v1.2: the user's own state of a conversation changed (mute, archive, pin, clear), on their own channel only. */
  ConversationStateChanged: Type.Object({
    conversation_id: Id,
    muted: Type.Boolean(),
    muted_until: Nullable(Timestamp),
    archived_at: Nullable(Timestamp),
    pinned_at: Nullable(Timestamp),
    cleared_at: Nullable(Timestamp),
  }),
  /** v1.2: a message hidden for the user alone (DELETE /messages/{id}?for=me), on their own channel only. */
  MessageHidden: Type.Object({ conversation_id: Id, message_id: Id }),
  /** v1.2: a user read a thread up to now. */
  ThreadRead: Type.Object({ conversation_id: Id, thread_id: Id, user_id: Id, read_at: Timestamp }),
};

export type EventName = keyof typeof EVENT_PAYLOADS;
export type EventPayloads = { [N in EventName]: Static<(typeof EVENT_PAYLOADS)[N]> };

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
