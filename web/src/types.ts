// The API's resources and the real-time event payloads (docs/api.md, docs/events.md), as the client uses them.
// They come from @parley/client, whose types are generated from the server's own definitions: this file only
// names them for the client and says where the client's view of a message or a conversation is wider than one
// answer (a message kept across events, a conversation from HTTP or InboxUpdated).
import type {
  AttachmentResource,
  ConversationResource,
  ConversationView,
  EventPayloads,
  HistoryItem,
  MessageResource,
  PageMeta,
  ParticipantResource,
  ThreadSummary,
  UserResource,
} from '@parley/client';

export type {
  ClientConfig,
  ForwardedFrom,
  InboxPage,
  ReactionSummary as Reaction,
  ReadPositionResource as ReadPosition,
  ReplyPreview,
  SyncChange,
  SyncPage,
  ThreadItem,
  ThreadSummary,
  PresenceResource as Presence,
} from '@parley/client';

export type User = UserResource;
export type Role = ParticipantResource['role'];
export type Participant = ParticipantResource;
export type Attachment = AttachmentResource;

/**
 * A message as the client keeps it: MessageSent's keys (edited_at absent from it, null until edited), and what
 * history items add (v1.1 reactions and mentions, v1.2 thread and pin), kept from what is known when an event
 * replaces the message.
 */
export type Message = Omit<MessageResource, 'edited_at'> &
  Partial<Pick<MessageResource, 'edited_at'>> &
  Partial<Pick<HistoryItem, 'reactions' | 'mentioned_user_ids' | 'thread_id' | 'thread' | 'pinned_at' | 'pinned_by'>>;

/**
 * A conversation as the client keeps it: InboxUpdated's keys, and what HTTP answers add (v1.1 mentions and mute,
 * v1.2 the caller's own state, a group's slow mode and freeze); undefined: not known yet.
 */
export type Conversation = Omit<ConversationResource, 'last_message'> & { last_message: Message | null } & Partial<Omit<ConversationView, keyof ConversationResource>>;

export interface Paged<T> {
  data: T[];
  meta: PageMeta;
}

// Event payloads, by the name the client gives them.
export type MessageDeletedEvent = EventPayloads['MessageDeleted'];
export type ConversationReadEvent = EventPayloads['ConversationRead'];
export type UserTypingEvent = EventPayloads['UserTyping'];
export type GroupParticipantsChangedEvent = EventPayloads['GroupParticipantsChanged'];
export type UserPresenceChangedEvent = EventPayloads['UserPresenceChanged'];
export type UserBlockChangedEvent = EventPayloads['UserBlockChanged'];
export type GroupMembershipRevokedEvent = EventPayloads['GroupMembershipRevoked'];
export type MessageReactionsUpdatedEvent = EventPayloads['MessageReactionsUpdated'];
export type ThreadReplySentEvent = EventPayloads['ThreadReplySent'];
export type ThreadUpdatedEvent = EventPayloads['ThreadUpdated'];
export type ThreadReadEvent = EventPayloads['ThreadRead'];
export type MessagePinnedEvent = EventPayloads['MessagePinned'];
export type ConversationStateChangedEvent = EventPayloads['ConversationStateChanged'];
export type MessageHiddenEvent = EventPayloads['MessageHidden'];
