// The API's resources and the real-time event payloads (docs/api.md, docs/events.md), as the client uses them.

export interface User {
  id: number;
  name: string;
  avatar_url: string | null;
}

export type Role = 'owner' | 'admin' | 'member';

export interface Participant extends User {
  role: Role;
}

export interface Attachment {
  id: number;
  name: string;
  mime_type: string;
  size: number;
  /** Relative to the server; needs the bearer token. */
  url: string;
  /** An image's size in pixels as displayed; null for other files and unreadable images. */
  width: number | null;
  height: number | null;
  /** A WebP of at most 320 px (same access rule as url); null when there is none. */
  thumbnail_url: string | null;
}

export interface ReplyPreview {
  id: number;
  body: string | null;
  sender: User;
  deleted: boolean;
}

export interface ForwardedFrom {
  message_id: number;
  conversation_id: number;
  sender: User;
}

export interface Message {
  id: number;
  conversation_id: number;
  body: string | null;
  attachment: Attachment | null;
  sender: User;
  reply_to: ReplyPreview | null;
  forwarded_from: ForwardedFrom | null;
  created_at: string;
  /** Absent from MessageSent, null until edited. */
  edited_at?: string | null;
  /** History items only (v1.1); kept from what is known when an event replaces the message. */
  reactions?: Reaction[];
  mentioned_user_ids?: number[];
  /** v1.2: the root's id for a reply in a thread; the thread under a root with replies; the pin. */
  thread_id?: number | null;
  thread?: ThreadSummary | null;
  pinned_at?: string | null;
  pinned_by?: number | null;
}

export interface ThreadSummary {
  reply_count: number;
  last_reply_at: string;
  participant_ids: number[];
}

/** GET /threads */
export interface ThreadItem {
  root: Message;
  reply_count: number;
  unread_reply_count: number;
  last_reply_at: string;
}

export interface Reaction {
  emoji: string;
  count: number;
  /** The 10 latest, newest first. */
  user_ids: number[];
}

export interface MessageReactionsUpdatedEvent {
  conversation_id: number;
  message_id: number;
  reactions: Reaction[];
}

export interface ReadPosition {
  user_id: number;
  last_read_message_id: number;
  last_read_at: string | null;
}

export interface Conversation {
  id: number;
  type: 'direct' | 'group';
  name: string | null;
  avatar_url: string | null;
  participant_count: number;
  participants_preview: Participant[];
  last_message: Message | null;
  unread_count: number;
  last_read_at: string | null;
  /** HTTP answers only (v1.1), not InboxUpdated. */
  unread_mention_count?: number;
  muted?: boolean;
  muted_until?: string | null;
  /** v1.2, HTTP answers and ConversationStateChanged only: my own state. undefined: not known yet. */
  archived_at?: string | null;
  pinned_at?: string | null;
  cleared_at?: string | null;
  /** v1.2, groups: a member sends once per this many seconds (0: off); frozen: only owner and admins send. */
  slow_mode_s?: number;
  frozen?: boolean;
  created_at: string;
  updated_at: string;
}

export interface Presence {
  user_id: number;
  is_online: boolean;
  last_seen_at: string | null;
}

export interface Paged<T> {
  data: T[];
  meta: { next_cursor: string | null };
}

/** GET /conversations: a page of the inbox, with the change feed's position taken with it. */
export interface InboxPage extends Paged<Conversation> {
  meta: { next_cursor: string | null; sync_cursor: string };
}

/** One change of GET /sync: an event as it would have arrived live. */
export interface SyncChange {
  type: string;
  conversation_id: number | null;
  data: unknown;
  at: string;
}

/** GET /sync */
export interface SyncPage {
  changes: SyncChange[];
  cursor: string;
  has_more: boolean;
}

/** GET /api/chat/v1/client-config */
export interface ClientConfig {
  app_key: string;
  /** null: the page's own host and port. */
  ws_host: string | null;
  ws_port: number | null;
  force_tls: boolean;
  /** false when the server runs without its socket server (BROADCAST_DRIVER=log). */
  realtime: boolean;
  /** CHAT_DEMO=1: POST /demo/token signs in by user id and name. */
  demo: boolean;
}

// Event payloads.
export interface MessageDeletedEvent {
  id: number;
  conversation_id: number;
}
export interface ConversationReadEvent {
  conversation_id: number;
  user_id: number;
  read_at: string;
}
export interface UserTypingEvent {
  conversation_id: number;
  user_id: number;
  is_typing: boolean;
}
export interface GroupParticipantsChangedEvent {
  conversation_id: number;
  change_type: 'added' | 'removed' | 'role_changed';
  actor_user_id: number;
  target_user_ids: number[];
  participant_count: number;
  participants_preview: Participant[];
}
export interface UserPresenceChangedEvent {
  user_id: number;
  is_online: boolean;
}
export interface UserBlockChangedEvent {
  blocker_id: number;
  blocked_user_id: number;
  blocked: boolean;
  messaging_blocked_user_ids: number[];
}
export interface GroupMembershipRevokedEvent {
  conversation_id: number;
  user_id: number;
  reason: 'removed' | 'left' | 'group_deleted';
}
export interface ThreadReplySentEvent {
  conversation_id: number;
  thread_id: number;
  message: Message;
}
export interface ThreadUpdatedEvent extends ThreadSummary {
  conversation_id: number;
  thread_id: number;
}
export interface ThreadReadEvent {
  conversation_id: number;
  thread_id: number;
  user_id: number;
  read_at: string;
}
export interface MessagePinnedEvent {
  conversation_id: number;
  message_id: number;
  pinned: boolean;
  pinned_by: number | null;
  pinned_at: string | null;
}
export interface ConversationStateChangedEvent {
  conversation_id: number;
  muted: boolean;
  muted_until: string | null;
  archived_at: string | null;
  pinned_at: string | null;
  cleared_at: string | null;
}
export interface MessageHiddenEvent {
  conversation_id: number;
  message_id: number;
}
