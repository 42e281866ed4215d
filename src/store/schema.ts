// Table types for Kysely. Ids are bigint in SQL and parsed to JS numbers by both drivers (database.ts).
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export const CONVERSATION_TYPES = ['direct', 'group'] as const;
export type ConversationType = (typeof CONVERSATION_TYPES)[number];

export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export interface UsersTable {
  id: number;
  name: string;
  avatar_url: string | null;
  last_seen_at: NullableTimestamp;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Set when the user's erasure was asked for (v1.2): their tokens are refused and their sends too. */
  erased_at: NullableTimestamp;
}

export interface ConversationsTable {
  id: Generated<number>;
  type: ConversationType;
  name: string | null;
  avatar_url: string | null;
  /** "smallerId:largerId" for direct conversations: makes find-or-create race-free. */
  direct_key: string | null;
  participant_count: ColumnType<number, number | undefined, number>;
  last_message_id: number | null;
  last_activity_at: Timestamp;
  created_at: CreatedAt;
  updated_at: Timestamp;
  /** Groups (v1.2): a member may send once per this many seconds (0: no slow mode). */
  slow_mode_s: ColumnType<number, number | undefined, number>;
  /** Groups (v1.2): only the owner and admins may send. */
  frozen: ColumnType<boolean, boolean | undefined, boolean>;
}

export interface ParticipantsTable {
  conversation_id: number;
  user_id: number;
  role: Role;
  joined_at: Timestamp;
  /** Read position: every message with id <= this is read. */
  last_read_message_id: ColumnType<number, number | undefined, number>;
  last_read_at: NullableTimestamp;
  /** Messages after the read position, sent by others, not deleted: kept by every write so reads never count. */
  unread_count: ColumnType<number, number | undefined, number>;
  /** Of those, the messages that mention this participant: kept the same way. */
  unread_mention_count: ColumnType<number, number | undefined, number>;
  /** Muted (notifications only): until muted_until, or until unmuted when muted_until is null. */
  muted: ColumnType<boolean, boolean | undefined, boolean>;
  muted_until: NullableTimestamp;
  /** The participant's own state of the conversation (v1.2): archived, pinned, history cleared up to cleared_message_id. */
  archived_at: NullableTimestamp;
  pinned_at: NullableTimestamp;
  cleared_at: NullableTimestamp;
  cleared_message_id: ColumnType<number, number | undefined, number>;
  /** When the participant last sent a message here (v1.2, slow mode). */
  last_sent_at: NullableTimestamp;
}

export interface MessagesTable {
  id: Generated<number>;
  conversation_id: number;
  sender_id: number;
  body: string | null;
  attachment_id: number | null;
  reply_to_id: number | null;
  forwarded_from_message_id: number | null;
  forwarded_from_conversation_id: number | null;
  forwarded_from_sender_id: number | null;
  client_message_id: string | null;
  created_at: CreatedAt;
  edited_at: NullableTimestamp;
  deleted_at: NullableTimestamp;
  /** The root of the thread this reply is in; null for a message of the conversation itself. */
  thread_id: ColumnType<number | null, number | null | undefined, number | null>;
  pinned_at: NullableTimestamp;
  pinned_by: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A thread's counts, one row per root that has had a reply (v1.2). */
export interface ThreadsTable {
  root_id: number;
  conversation_id: number;
  reply_count: ColumnType<number, number | undefined, number>;
  last_reply_at: NullableTimestamp;
  /** The latest distinct repliers, newest first (at most 10). */
  repliers: ColumnType<number[], number[] | undefined, number[]>;
}

/** Who takes part in a thread, and how far they read it (a reply id; 0: nothing read). */
export interface ThreadMembersTable {
  root_id: number;
  user_id: number;
  last_read_reply_id: ColumnType<number, number | undefined, number>;
  last_read_at: NullableTimestamp;
}

/** A message a user deleted for themselves only. */
export interface HiddenMessagesTable {
  user_id: number;
  message_id: number;
  conversation_id: number;
  hidden_at: CreatedAt;
}

export interface AttachmentsTable {
  id: Generated<number>;
  uploader_id: number;
  name: string;
  mime_type: string;
  size: number;
  storage_key: string;
  created_at: CreatedAt;
  /** Images: pixels after the EXIF orientation; null for other files. */
  width: number | null;
  height: number | null;
  /** Images: the key of the WebP thumbnail (at most 320 px) in the same store; null without one. */
  thumbnail_key: string | null;
}

export interface MessageMentionsTable {
  message_id: number;
  user_id: number;
}

export interface MessageReactionsTable {
  message_id: number;
  user_id: number;
  /** One emoji, or a short name such as `thumbs_up`. */
  emoji: string;
  created_at: CreatedAt;
}

export interface BlocksTable {
  blocker_id: number;
  blocked_id: number;
  created_at: CreatedAt;
}

export interface PushSubscriptionsTable {
  id: Generated<number>;
  user_id: number;
  endpoint: string;
  p256dh: string;
  auth: string;
  created_at: CreatedAt;
}

/** The transactional outbox (migration 005, src/store/outbox.ts). */
export interface OutboxTable {
  id: Generated<number>;
  kind: string;
  target: Generated<string>;
  conversation_id: number | null;
  type: string;
  payload: unknown;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  created_at: Generated<Date>;
  last_error: string | null;
  failed_at: Date | null;
}

/** The change feed (migration 012, src/store/change-feed.ts). */
export interface SyncChangesTable {
  tx: Generated<number>;
  seq: Generated<number>;
  conversation_id: number | null;
  user_id: number | null;
  type: string;
  data: unknown;
  at: Generated<Date>;
}

/** Each span of a user's participation in a conversation, kept by triggers on participants (migration 012). */
export interface SyncMembershipsTable {
  user_id: number;
  conversation_id: number;
  joined_tx: number;
  left_tx: number | null;
  left_at: Date | null;
}

export const REPORT_REASONS = ['spam', 'abuse', 'other'] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];
export const REPORT_STATUSES = ['open', 'resolved'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];
export const REPORT_ACTIONS = ['dismiss', 'delete_message', 'ban_user'] as const;
export type ReportAction = (typeof REPORT_ACTIONS)[number];

/** A user's report of a message (migration 014, src/store/reports.ts). */
export interface MessageReportsTable {
  id: Generated<number>;
  message_id: number;
  conversation_id: number;
  reporter_id: number;
  reason: ReportReason;
  note: string | null;
  status: ColumnType<ReportStatus, ReportStatus | undefined, ReportStatus>;
  action: ReportAction | null;
  created_at: CreatedAt;
  resolved_at: NullableTimestamp;
}

/** A user banned from a group, until `until` (null: until unbanned). */
export interface GroupBansTable {
  conversation_id: number;
  user_id: number;
  banned_by: number | null;
  reason: string | null;
  until: NullableTimestamp;
  /** When the ban was made (or last renewed). */
  created_at: Timestamp;
}

/** A user banned from the whole service, until `until` (null: until unbanned). */
export interface UserBansTable {
  user_id: number;
  reason: string | null;
  until: NullableTimestamp;
  created_at: Timestamp;
}

/** The audit log (migration 014, src/store/audit.ts): actor_id null for the server key. */
export interface AuditLogTable {
  id: Generated<number>;
  at: CreatedAt;
  actor_id: number | null;
  action: string;
  conversation_id: number | null;
  target_user_id: number | null;
  message_id: number | null;
  details: ColumnType<Record<string, unknown>, string | undefined, never>;
}

/** A user's erasure in progress or done (migration 015, src/store/erasure.ts). */
export interface ErasureJobsTable {
  user_id: number;
  messages: 'erase' | 'keep';
  /** The step it is at (src/chat/erasure.ts, ERASURE_PHASES). */
  phase: ColumnType<string, string | undefined, string>;
  /** Within the phase: the last id handled (the change feed: the last (tx, seq)). */
  after_id: ColumnType<number, number | undefined, number>;
  after_seq: ColumnType<number, number | undefined, number>;
  messages_erased: ColumnType<number, number | undefined, number>;
  requested_at: CreatedAt;
  completed_at: NullableTimestamp;
}

/** Attachment files to delete from storage, their rows gone (migration 015). */
export interface FileDeletionsTable {
  storage_key: string;
  queued_at: CreatedAt;
}

export interface Schema {
  users: UsersTable;
  conversations: ConversationsTable;
  participants: ParticipantsTable;
  messages: MessagesTable;
  threads: ThreadsTable;
  thread_members: ThreadMembersTable;
  hidden_messages: HiddenMessagesTable;
  attachments: AttachmentsTable;
  blocks: BlocksTable;
  message_mentions: MessageMentionsTable;
  message_reactions: MessageReactionsTable;
  push_subscriptions: PushSubscriptionsTable;
  outbox: OutboxTable;
  sync_changes: SyncChangesTable;
  sync_memberships: SyncMembershipsTable;
  erasure_jobs: ErasureJobsTable;
  file_deletions: FileDeletionsTable;
  message_reports: MessageReportsTable;
  group_bans: GroupBansTable;
  user_bans: UserBansTable;
  audit_log: AuditLogTable;
}

export type User = Selectable<UsersTable>;
export type Conversation = Selectable<ConversationsTable>;
export type Participant = Selectable<ParticipantsTable>;
export type Message = Selectable<MessagesTable>;
export type NewMessage = Insertable<MessagesTable>;
export type Attachment = Selectable<AttachmentsTable>;
