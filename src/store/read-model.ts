// The read model: rows → the API's resources (docs/api.md), in a constant number of queries whatever the list's length.
import { sql } from 'kysely';
import type { DB } from './database.js';
import { idIn } from './bulk.js';
import { mentionedUsers, reactionSummaries } from './reactions.js';
import { threadsOf, threadSummary } from './threads.js';
import type { Conversation, Role } from './schema.js';
import {
  iso,
  isoOrNull,
  type AttachmentResource,
  type ConversationResource,
  type ConversationView,
  type HistoryItem,
  type MessageResource,
  type ParticipantResource,
  type UserResource,
} from '../contract/resources.js';

export const attachmentUrl = (id: number): string => `/api/chat/v1/attachments/${id}`;

export function userResource(row: { id: number; name: string; avatar_url: string | null }): UserResource {
  return { id: row.id, name: row.name, avatar_url: row.avatar_url };
}

export function attachmentResource(row: {
  id: number; name: string; mime_type: string; size: number; width: number | null; height: number | null; thumbnail_key: string | null;
}): AttachmentResource {
  return {
    id: row.id, name: row.name, mime_type: row.mime_type, size: row.size, url: attachmentUrl(row.id),
    width: row.width, height: row.height, thumbnail_url: row.thumbnail_key === null ? null : `${attachmentUrl(row.id)}/thumbnail`,
  };
}

/** Messages by id, fully hydrated (sender, attachment, reply preview, forward origin): one query. */
export async function loadMessages(db: DB, ids: readonly number[]): Promise<Map<number, MessageResource>> {
  return new Map([...(await loadMessagesWithPlace(db, ids))].map(([id, { message }]) => [id, message]));
}

/** A message's resource and its place: the thread it is in, its pin (what history items add to the resource). */
interface PlacedMessage {
  readonly message: MessageResource;
  readonly thread_id: number | null;
  readonly pinned_at: Date | null;
  readonly pinned_by: number | null;
}

async function loadMessagesWithPlace(db: DB, ids: readonly number[]): Promise<Map<number, PlacedMessage>> {
  const result = new Map<number, PlacedMessage>();
  if (ids.length === 0) return result;
  const rows = await db
    .selectFrom('messages as m')
    .innerJoin('users as s', 's.id', 'm.sender_id')
    .leftJoin('attachments as a', 'a.id', 'm.attachment_id')
    .leftJoin('messages as r', 'r.id', 'm.reply_to_id')
    .leftJoin('users as rs', 'rs.id', 'r.sender_id')
    .leftJoin('users as fs', 'fs.id', 'm.forwarded_from_sender_id')
    .select([
      'm.id', 'm.conversation_id', 'm.body', 'm.created_at', 'm.edited_at',
      'm.forwarded_from_message_id', 'm.forwarded_from_conversation_id', 'm.thread_id', 'm.pinned_at', 'm.pinned_by',
      's.id as s_id', 's.name as s_name', 's.avatar_url as s_avatar',
      'a.id as a_id', 'a.name as a_name', 'a.mime_type as a_mime', 'a.size as a_size',
      'a.width as a_width', 'a.height as a_height', 'a.thumbnail_key as a_thumbnail_key',
      'r.id as r_id', 'r.body as r_body', 'r.deleted_at as r_deleted_at',
      'rs.id as rs_id', 'rs.name as rs_name', 'rs.avatar_url as rs_avatar',
      'fs.id as fs_id', 'fs.name as fs_name', 'fs.avatar_url as fs_avatar',
    ])
    .where(idIn('m.id', ids))
    .execute();
  for (const row of rows) {
    const message: MessageResource = {
      id: row.id,
      conversation_id: row.conversation_id,
      body: row.body,
      attachment:
        row.a_id === null ? null : attachmentResource({
          id: row.a_id, name: row.a_name!, mime_type: row.a_mime!, size: row.a_size!,
          width: row.a_width, height: row.a_height, thumbnail_key: row.a_thumbnail_key,
        }),
      sender: { id: row.s_id, name: row.s_name, avatar_url: row.s_avatar },
      reply_to:
        row.r_id === null
          ? null
          : {
              id: row.r_id,
              body: row.r_deleted_at ? null : row.r_body,
              sender: { id: row.rs_id!, name: row.rs_name!, avatar_url: row.rs_avatar },
              deleted: row.r_deleted_at !== null,
            },
      forwarded_from:
        row.forwarded_from_message_id === null
          ? null
          : {
              message_id: row.forwarded_from_message_id,
              conversation_id: row.forwarded_from_conversation_id!,
              sender: { id: row.fs_id!, name: row.fs_name!, avatar_url: row.fs_avatar },
            },
      created_at: iso(row.created_at),
      edited_at: isoOrNull(row.edited_at),
    };
    result.set(row.id, {
      message,
      thread_id: row.thread_id === null ? null : Number(row.thread_id),
      pinned_at: row.pinned_at,
      pinned_by: row.pinned_by === null ? null : Number(row.pinned_by),
    });
  }
  return result;
}

/**
 * The resource of a message just written without attachment, reply or forward: what loadMessages would read
 * back, from what the write already knows (the stored created_at is the `createdAt` given to the insert).
 */
export function plainMessage(id: number, conversationId: number, body: string | null, sender: UserResource, createdAt: Date): MessageResource {
  return {
    id,
    conversation_id: conversationId,
    body,
    attachment: null,
    sender,
    reply_to: null,
    forwarded_from: null,
    created_at: iso(createdAt),
    edited_at: null,
  };
}

/**
 * Messages by id as history lists them: the MessageResource with reactions and mentions (v1.1), the thread it is
 * in or the thread under it, and its pin (v1.2): four queries, side by side.
 */
export async function loadHistoryItems(db: DB, ids: readonly number[]): Promise<Map<number, HistoryItem>> {
  const items = new Map<number, HistoryItem>();
  if (ids.length === 0) return items;
  const [messages, reactions, mentions, threads] = await Promise.all([
    loadMessagesWithPlace(db, ids),
    reactionSummaries(db, ids),
    mentionedUsers(db, ids),
    threadsOf(db, ids),
  ]);
  for (const [id, { message, thread_id, pinned_at, pinned_by }] of messages) {
    const thread = threads.get(id);
    items.set(id, {
      ...message,
      reactions: reactions.get(id) ?? [],
      mentioned_user_ids: mentions.get(id) ?? [],
      thread_id,
      thread: thread && thread.reply_count > 0 ? threadSummary(thread) : null,
      pinned_at: isoOrNull(pinned_at),
      pinned_by,
    });
  }
  return items;
}

export async function loadMessage(db: DB, id: number): Promise<MessageResource> {
  const message = (await loadMessages(db, [id])).get(id);
  if (!message) throw new Error(`message ${id} vanished`);
  return message;
}

/** The part of a ConversationResource that every participant sees alike. */
export interface SharedConversation {
  readonly id: number;
  readonly type: 'direct' | 'group';
  readonly name: string | null;
  readonly avatar_url: string | null;
  readonly participant_count: number;
  readonly participants_preview: ParticipantResource[];
  readonly last_message: MessageResource | null;
  readonly created_at: Date;
  readonly updated_at: Date;
  /** v1.2, groups' sending rules (direct conversations: 0 and false). */
  readonly slow_mode_s: number;
  readonly frozen: boolean;
}

/** The part that is one participant's own. */
export interface ReaderState {
  readonly user_id: number;
  readonly unread_count: number;
  readonly last_read_at: Date | null;
  readonly unread_mention_count: number;
  readonly muted: boolean;
  readonly muted_until: Date | null;
}

/** The participant columns a ReaderState is read from. */
export const READER_COLUMNS = ['user_id', 'unread_count', 'last_read_at', 'unread_mention_count', 'muted', 'muted_until'] as const;

/**
 * The ConversationResource as InboxUpdated carries it: exactly the keys of API v1 (the event's payload keys
 * never change). The HTTP API answers with conversationView, which adds the keys of later versions.
 */
export function conversationResource(shared: SharedConversation, reader: Pick<ReaderState, 'unread_count' | 'last_read_at'>): ConversationResource {
  return {
    id: shared.id,
    type: shared.type,
    name: shared.name,
    avatar_url: shared.avatar_url,
    participant_count: shared.participant_count,
    participants_preview: shared.participants_preview,
    last_message: shared.last_message,
    unread_count: reader.unread_count,
    last_read_at: isoOrNull(reader.last_read_at),
    created_at: iso(shared.created_at),
    updated_at: iso(shared.updated_at),
  };
}

/** One participant of a preview, with its conversation and its rank in the preview. */
export interface PreviewRow {
  readonly conversation_id: number;
  readonly id: number;
  readonly name: string;
  readonly avatar_url: string | null;
  readonly role: Role;
}

/** Groups preview rows (in their order) by conversation. */
export function previewsOf(conversationIds: Iterable<number>, rows: readonly PreviewRow[]): Map<number, ParticipantResource[]> {
  const previews = new Map<number, ParticipantResource[]>([...conversationIds].map((id) => [id, []]));
  for (const row of rows) previews.get(row.conversation_id)?.push({ id: row.id, name: row.name, avatar_url: row.avatar_url, role: row.role });
  return previews;
}

/**
 * Up to 10 participants per conversation, owners and admins first, then by seniority: one query, the
 * database function parley_previews (migration 002), which the send's write uses too.
 */
export async function loadPreviews(db: DB, conversationIds: readonly number[]): Promise<Map<number, ParticipantResource[]>> {
  if (conversationIds.length === 0) return new Map();
  // The ids as one array literal: the statement's text is the same however many there are.
  const { rows } = await sql<PreviewRow>`select * from parley_previews(${`{${conversationIds.join(',')}}`}::bigint[])`.execute(db);
  return previewsOf(conversationIds, rows);
}

/** The shared part of a conversation from its row, its preview and its last message (as loaded or as just written). */
export function sharedConversation(c: Conversation, preview: ParticipantResource[], lastMessage: MessageResource | null): SharedConversation {
  return {
    id: c.id,
    type: c.type,
    name: c.name,
    avatar_url: c.avatar_url,
    participant_count: c.participant_count,
    participants_preview: preview,
    last_message: lastMessage,
    created_at: c.created_at,
    updated_at: c.updated_at,
    slow_mode_s: c.slow_mode_s,
    frozen: c.frozen,
  };
}

/** Shared parts of several conversations: three queries (conversations, previews, last messages). */
export async function loadSharedConversations(db: DB, ids: readonly number[]): Promise<Map<number, SharedConversation>> {
  const result = new Map<number, SharedConversation>();
  if (ids.length === 0) return result;
  const conversations = await db.selectFrom('conversations').selectAll().where('id', 'in', ids).execute();
  const lastIds = conversations.map((c) => c.last_message_id).filter((id): id is number => id !== null);
  const [previews, lastMessages] = await Promise.all([loadPreviews(db, ids), loadMessages(db, lastIds)]);
  for (const c of conversations) {
    const last = c.last_message_id === null ? null : (lastMessages.get(c.last_message_id) ?? null);
    result.set(c.id, sharedConversation(c, previews.get(c.id) ?? [], last));
  }
  return result;
}

export async function loadShared(db: DB, id: number): Promise<SharedConversation | undefined> {
  return (await loadSharedConversations(db, [id])).get(id);
}

/** Whether a participant's mute holds at `now` (a mute with an end in the past is over). */
export function mutedAt(reader: Pick<ReaderState, 'muted' | 'muted_until'>, now: Date = new Date()): boolean {
  return reader.muted && (reader.muted_until === null || reader.muted_until > now);
}

/** A participant's own state of a conversation (v1.2): archived, pinned, history cleared up to a message. */
export interface OwnState {
  readonly archived_at: Date | null;
  readonly pinned_at: Date | null;
  readonly cleared_at: Date | null;
  readonly cleared_message_id: number;
}

/**
 * The ConversationResource as the HTTP API answers it: v1's keys, plus unread_mention_count and the mute (v1.1),
 * and the reader's own state (v1.2). `ownLast`: the last message as this reader sees it, when it differs from
 * the shared one (hidden for them, or cleared).
 */
export function conversationView(
  shared: SharedConversation,
  reader: ReaderState & OwnState,
  now: Date = new Date(),
  ownLast?: MessageResource | null,
): ConversationView {
  const muted = mutedAt(reader, now);
  const cleared = shared.last_message !== null && shared.last_message.id <= reader.cleared_message_id;
  const seen = ownLast !== undefined ? { ...shared, last_message: ownLast } : cleared ? { ...shared, last_message: null } : shared;
  return {
    ...conversationResource(seen, reader),
    unread_mention_count: reader.unread_mention_count,
    muted,
    muted_until: muted ? isoOrNull(reader.muted_until) : null,
    archived_at: isoOrNull(reader.archived_at),
    pinned_at: isoOrNull(reader.pinned_at),
    cleared_at: isoOrNull(reader.cleared_at),
    slow_mode_s: shared.slow_mode_s,
    frozen: shared.frozen,
  };
}
