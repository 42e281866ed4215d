// The resources of the API (docs/api.md), as TypeBox schemas: one definition gives the TypeScript types, the HTTP
// response serialization, the OpenAPI document and @parley/client's types (scripts/client-types.ts).
import { Type, type Static } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Id = Type.Integer({ minimum: 1 });
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC, e.g. 2026-11-20T09:30:00.000Z' });

export const UserResource = Type.Object(
  { id: Id, name: Type.String(), avatar_url: Nullable(Type.String()) });
export type UserResource = Static<typeof UserResource>;

export const AttachmentResource = Type.Object(
  {
    id: Id, name: Type.String(), mime_type: Type.String(), size: Type.Integer(), url: Type.String(),
    /** Images: pixels as displayed (after the EXIF orientation); null for other files. */
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    /** Images: a WebP of at most 320 px, same access rule as `url`; null without one. */
    thumbnail_url: Nullable(Type.String()),
  });
export type AttachmentResource = Static<typeof AttachmentResource>;

export const ReplyPreview = Type.Object({
  id: Id,
  body: Nullable(Type.String()),
  sender: UserResource,
  deleted: Type.Boolean(),
});
export type ReplyPreview = Static<typeof ReplyPreview>;
export const ForwardedFrom = Type.Object({ message_id: Id, conversation_id: Id, sender: UserResource });
export type ForwardedFrom = Static<typeof ForwardedFrom>;

export const MessageResource = Type.Object(
  {
    id: Id,
    conversation_id: Id,
    body: Nullable(Type.String()),
    attachment: Nullable(AttachmentResource),
    sender: UserResource,
    reply_to: Nullable(ReplyPreview),
    forwarded_from: Nullable(ForwardedFrom),
    created_at: Timestamp,
    edited_at: Nullable(Timestamp),
  });
export type MessageResource = Static<typeof MessageResource>;

/** One emoji's reactions to a message: how many, and the latest users (at most 10). */
export const ReactionSummary = Type.Object({ emoji: Type.String(), count: Type.Integer(), user_ids: Type.Array(Id) });
export type ReactionSummary = Static<typeof ReactionSummary>;

/** A thread under its root (v1.2): participant_ids are the root's sender and the latest 10 repliers, ascending. */
export const ThreadSummary = Type.Object({ reply_count: Type.Integer({ minimum: 0 }), last_reply_at: Nullable(Timestamp), participant_ids: Type.Array(Id) });
export type ThreadSummary = Static<typeof ThreadSummary>;

/** A message as history lists it (v1.1): the MessageResource plus its reactions and the users it mentions. */

export const HistoryItem = Type.Object({
  ...MessageResource.properties,
  reactions: Type.Array(ReactionSummary),
  mentioned_user_ids: Type.Array(Id),
  /** v1.2: the root of the thread this reply is in; null for a message of the conversation. */
  thread_id: Nullable(Id),
  /** v1.2: the thread under this message; null when it has no reply. */
  thread: Nullable(ThreadSummary),
  /** v1.2: when and by whom the message was pinned; null unless pinned. */
  pinned_at: Nullable(Timestamp),
  pinned_by: Nullable(Id),
});
export type HistoryItem = Static<typeof HistoryItem>;

/** A message's reactions as PUT and DELETE /messages/{id}/reactions/{emoji} answer (v1.1). */
export const MessageReactions = Type.Object({ message_id: Id, reactions: Type.Array(ReactionSummary) });
export type MessageReactions = Static<typeof MessageReactions>;

/** A participant's read position (v1.1): the last message read (0: none yet) and when it was marked read. */
export const ReadPositionResource = Type.Object({
  user_id: Id,
  last_read_message_id: Type.Integer({ minimum: 0 }),
  last_read_at: Nullable(Timestamp),
});
export type ReadPositionResource = Static<typeof ReadPositionResource>;

/** Where a search's words are in a message's body: [start, end) in UTF-16 code units (`body.slice(start, end)`). */
export const HighlightRange = Type.Object({ start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) });
/** A message found by GET /search/messages: the history item, plus where its body matches, in order. */
export const SearchHit = Type.Object({ ...HistoryItem.properties, highlight: Type.Array(HighlightRange) });
export type SearchHit = Static<typeof SearchHit>;

export const ParticipantResource = Type.Object(
  {
    id: Id,
    name: Type.String(),
    avatar_url: Nullable(Type.String()),
    role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
  });
export type ParticipantResource = Static<typeof ParticipantResource>;

export const ConversationResource = Type.Object(
  {
    id: Id,
    type: Type.Union([Type.Literal('direct'), Type.Literal('group')]),
    name: Nullable(Type.String()),
    avatar_url: Nullable(Type.String()),
    participant_count: Type.Integer(),
    participants_preview: Type.Array(ParticipantResource),
    last_message: Nullable(MessageResource),
    unread_count: Type.Integer(),
    last_read_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  });
export type ConversationResource = Static<typeof ConversationResource>;

/**
 * The ConversationResource of the HTTP API (v1.1): v1's keys (InboxUpdated carries exactly those), plus the
 * unread messages that mention the caller and the caller's mute (muted_until null with muted true: until unmuted).
 */
export const ConversationView = Type.Object({
  ...ConversationResource.properties,
  unread_mention_count: Type.Integer(),
  muted: Type.Boolean(),
  muted_until: Nullable(Timestamp),
  /** v1.2: the caller's own state of the conversation; each null unless set. */
  archived_at: Nullable(Timestamp),
  pinned_at: Nullable(Timestamp),
  cleared_at: Nullable(Timestamp),
  /** v1.2: a group's slow mode (a member sends once per this many seconds; 0: off) and whether it is frozen. */
  slow_mode_s: Type.Integer({ minimum: 0, maximum: 3600 }),
  frozen: Type.Boolean(),
});
export type ConversationView = Static<typeof ConversationView>;

export const PresenceResource = Type.Object({
  user_id: Id,
  is_online: Type.Boolean(),
  last_seen_at: Nullable(Timestamp),
});
export type PresenceResource = Static<typeof PresenceResource>;

/** A page's position: the cursor of the next page, null on the last one (every paged list's `meta`). */
export const PageMeta = Type.Object({ next_cursor: Nullable(Type.String()) });
export type PageMeta = Static<typeof PageMeta>;

/** GET /conversations: a page of the inbox, with the change feed's position taken in the same snapshot. */
export const InboxPage = Type.Object({
  data: Type.Array(ConversationView),
  meta: Type.Object({
    next_cursor: Nullable(Type.String()),
    sync_cursor: Type.String({ description: 'GET /sync from here: taken in the same snapshot as this page.' }),
  }),
});
export type InboxPage = Static<typeof InboxPage>;

/** One thread of GET /threads: its root, its replies, those the caller has not read, and the latest one's time. */
export const ThreadItem = Type.Object({ root: HistoryItem, reply_count: Type.Integer(), unread_reply_count: Type.Integer(), last_reply_at: Type.String({ format: 'date-time' }) });
export type ThreadItem = Static<typeof ThreadItem>;

/** One change of GET /sync: an event as it would have arrived live. */
export const SyncChange = Type.Object({
  type: Type.String({ description: 'The event name, exactly as broadcast (MessageSent, InboxUpdated, ...).' }),
  conversation_id: Type.Union([Type.Integer(), Type.Null()]),
  data: Type.Unknown({ description: 'The event payload, exactly as the event carries it.' }),
  at: Type.String({ format: 'date-time' }),
});
export type SyncChange = Static<typeof SyncChange>;

/** GET /sync's answer (under `data`): the changes since the cursor, the cursor to sync from next, and whether more wait. */
export const SyncPage = Type.Object({ changes: Type.Array(SyncChange), cursor: Type.String(), has_more: Type.Boolean() });
export type SyncPage = Static<typeof SyncPage>;

/**
 * GET /api/chat/v1/client-config, what a browser needs before it has a token (out of the OpenAPI document: a
 * helper of the web client). ws_host and ws_port null: the page's own host and port; realtime false: no socket
 * server (BROADCAST_DRIVER=log); demo: CHAT_DEMO=1, POST /demo/token signs in by user id and name.
 */
export const ClientConfig = Type.Object({
  app_key: Type.String(),
  ws_host: Nullable(Type.String()),
  ws_port: Nullable(Type.Integer()),
  force_tls: Type.Boolean(),
  realtime: Type.Boolean(),
  demo: Type.Boolean(),
});
export type ClientConfig = Static<typeof ClientConfig>;

/** Timestamps on the wire: ISO 8601 in UTC with milliseconds. */
export const iso = (date: Date): string => date.toISOString();
export const isoOrNull = (date: Date | null): string | null => (date ? date.toISOString() : null);
