// Messages: the write of new messages (many at once), edits and soft deletes with their guards, and the reads
// the message use cases check against. Every write here runs under the conversation's lock (see locks.ts).
import { sql, type RawBuilder } from 'kysely';
import type { DB } from './database.js';
import type { LeasedRows, OutboxRow } from './outbox.js';
import { previewsOf, type PreviewRow, type ReaderState } from './read-model.js';
import type { ParticipantResource } from '../chat/resources.js';
import type { Conversation, Message } from './schema.js';

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
}

/**
 * What became of a draft, in the order the rules are checked: the sender is not a participant; the sender's
 * client_message_id was used in this conversation already; messaging is blocked (a direct conversation where
 * either side blocked the other); the attachment is not the sender's own upload (forwards carry another's);
 * the message replied to is not a visible message of this conversation; a mentioned user is not a participant.
 */
export const DRAFT_OUTCOMES = ['written', 'not_participant', 'duplicate', 'blocked', 'attachment_not_yours', 'reply_not_here', 'mention_not_participant'] as const;
export type DraftOutcome = (typeof DRAFT_OUTCOMES)[number];

export interface DraftResult {
  readonly outcome: DraftOutcome;
  /** The new message's id when written. */
  readonly id: number | null;
  /** The sender's profile when written (a plain message's resource needs nothing else). */
  readonly sender: { id: number; name: string; avatar_url: string | null } | null;
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
}

type JsonTime = string | null;
const toDate = (value: JsonTime): Date | null => (value === null ? null : new Date(value));

/**
 * Checks and writes many messages in one round trip: the database function parley_send_messages (migration
 * 002) locks the conversations (write lock, ascending id), then checks each draft's rules (see DraftOutcome)
 * against what is committed, inserts the drafts that pass with ids in the drafts' order, moves each
 * conversation's last message and activity, grows every other participant's unread count by the messages
 * others sent, and returns all of it with the conversations' previews. Called on its own it is its own
 * transaction; inside one (a forward) its locks and writes belong to that transaction.
 * The drafts travel as one JSON parameter, so the statement is the same for any number of them.
 */
export async function writeMessages(db: DB, drafts: readonly MessageDraft[], now: Date, sentFeed?: SentFeed): Promise<WrittenMessages> {
  const input = JSON.stringify(drafts.map((d, ord) => ({ ord, ...d })));
  const call = sql`select parley_send_messages(${input}::jsonb, ${now}::timestamptz) as written`;
  const { rows } = await withSentFeed(call, sql`sent.written`, sentFeed).execute(db);
  return writtenMessages(drafts, now, (rows[0] as { written: SendAnswer }).written);
}

/**
 * The change feed's rows of a send of plain messages (src/chat/unit-of-work.ts records the same for every other
 * action), written by the send's own statement: for each message written, MessageSent with the payload its caller
 * built (`payloads[i]`, JSON text of draft i's payload) completed with the id and sender the write gave it; then
 * InboxUpdated (no payload) once per conversation that received one. One round trip, as the send itself.
 */
export interface SentFeed {
  readonly payloads: readonly string[];
}

function withSentFeed(call: RawBuilder<unknown>, answer: RawBuilder<unknown>, feed: SentFeed | undefined) {
  if (!feed) return call;
  return sql`with sent as (${call}),
    results as (
      select (r.ord - 1)::int as i, r.value as res
      from sent, json_array_elements(${answer}->'results') with ordinality as r(value, ord)),
    drafted as (
      select 0 as part, r.i as k, (t.value->>'conversation_id')::bigint as conversation_id, 'MessageSent' as type,
        (t.value || jsonb_build_object('id', (r.res->>'id')::bigint, 'sender', jsonb_build_object(
          'id', (t.value->'sender'->>'id')::bigint, 'name', r.res->>'name', 'avatar_url', (r.res->'avatar_url')::jsonb)))::json as data
      from results r join jsonb_array_elements(${`[${feed.payloads.join(',')}]`}::jsonb) with ordinality as t(value, ord) on t.ord - 1 = r.i
      where r.res->>'outcome' = 'ok'),
    feed as (
      insert into sync_changes (conversation_id, user_id, type, data)
      select conversation_id, null, type, data from (
        select part, k, conversation_id, type, data from drafted
        union all
        select 1, min(k), conversation_id, 'InboxUpdated', null from drafted group by conversation_id) changes
      order by part, k
      returning 1)
    select sent.* from sent`;
}

/** Which outbox rows a send writes with its messages (migration 010): MessageSent webhooks to these URLs, pushes. */
export interface SentOutbox {
  readonly webhookUrls: readonly string[];
  readonly push: boolean;
  /** Rows first in their conversation's queue are written leased to the caller until then; null: none leased. */
  readonly leaseUntil: Date | null;
}

/** A MessageSent webhook row written with its message: the message as written, for the payload as broadcast. */
export interface SentWebhookPayload {
  readonly sent: { id: number; conversation_id: number; body: string | null; sender: { id: number; name: string; avatar_url: string | null }; created_at: string };
  readonly recipient_ids: readonly number[];
}

/**
 * writeMessages, and the messages' outbox rows in the same statement and transaction (one round trip); for
 * plain messages only (no attachment, reply or forward: their webhook payload is built from the write alone).
 * Returns the rows leased to the caller, in id order. The function answers only their ids (migration 011): their
 * payloads are built here from the write, as the function built the stored ones (sentOutboxPayload).
 */
export async function writeMessagesWithOutbox(
  db: DB,
  drafts: readonly MessageDraft[],
  now: Date,
  outbox: SentOutbox,
  sentFeed?: SentFeed,
): Promise<{ written: WrittenMessages } & LeasedRows> {
  const input = JSON.stringify(drafts.map((d, ord) => ({ ord, ...d })));
  const spec = JSON.stringify({ webhook_urls: outbox.webhookUrls, push: outbox.push });
  const call = sql`select parley_send_messages_with_outbox(${input}::jsonb, ${now}::timestamptz, ${spec}::jsonb, ${outbox.leaseUntil}::timestamptz) as answer`;
  const { rows } = await withSentFeed(call, sql`(sent.answer->'written')`, sentFeed).execute(db);
  const answer = (rows[0] as { answer: { written: SendAnswer; outbox: [number, number, string, string][]; waiting: number; created_at: string } }).answer;
  const written = writtenMessages(drafts, now, answer.written);
  const draftOf = new Map(written.results.flatMap((r, i) => (r.id === null ? [] : [[r.id, i] as const])));
  const createdAt = new Date(answer.created_at);
  return {
    written,
    waiting: Number(answer.waiting),
    leased: answer.outbox.map(([id, messageId, kind, target]) => {
      const i = draftOf.get(Number(messageId))!;
      const draft = drafts[i]!;
      return {
        id: Number(id),
        kind,
        target,
        conversation_id: kind === 'push' ? null : draft.conversation_id,
        type: 'MessageSent',
        payload: sentOutboxPayload(kind, draft, written, i),
        attempts: 0,
        created_at: createdAt,
      };
    }),
  };
}

/** The payload parley_send_messages_with_outbox stores for a message it wrote (migrations 010, 011), built from the write. */
function sentOutboxPayload(kind: string, draft: MessageDraft, written: WrittenMessages, i: number): unknown {
  const { id, sender } = written.results[i]!;
  if (kind === 'push') return { conversation_id: draft.conversation_id, message_id: id, sender_id: sender!.id };
  const sent: SentWebhookPayload = {
    sent: { id: id!, conversation_id: draft.conversation_id, body: draft.body, sender: sender!, created_at: written.at.toISOString() },
    recipient_ids: recipientsOf(written, draft.conversation_id, sender!.id),
  };
  return sent;
}

/** A written message's recipients: its conversation's participants but its sender, ascending (as the send function stores them). */
export function recipientsOf(written: WrittenMessages, conversationId: number, senderId: number): number[] {
  return (written.readers.get(conversationId) ?? [])
    .map((r) => r.user_id)
    .filter((u) => u !== senderId)
    .sort((a, b) => a - b);
}

/** What parley_send_messages answers (migrations 002, 003). */
interface SendAnswer {
  results: { outcome: Exclude<DraftOutcome, 'written'> | 'ok'; id: number | null; name: string | null; avatar_url: string | null }[];
  conversations: (Omit<Conversation, 'last_activity_at' | 'created_at' | 'updated_at'> & { last_activity_at: string; created_at: string; updated_at: string })[];
  readers: { c: number; u: number; n: number; r: JsonTime; m: number; mu: boolean; mt: JsonTime }[];
  mentions: { m: number; u: number }[];
  previews: PreviewRow[];
}

function writtenMessages(drafts: readonly MessageDraft[], now: Date, written: SendAnswer): WrittenMessages {
  const results = written.results.map((r, i): DraftResult => {
    if (r.outcome !== 'ok') return { outcome: r.outcome, id: null, sender: null };
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
  return { at: now, results, conversations, readers, previews: previewsOf(conversations.keys(), written.previews), mentions };
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

/** A page of visible message ids of a conversation: before (older) or after (newer) a message id. */
export async function pageMessageIds(
  db: DB,
  conversationId: number,
  options: { before?: number; after?: number; limit: number },
): Promise<number[]> {
  const forward = options.after !== undefined;
  let query = db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('deleted_at', 'is', null)
    .orderBy('id', forward ? 'asc' : 'desc')
    .limit(options.limit);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  if (options.after !== undefined) query = query.where('id', '>', options.after);
  return (await query.execute()).map((r) => r.id);
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
export async function softDelete(db: DB, message: Pick<Message, 'id' | 'conversation_id' | 'sender_id'>, now: Date): Promise<boolean> {
  const deleted = await db
    .updateTable('messages')
    .set({ deleted_at: now })
    .where('id', '=', message.id)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!deleted) return false;
  await db
    .updateTable('conversations')
    .set({
      last_message_id: sql`(select max(id) from messages where conversation_id = ${message.conversation_id} and deleted_at is null)`,
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

/** The newest message id of a conversation (deleted or not: a read position may rest on either); 0 when empty. */
export async function latestMessageId(db: DB, conversationId: number): Promise<number> {
  const row = await db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('conversation_id', '=', conversationId)
    .executeTakeFirst();
  return row?.id ?? 0;
}

/** Whether a message (deleted or not) belongs to a conversation. */
export async function messageInConversation(db: DB, conversationId: number, messageId: number): Promise<boolean> {
  const row = await db.selectFrom('messages').select('id').where('id', '=', messageId).where('conversation_id', '=', conversationId).executeTakeFirst();
  return row !== undefined;
}

/** Visible messages after a read position that others sent, and those of them that mention the reader: a reader's unread counts, recounted. */
export async function countUnread(db: DB, conversationId: number, userId: number, afterId: number): Promise<{ unread: number; mentions: number }> {
  const row = await db
    .selectFrom('messages as m')
    .leftJoin('message_mentions as mm', (join) => join.onRef('mm.message_id', '=', 'm.id').on('mm.user_id', '=', userId))
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.count<number>('mm.user_id').as('mentions')])
    .where('m.conversation_id', '=', conversationId)
    .where('m.id', '>', afterId)
    .where('m.sender_id', '<>', userId)
    .where('m.deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { unread: Number(row.n), mentions: Number(row.mentions) };
}
