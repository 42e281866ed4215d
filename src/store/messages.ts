// Messages: the write of new messages (many at once), edits and soft deletes with their guards, and the reads
// the message use cases check against. Every write here runs under the conversation's lock (see locks.ts).
import { ownMessageFilter } from './own-state.js';
import { sql } from 'kysely';
import type { DB } from './database.js';
import type { LeasedRows } from './outbox.js';
import { previewsOf, type PreviewRow, type ReaderState } from './read-model.js';
import type { ParticipantResource } from '../contract/resources.js';
import type { Conversation, Message } from './schema.js';
import { THREAD_REPLIERS, type ThreadRow } from './threads.js';

/** A message to write, as the use case has checked its own input (body length, body or attachment). */
export interface MessageDraft {
  readonly conversation_id: number;
  readonly sender_id: number;
  readonly body: string | null;
  readonly attachment_id: number | null;
  readonly reply_to_id: number | null;
  readonly forwarded_from_message_id: number | null;
  readonly forwarded_from_conversation_id: number | null;
  readonly forwarded_from_sender_id: number | null;
  readonly client_message_id: string | null;
  /** Participants the message mentions (checked: each must be a participant). */
  readonly mentioned_user_ids: readonly number[];
  /** The thread's root when the message is a reply in a thread (checked: a visible message of the conversation, not itself in a thread). */
  readonly thread_id: number | null;
}

/**
 * What became of a draft, in the order the rules are checked: the sender was erased; the sender is not a participant; the sender's
 * client_message_id was used in this conversation already; messaging is blocked (a direct conversation where
 * either side blocked the other); the attachment is not the sender's own upload (forwards carry another's);
 * the message replied to is not a visible message of this conversation; the thread's root is not a visible message
 * of this conversation outside any thread; a mentioned user is not a participant. Moderation's rules (v1.2), after
 * `duplicate` (a retry of a message written before still answers it): the sender, or the other person of a direct
 * conversation, is banned from the service (`user_banned`); a member sends to a frozen group (`frozen`); and last,
 * a member sends within their group's slow mode window, or a second time in one batch (`slow_mode`).
 */
export const DRAFT_OUTCOMES = ['written', 'sender_erased', 'not_participant', 'duplicate', 'blocked', 'attachment_not_yours', 'reply_not_here', 'thread_not_here', 'mention_not_participant', 'user_banned', 'frozen', 'slow_mode'] as const;
export type DraftOutcome = (typeof DRAFT_OUTCOMES)[number];

export interface DraftResult {
  readonly outcome: DraftOutcome;
  /** The new message's id when written. */
  readonly id: number | null;
  /** The sender's profile when written (a plain message's resource needs nothing else). */
  readonly sender: { id: number; name: string; avatar_url: string | null } | null;
  /** slow_mode: the seconds until the sender may send again. */
  readonly retry_after?: number;
}

export interface WrittenMessages {
  /** The time written: every new message's created_at and its conversation's activity. */
  readonly at: Date;
  /** One result per draft, in the drafts' order. */
  readonly results: DraftResult[];
  /** The conversations that received messages, as updated. */
  readonly conversations: Map<number, Conversation>;
  /** Every participant's read state after the write, per conversation that received messages. */
  readonly readers: Map<number, ReaderState[]>;
  /** The participant previews of the conversations that received messages (their inbox entries show them). */
  readonly previews: Map<number, ParticipantResource[]>;
  /** The users each written message mentions (by message id; the sender excluded). */
  readonly mentions: Map<number, number[]>;
  /** The threads that received replies, as they now are, by root id. */
  readonly threads: Map<number, ThreadRow>;
}

type JsonTime = string | null;
const toDate = (value: JsonTime): Date | null => (value === null ? null : new Date(value));

/**
 * Checks and writes many messages in one round trip: the database function parley_send (store/functions/send.ts)
 * locks the conversations (write lock, ascending id), then checks each draft's rules (see DraftOutcome) against
 * what is committed, inserts the drafts that pass with ids in the drafts' order, moves each conversation's last
 * message and activity, grows every other participant's unread count by the messages others sent, and returns
 * all of it with the conversations' previews. With a record, the same statement also writes what happened (the
 * change feed's rows, and the outbox's read from them) and returns the outbox rows leased to the caller. Called on
 * its own it is its own transaction; inside one (a forward) its locks and writes belong to that transaction.
 * The drafts travel as one JSON parameter, so the statement is the same for any number of them.
 */
export async function writeMessages(db: DB, drafts: readonly MessageDraft[], now: Date, record?: SendRecord): Promise<WrittenMessages & LeasedRows> {
  const input = JSON.stringify(drafts.map((d, ord) => ({ ord, ...d })));
  // The send keeps the threads of the replies it writes (see the function's header).
  const threads = `"threads":true,"thread_repliers":${THREAD_REPLIERS}`;
  // The payloads are JSON text already: spliced in, not encoded again.
  const spec = record
    ? `{${threads},"payloads":[${record.payloads.join(',')}],"webhook_urls":${JSON.stringify(record.outbox.webhookUrls)},"push":${record.outbox.push},"lease_until":${JSON.stringify(record.outbox.leaseUntil)}}`
    : `{${threads}}`;
  const { rows } = await sql<{ answer: SendAnswer }>`select parley_send(${input}::jsonb, ${now}::timestamptz, ${spec}::jsonb) as answer`.execute(db);
  const { written, outbox, waiting } = rows[0]!.answer;
  return {
    ...writtenMessages(drafts, now, written),
    waiting: Number(waiting),
    leased: outbox.map((r) => ({
      id: Number(r.id),
      kind: r.kind,
      target: r.target,
      conversation_id: r.conversation_id === null ? null : Number(r.conversation_id),
      type: r.type,
      payload: r.payload,
      attempts: 0,
      created_at: new Date(r.created_at),
    })),
  };
}

/**
 * What a send of plain messages records with them (src/chat/unit-of-work.ts records the same for every other
 * action): `payloads[i]`, the MessageSent payload of draft i as JSON text, built by the caller as for the socket
 * (the write completes it with the message's id and sender); and which outbox rows follow from it.
 */
export interface SendRecord {
  readonly payloads: readonly string[];
  readonly outbox: SentOutbox;
}

/** Which outbox rows a send writes for its MessageSent changes: webhooks to these URLs, pushes. */
export interface SentOutbox {
  readonly webhookUrls: readonly string[];
  readonly push: boolean;
  /** Rows first in their conversation's queue are written leased to the caller until then; null: none leased. */
  readonly leaseUntil: Date | null;
}

/** Nothing to the outbox (no webhook URL, no push subscription). */
export const NO_OUTBOX: SentOutbox = { webhookUrls: [], push: false, leaseUntil: null };

/** A written message's recipients: its conversation's participants but its sender, ascending (as the send function stores them). */
export function recipientsOf(written: WrittenMessages, conversationId: number, senderId: number): number[] {
  return (written.readers.get(conversationId) ?? [])
    .map((r) => r.user_id)
    .filter((u) => u !== senderId)
    .sort((a, b) => a - b);
}

/** What parley_send answers: the write, the outbox rows leased to the caller, and how many others it wrote. */
interface SendAnswer {
  written: WrittenAnswer;
  outbox: { id: number; kind: string; target: string; conversation_id: number | null; type: string; payload: unknown; created_at: string }[];
  waiting: number;
}

interface WrittenAnswer {
  results: { outcome: Exclude<DraftOutcome, 'written'> | 'ok'; id: number | null; name: string | null; avatar_url: string | null; retry_after: number | null }[];
  conversations: (Omit<Conversation, 'last_activity_at' | 'created_at' | 'updated_at'> & { last_activity_at: string; created_at: string; updated_at: string })[];
  readers: { c: number; u: number; n: number; r: JsonTime; m: number; mu: boolean; mt: JsonTime }[];
  mentions: { m: number; u: number }[];
  previews: PreviewRow[];
  threads: { root_id: number; conversation_id: number; reply_count: number; last_reply_at: string; repliers: number[]; root_sender_id: number }[];
}

function writtenMessages(drafts: readonly MessageDraft[], now: Date, written: WrittenAnswer): WrittenMessages {
  const results = written.results.map((r, i): DraftResult => {
    if (r.outcome !== 'ok') return { outcome: r.outcome, id: null, sender: null, ...(r.retry_after !== null ? { retry_after: r.retry_after } : {}) };
    return { outcome: 'written', id: r.id, sender: { id: drafts[i]!.sender_id, name: r.name!, avatar_url: r.avatar_url } };
  });
  const conversations = new Map<number, Conversation>();
  for (const c of written.conversations) {
    conversations.set(c.id, {
      ...c,
      last_activity_at: new Date(c.last_activity_at),
      created_at: new Date(c.created_at),
      updated_at: new Date(c.updated_at),
    });
  }
  const readers = new Map<number, ReaderState[]>();
  for (const r of written.readers) {
    let list = readers.get(r.c);
    if (list === undefined) readers.set(r.c, (list = []));
    list.push({ user_id: r.u, unread_count: r.n, last_read_at: toDate(r.r), unread_mention_count: r.m, muted: r.mu, muted_until: toDate(r.mt) });
  }
  const mentions = new Map<number, number[]>();
  for (const { m, u } of written.mentions) mentions.set(m, [...(mentions.get(m) ?? []), u]);
  const threads = new Map<number, ThreadRow>(
    written.threads.map((t) => [
      Number(t.root_id),
      {
        root_id: Number(t.root_id),
        conversation_id: Number(t.conversation_id),
        reply_count: t.reply_count,
        last_reply_at: new Date(t.last_reply_at),
        repliers: t.repliers.map(Number),
        root_sender_id: Number(t.root_sender_id),
      },
    ]),
  );
  return { at: now, results, conversations, readers, previews: previewsOf(conversations.keys(), written.previews), mentions, threads };
}

export async function findByClientId(db: DB, conversationId: number, senderId: number, clientMessageId: string): Promise<number | null> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('sender_id', '=', senderId)
    .where('client_message_id', '=', clientMessageId)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** A message that is not deleted. */
export async function findVisibleMessage(db: DB, messageId: number): Promise<Message | undefined> {
  return db.selectFrom('messages').selectAll().where('id', '=', messageId).where('deleted_at', 'is', null).executeTakeFirst();
}

/** A visible message, and whether `userId` is a participant of its conversation: one query. */
export async function findVisibleMessageFor(db: DB, messageId: number, userId: number): Promise<(Message & { participant: boolean }) | undefined> {
  const row = await db
    .selectFrom('messages as m')
    .selectAll('m')
    .select((eb) => eb.exists(eb.selectFrom('participants as p').select('p.user_id').whereRef('p.conversation_id', '=', 'm.conversation_id').where('p.user_id', '=', userId)).as('participant'))
    .where('m.id', '=', messageId)
    .where('m.deleted_at', 'is', null)
    .executeTakeFirst();
  return row && { ...row, participant: Boolean(row.participant) };
}

/** Sets a visible message's body; false when it is deleted (or gone) by now. */
export async function editBody(db: DB, messageId: number, body: string | null, now: Date): Promise<boolean> {
  const row = await db
    .updateTable('messages')
    .set({ body, edited_at: now })
    .where('id', '=', messageId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Soft-deletes a visible message and moves what it counted in: the conversation's last message falls back to
 * the newest still visible, and each participant who had not read it (other than its sender) has one unread
 * message fewer. False when it was deleted already, in which case nothing moves.
 */
export async function softDelete(db: DB, message: Pick<Message, 'id' | 'conversation_id' | 'sender_id' | 'thread_id'>, now: Date): Promise<boolean> {
  const deleted = await db
    .updateTable('messages')
    // A deleted message is unpinned.
    .set({ deleted_at: now, pinned_at: null, pinned_by: null })
    .where('id', '=', message.id)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!deleted) return false;
  // A reply in a thread counted in neither (its thread is recounted by the caller).
  if (message.thread_id !== null) return true;
  // The newest message gone: the conversation's last message and its place in the inbox (last_activity_at) go
  // back to the newest one still visible, or to the conversation's creation when none is left.
  await db
    .updateTable('conversations')
    .set({
      last_message_id: sql`(select max(id) from messages where conversation_id = ${message.conversation_id} and thread_id is null and deleted_at is null)`,
      last_activity_at: sql`coalesce((select created_at from messages where conversation_id = ${message.conversation_id} and thread_id is null and deleted_at is null order by id desc limit 1), conversations.created_at)`,
      updated_at: now,
    })
    .where('id', '=', message.conversation_id)
    .where('last_message_id', '=', message.id)
    .execute();
  // Whoever had not read it has one unread message fewer, and one unread mention fewer if it mentioned them.
  await db
    .updateTable('participants')
    .set({
      unread_count: sql`greatest(unread_count - 1, 0)`,
      unread_mention_count: sql`greatest(unread_mention_count - case when exists (
        select 1 from message_mentions mm where mm.message_id = ${message.id} and mm.user_id = participants.user_id) then 1 else 0 end, 0)`,
    })
    .where('conversation_id', '=', message.conversation_id)
    .where('user_id', '<>', message.sender_id)
    .where('last_read_message_id', '<', message.id)
    .execute();
  return true;
}

/** The newest message id of a conversation, replies in threads aside (deleted or not: a read position may rest on either); 0 when empty. */
export async function latestMessageId(db: DB, conversationId: number): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('conversation_id', '=', conversationId)
    .where('thread_id', 'is', null)
    .executeTakeFirst();
  return row?.id ?? 0;
}

/** Whether a message (deleted or not) belongs to a conversation. */
export async function messageInConversation(db: DB, conversationId: number, messageId: number): Promise<boolean> {
  const row = await db.selectFrom('messages').select('id').where('id', '=', messageId).where('conversation_id', '=', conversationId).executeTakeFirst();
  return row !== undefined;
}

/** Visible messages after a read position that others sent (replies in threads aside), and those of them that mention the reader: a reader's unread counts, recounted. */
export async function countUnread(db: DB, conversationId: number, userId: number, afterId: number): Promise<{ unread: number; mentions: number }> {
  const row = await db
    .selectFrom('messages as m')
    .leftJoin('message_mentions as mm', (join) => join.onRef('mm.message_id', '=', 'm.id').on('mm.user_id', '=', userId))
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.count<number>('mm.user_id').as('mentions')])
    .where('m.conversation_id', '=', conversationId)
    .where('m.id', '>', afterId)
    .where('m.sender_id', '<>', userId)
    .where('m.thread_id', 'is', null)
    .where('m.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { unread: Number(row.n), mentions: Number(row.mentions) };
}
