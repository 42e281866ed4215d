// The read model: rows → the API's resources (docs/api.md), in a constant number of queries whatever the list's length.
import { sql, type RawBuilder } from 'kysely';
import type { DB } from './database.js';
import { idIn } from './bulk.js';
import { mentionedUserIdsJson, reactionSummaryJson } from './reactions.js';
import { threadSummary, type ThreadRow } from './threads.js';
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
  type ReactionSummary,
  type UserResource,
} from '../contract/resources.js';

/** Where an attachment is downloaded from: this path and its id. */
const ATTACHMENTS_PATH = '/api/chat/v1/attachments/';
export const attachmentUrl = (id: number): string => `${ATTACHMENTS_PATH}${id}`;

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
  const result = new Map<number, MessageResource>();
  if (ids.length === 0) return result;
  const { rows } = await sql<MessageRow>`${messageRows(givenIds(ids), sql``)}`.execute(db);
  for (const row of rows) result.set(row.id, messageResource(row));
  return result;
}

/** Where the messages of a statement come from: rows of (id, n), n their place in a page. */
export type IdSource = RawBuilder<{ id: number; n: number }>;

export const givenIds = (ids: readonly number[]): IdSource => sql`select id, 0::bigint as n from parley_ids(${ids.map(String)}::bigint[]) as id`;

/**
 * The statement that hydrates messages, the one home of a message's columns and joins: each message of `source`
 * with its sender, attachment, reply preview and forward origin, plus `extra` columns (a history item's).
 */
function messageRows(source: IdSource, extra: RawBuilder<unknown>): RawBuilder<MessageRow> {
  return sql<MessageRow>`
    with page (id, n) as materialized (${source})
    select m.id, m.conversation_id, m.body, m.created_at, m.edited_at,
      m.forwarded_from_message_id, m.forwarded_from_conversation_id, m.thread_id, m.pinned_at, m.pinned_by, m.sender_id, page.n,
      s.name as s_name, s.avatar_url as s_avatar,
      a.id as a_id, a.name as a_name, a.mime_type as a_mime, a.size as a_size, a.width as a_width, a.height as a_height, a.thumbnail_key as a_thumbnail_key,
      r.id as r_id, r.body as r_body, r.deleted_at as r_deleted_at,
      rs.id as rs_id, rs.name as rs_name, rs.avatar_url as rs_avatar,
      fs.id as fs_id, fs.name as fs_name, fs.avatar_url as fs_avatar ${extra}
    from page
    join messages m on m.id = page.id
    join users s on s.id = m.sender_id
    left join attachments a on a.id = m.attachment_id
    left join messages r on r.id = m.reply_to_id
    left join users rs on rs.id = r.sender_id
    left join users fs on fs.id = m.forwarded_from_sender_id`;
}

/** A row of messageRows. */
interface MessageRow {
  id: number; conversation_id: number; body: string | null; created_at: Date; edited_at: Date | null;
  forwarded_from_message_id: number | null; forwarded_from_conversation_id: number | null; thread_id: number | null;
  pinned_at: Date | null; pinned_by: number | null; sender_id: number; n: number;
  s_name: string; s_avatar: string | null;
  a_id: number | null; a_name: string | null; a_mime: string | null; a_size: number | null; a_width: number | null; a_height: number | null; a_thumbnail_key: string | null;
  r_id: number | null; r_body: string | null; r_deleted_at: Date | null;
  rs_id: number | null; rs_name: string | null; rs_avatar: string | null;
  fs_id: number | null; fs_name: string | null; fs_avatar: string | null;
}

function messageResource(row: MessageRow): MessageResource {
  return {
    id: row.id,
    conversation_id: row.conversation_id,
    body: row.body,
    attachment:
      row.a_id === null ? null : attachmentResource({
        id: row.a_id, name: row.a_name!, mime_type: row.a_mime!, size: row.a_size!,
        width: row.a_width, height: row.a_height, thumbnail_key: row.a_thumbnail_key,
      }),
    sender: { id: row.sender_id, name: row.s_name, avatar_url: row.s_avatar },
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

/** A row of historyRows: a message's row, its reactions and mentions, and the thread under it. */
interface HistoryRow extends MessageRow {
  reactions: ReactionSummary[] | null;
  mentioned: number[] | null;
  t_reply_count: number | null;
  t_last_reply_at: Date | null;
  t_repliers: (number | string)[] | null;
}

/** Messages as history lists them, in one statement: the MessageResource with reactions and mentions (v1.1), the thread it is in or the thread under it, and its pin (v1.2). */
function historyRowsStatement(source: IdSource): RawBuilder<HistoryRow> {
  const extra = sql`, ${reactionSummaryJson(sql.ref('m.id'))} as reactions, ${mentionedUserIdsJson(sql.ref('m.id'))} as mentioned,
      t.reply_count as t_reply_count, t.last_reply_at as t_last_reply_at, t.repliers as t_repliers`;
  return sql<HistoryRow>`${messageRows(source, extra)} left join threads t on t.root_id = m.id`;
}

async function historyRows(db: DB, source: IdSource): Promise<HistoryRow[]> {
  return (await historyRowsStatement(source).execute(db)).rows;
}

function historyItem(row: HistoryRow): HistoryItem {
  const thread: ThreadRow | null =
    row.t_reply_count === null || row.t_reply_count === 0
      ? null
      : { root_id: row.id, conversation_id: row.conversation_id, reply_count: row.t_reply_count, last_reply_at: row.t_last_reply_at, repliers: row.t_repliers!.map(Number), root_sender_id: row.sender_id };
  return {
    ...messageResource(row),
    reactions: row.reactions ?? [],
    mentioned_user_ids: row.mentioned ?? [],
    thread_id: row.thread_id,
    thread: thread && threadSummary(thread),
    pinned_at: isoOrNull(row.pinned_at),
    pinned_by: row.pinned_by,
  };
}

/** A timestamp as toISOString() writes it (milliseconds, truncated as a JS Date truncates), in SQL. */
const isoSql = (column: string) => sql`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * historyItem() in SQL, for a reader that passes the JSON on without parsing it (a user's export): each message
 * of `source` with its place n and its history item as JSON text, the same item historyItem() gives for the same
 * row (test/store/history-item-json.test.ts compares them on the same messages). No parameters: every value is a
 * literal, so it can run inside COPY.
 */
export function historyItemJsonRows(source: IdSource): RawBuilder<{ id: number; n: number; item: string }> {
  const user = (id: string, name: string, avatar: string) => sql`json_build_object('id', ${sql.ref(id)}, 'name', ${sql.ref(name)}, 'avatar_url', ${sql.ref(avatar)})`;
  const attachmentPath = sql`${sql.lit(ATTACHMENTS_PATH)} || h.a_id`;
  return sql`select h.id, h.n, json_build_object(
      'id', h.id, 'conversation_id', h.conversation_id, 'body', h.body,
      'attachment', case when h.a_id is not null then json_build_object(
        'id', h.a_id, 'name', h.a_name, 'mime_type', h.a_mime, 'size', h.a_size, 'url', ${attachmentPath},
        'width', h.a_width, 'height', h.a_height,
        'thumbnail_url', case when h.a_thumbnail_key is not null then ${attachmentPath} || '/thumbnail' end) end,
      'sender', ${user('h.sender_id', 'h.s_name', 'h.s_avatar')},
      'reply_to', case when h.r_id is not null then json_build_object(
        'id', h.r_id, 'body', case when h.r_deleted_at is null then h.r_body end,
        'sender', ${user('h.rs_id', 'h.rs_name', 'h.rs_avatar')}, 'deleted', h.r_deleted_at is not null) end,
      'forwarded_from', case when h.forwarded_from_message_id is not null then json_build_object(
        'message_id', h.forwarded_from_message_id, 'conversation_id', h.forwarded_from_conversation_id,
        'sender', ${user('h.fs_id', 'h.fs_name', 'h.fs_avatar')}) end,
      'created_at', ${isoSql('h.created_at')}, 'edited_at', ${isoSql('h.edited_at')},
      'reactions', coalesce(h.reactions, '[]'::json), 'mentioned_user_ids', coalesce(h.mentioned, '[]'::json),
      'thread_id', h.thread_id,
      'thread', case when h.t_reply_count > 0 then json_build_object(
        'reply_count', h.t_reply_count, 'last_reply_at', ${isoSql('h.t_last_reply_at')},
        'participant_ids', (select json_agg(p.id order by p.id) from (select distinct unnest(h.sender_id || h.t_repliers) as id) p)) end,
      'pinned_at', ${isoSql('h.pinned_at')}, 'pinned_by', h.pinned_by
    )::text as item
    from (${historyRowsStatement(source)}) h`;
}

/** Messages by id as history lists them (historyRows): one statement. */
export async function loadHistoryItems(db: DB, ids: readonly number[]): Promise<Map<number, HistoryItem>> {
  const items = new Map<number, HistoryItem>();
  if (ids.length === 0) return items;
  for (const row of await historyRows(db, givenIds(ids))) items.set(row.id, historyItem(row));
  return items;
}

/**
 * A page of visible message ids that the viewer may see, before (older, newest first) or after (newer, oldest first)
 * a message id: of a conversation's history (replies in threads are not part of it) or of a thread (`threadId`, in
 * its conversation `conversationId`). One statement: the database function parley_message_page
 * (store/functions/message-page.ts), which reads the page along the scope's index whatever the planner believes.
 */
export async function pageMessageIds(db: DB, scope: PageScope, options: PageOptions): Promise<number[]> {
  const { rows } = await sql<{ id: string }>`select id from (${messagePage(scope, options)}) page order by n`.execute(db);
  return rows.map((r) => Number(r.id));
}

export interface PageScope {
  readonly conversationId: number;
  readonly threadId?: number;
}

export interface PageOptions {
  readonly before?: number;
  readonly after?: number;
  readonly limit: number;
  readonly viewerId: number;
}

/** The page of pageMessageIds as an IdSource (n: the place in the page). */
function messagePage(scope: PageScope, options: PageOptions): IdSource {
  return sql`select id, n from parley_message_page(${scope.threadId ?? null}::bigint, ${scope.conversationId}::bigint,
    ${options.viewerId}::bigint, ${options.before ?? null}::bigint, ${options.after ?? null}::bigint, ${options.limit}::int) with ordinality as page(id, n)`;
}

/**
 * A page of history items of a conversation's history or of a thread, as the viewer sees it (the page of
 * parley_message_page, as pageMessageIds), read and hydrated in one statement: up to
 * `limit` items newest first, whether more follow, and the page's last id in its own order.
 */
export async function loadHistoryPage(
  db: DB,
  scope: PageScope,
  options: PageOptions,
): Promise<{ items: HistoryItem[]; more: boolean; last: number | undefined }> {
  const rows = await historyRows(db, messagePage(scope, { ...options, limit: options.limit + 1 }));
  rows.sort((a, b) => a.n - b.n);
  const page = rows.slice(0, options.limit);
  // last: the page's last id in its own order (the oldest going back, the newest going forward): the next cursor.
  return { items: page.map(historyItem).sort((a, b) => b.id - a.id), more: rows.length > options.limit, last: page.at(-1)?.id };
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

/** A (user id, conversation id) pair of the inbox: the user's entry of that conversation. */
export type Entry = readonly [userId: number, conversationId: number];

/** An entry as a map key. */
export const entryKey = (userId: number, conversationId: number): string => `${userId}:${conversationId}`;

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
 * Up to 10 participants per conversation, owners and admins first, then by seniority: one query, the database
 * function parley_participants_preview (src/store/functions/participants-preview.ts), which the send's write uses too.
 */
export async function loadPreviews(db: DB, conversationIds: readonly number[]): Promise<Map<number, ParticipantResource[]>> {
  if (conversationIds.length === 0) return new Map();
  // The ids as one array literal: the statement's text is the same however many there are.
  const { rows } = await sql<PreviewRow>`select * from parley_participants_preview(${`{${conversationIds.join(',')}}`}::bigint[])`.execute(db);
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
  // One statement text for any number of ids (a sync batch asks for tens): an `in` list was a statement per length.
  const conversations = await db.selectFrom('conversations').selectAll().where(idIn('id', ids)).execute();
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
