// Messages: history, send (idempotent by client_message_id), edit, soft delete, forward.
import { sql, type Transaction } from 'kysely';
import { event, type DomainEvent } from '../events/catalog.js';
import type { DB } from '../store/database.js';
import type { Conversation, Schema } from '../store/schema.js';
import { blockedError, refuseIfDirectBlocked, requireParticipant, senderAccess, type Membership } from './access.js';
import type { Actor, ChatContext } from './context.js';
import type { Page } from './conversations.js';
import { ChatError, forbidden, invalid, notFound } from './errors.js';
import { inboxEvents } from './inbox.js';
import type { MessageResource, UserResource } from './resources.js';
import { loadMessage, loadMessages, plainMessage, type ReaderState } from './views.js';

export interface SendInput {
  readonly body?: string | null;
  readonly attachment_id?: number | null;
  readonly reply_to_id?: number | null;
  readonly client_message_id?: string | null;
}

/** MessageSent carries the resource without edited_at (the seed's exact keys). */
function sentPayload(message: MessageResource) {
  const { edited_at: _editedAt, ...payload } = message;
  return payload;
}

function normalizeBody(ctx: ChatContext, body: string | null | undefined): string | null {
  if (body === undefined || body === null || body.trim() === '') return null;
  if ([...body].length > ctx.limits.bodyMaxChars) {
    throw invalid('body', `The body may have at most ${ctx.limits.bodyMaxChars} characters.`);
  }
  return body;
}

export async function listMessages(
  ctx: ChatContext,
  actor: Actor,
  conversationId: number,
  options: { before?: number; after?: number; limit: number },
): Promise<Page<MessageResource>> {
  await requireParticipant(ctx.db, conversationId, actor.userId);
  if (options.before !== undefined && options.after !== undefined) {
    throw invalid('after', 'Give before or after, not both.');
  }
  // `after` walks forward from a known message (catch-up after a reconnect): the messages right after it.
  // Either way the page is newest first, and next_cursor is the id to pass again as the same parameter.
  const forward = options.after !== undefined;
  let query = ctx.db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('deleted_at', 'is', null)
    .orderBy('id', forward ? 'asc' : 'desc')
    .limit(options.limit + 1);
  if (options.before !== undefined) query = query.where('id', '<', options.before);
  if (options.after !== undefined) query = query.where('id', '>', options.after);
  const ids = (await query.execute()).map((r) => r.id);
  const page = ids.slice(0, options.limit);
  const messages = await loadMessages(ctx.db, page);
  const data = page.map((id) => messages.get(id)!).sort((a, b) => b.id - a.id);
  const more = ids.length > options.limit;
  return { data, next_cursor: more ? String(page.at(-1)) : null };
}

/** Checks a send's references: the attachment is the sender's own, the replied message is in this conversation. */
async function validateReferences(db: DB, actor: Actor, conversationId: number, input: SendInput): Promise<void> {
  if (input.attachment_id != null) {
    const attachment = await db
      .selectFrom('attachments')
      .select('id')
      .where('id', '=', input.attachment_id)
      .where('uploader_id', '=', actor.userId)
      .executeTakeFirst();
    if (!attachment) throw invalid('attachment_id', 'No attachment with this id was uploaded by you.');
  }
  if (input.reply_to_id != null) {
    const original = await db
      .selectFrom('messages')
      .select('id')
      .where('id', '=', input.reply_to_id)
      .where('conversation_id', '=', conversationId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (!original) throw invalid('reply_to_id', 'The message replied to is not in this conversation.');
  }
}

type NewMessageRow = {
  conversation_id: number;
  sender_id: number;
  body: string | null;
  attachment_id: number | null;
  reply_to_id?: number | null;
  forwarded_from_message_id?: number | null;
  forwarded_from_conversation_id?: number | null;
  forwarded_from_sender_id?: number | null;
  client_message_id?: string | null;
};

/**
 * Writes one message and everything it moves: the conversation's last message and activity, and every
 * other participant's unread count. One statement (data-modifying CTEs: atomic without a transaction, and one
 * round trip; the conversation row is locked before the participants', as elsewhere). Returns the new id (null
 * when client_message_id was already used), the participants' read states, which the InboxUpdated events need,
 * and the conversation row as updated.
 */
async function insertMessage(
  db: DB | Transaction<Schema>,
  row: NewMessageRow,
  now: Date,
): Promise<{ id: number; readers: ReaderState[]; conversation: Conversation | undefined; sender: UserResource | undefined } | null> {
  const rows = await db
    .with('ins', (qb) =>
      qb
        .insertInto('messages')
        .values({ ...row, created_at: now })
        .onConflict((oc) =>
          oc.columns(['conversation_id', 'sender_id', 'client_message_id']).where('client_message_id', 'is not', null).doNothing(),
        )
        .returning(['id as message_id', 'conversation_id as message_conversation_id']),
    )
    .with('conv', (qb) =>
      qb
        .updateTable('conversations')
        .from('ins')
        .set((eb) => ({ last_message_id: eb.ref('ins.message_id'), last_activity_at: now, updated_at: now }))
        .whereRef('conversations.id', '=', 'ins.message_conversation_id')
        .returningAll('conversations'),
    )
    .with('readers', (qb) =>
      qb
        .updateTable('participants')
        .from('conv')
        .set({ unread_count: sql`unread_count + case when user_id <> ${row.sender_id} then 1 else 0 end` })
        .whereRef('participants.conversation_id', '=', 'conv.id')
        .returning(['participants.user_id', 'participants.unread_count', 'participants.last_read_at']),
    )
    .selectFrom(['ins', 'readers'])
    // The conversation's columns and the sender's profile on the sender's row only: a group's thousand rows do
    // not each carry (and parse) them.
    .leftJoin('conv', (join) => join.on('readers.user_id', '=', row.sender_id))
    .leftJoin('users as sender', (join) => join.on('sender.id', '=', row.sender_id).on('readers.user_id', '=', row.sender_id))
    .selectAll('conv')
    .select(['ins.message_id', 'readers.user_id', 'readers.unread_count', 'readers.last_read_at', 'sender.name as sender_name', 'sender.avatar_url as sender_avatar_url'])
    .execute();
  const first = rows[0];
  if (first === undefined) return null;
  const readers = rows.map((r) => ({ user_id: r.user_id, unread_count: r.unread_count, last_read_at: r.last_read_at }));
  const own = rows.find((r) => r.id !== null);
  // The sender just left the conversation: the caller loads what is missing.
  if (own === undefined) return { id: first.message_id, readers, conversation: undefined, sender: undefined };
  const { message_id: _m, user_id: _u, unread_count: _n, last_read_at: _r, sender_name, sender_avatar_url, ...conversation } = own;
  return {
    id: first.message_id,
    readers,
    conversation: conversation as Conversation,
    sender: sender_name === null ? undefined : { id: row.sender_id, name: sender_name, avatar_url: sender_avatar_url },
  };
}

async function findByClientId(db: DB, conversationId: number, senderId: number, clientMessageId: string): Promise<number | null> {
  const row = await db
    .selectFrom('messages')
    .select('id')
    .where('conversation_id', '=', conversationId)
    .where('sender_id', '=', senderId)
    .where('client_message_id', '=', clientMessageId)
    .executeTakeFirst();
  return row?.id ?? null;
}

export async function sendMessage(
  ctx: ChatContext,
  actor: Actor,
  conversationId: number,
  input: SendInput,
): Promise<{ message: MessageResource; created: boolean }> {
  ctx.rateLimiter.consume('send', actor.userId);
  // The hot path, in round trips: access (membership and blocks, one query), the write (one statement),
  // then the message and the inbox preview (two queries at once). Idempotency and references add theirs
  // only when the request has them.
  const access = await senderAccess(ctx.db, conversationId, actor.userId);
  const body = normalizeBody(ctx, input.body);
  if (body === null && input.attachment_id == null) throw invalid('body', 'A message needs a body or an attachment.');
  const clientMessageId = input.client_message_id ?? null;
  if (clientMessageId !== null) {
    const existing = await findByClientId(ctx.db, conversationId, actor.userId, clientMessageId);
    if (existing !== null) return { message: await loadMessage(ctx.db, existing), created: false };
  }
  if (access.blocked) throw blockedError();
  await validateReferences(ctx.db, actor, conversationId, input);

  const now = new Date();
  const written = await insertMessage(
    ctx.db,
    {
      conversation_id: conversationId,
      sender_id: actor.userId,
      body,
      attachment_id: input.attachment_id ?? null,
      reply_to_id: input.reply_to_id ?? null,
      client_message_id: clientMessageId,
    },
    now,
  );
  if (written === null) {
    // A concurrent request with the same client_message_id won the race: answer with its message.
    const id = await findByClientId(ctx.db, conversationId, actor.userId, clientMessageId!);
    return { message: await loadMessage(ctx.db, id!), created: false };
  }
  // A plain message (no attachment, no reply) is all known from the write; anything else is loaded (one query).
  const loading =
    input.attachment_id == null && input.reply_to_id == null && written.sender !== undefined
      ? Promise.resolve(plainMessage(written.id, conversationId, body, written.sender, now))
      : loadMessage(ctx.db, written.id);
  loading.catch(() => {}); // awaited below; this only keeps a failure from being unhandled while the inbox loads
  const known = written.conversation && { conversation: written.conversation, lastMessage: loading };
  const inbox = await inboxEvents(ctx.db, conversationId, written.readers, known);
  const message = await loading;
  const events: DomainEvent[] = [event('MessageSent', conversationId, sentPayload(message)), ...inbox];
  await ctx.broadcaster.dispatch(events, actor.socketId);
  return { message, created: true };
}

/** A live (not deleted) message and the actor's membership of its conversation; 404 when either is missing. */
async function requireVisibleMessage(ctx: ChatContext, actor: Actor, messageId: number) {
  const message = await ctx.db
    .selectFrom('messages')
    .selectAll()
    .where('id', '=', messageId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!message) throw notFound('Message');
  let membership: Membership;
  try {
    membership = await requireParticipant(ctx.db, message.conversation_id, actor.userId);
  } catch {
    throw notFound('Message');
  }
  return { message, membership };
}

export async function editMessage(ctx: ChatContext, actor: Actor, messageId: number, input: { body: string }): Promise<MessageResource> {
  const { message } = await requireVisibleMessage(ctx, actor, messageId);
  if (message.sender_id !== actor.userId) throw forbidden('not_sender', 'Only the sender may edit a message.');
  const body = normalizeBody(ctx, input.body);
  if (body === null && message.attachment_id === null) throw invalid('body', 'The body may not be empty.');
  await ctx.db.updateTable('messages').set({ body, edited_at: new Date() }).where('id', '=', messageId).execute();

  const updated = await loadMessage(ctx.db, messageId);
  const events: DomainEvent[] = [event('MessageUpdated', message.conversation_id, updated)];
  const conversation = await ctx.db
    .selectFrom('conversations')
    .select('last_message_id')
    .where('id', '=', message.conversation_id)
    .executeTakeFirstOrThrow();
  if (conversation.last_message_id === messageId) events.push(...(await inboxEvents(ctx.db, message.conversation_id)));
  await ctx.broadcaster.dispatch(events, actor.socketId);
  return updated;
}

export async function deleteMessage(ctx: ChatContext, actor: Actor, messageId: number): Promise<void> {
  const { message, membership } = await requireVisibleMessage(ctx, actor, messageId);
  const moderator = membership.conversation.type === 'group' && membership.participant.role !== 'member';
  if (message.sender_id !== actor.userId && !moderator) {
    throw forbidden('not_sender', 'Only the sender or a group owner or admin may delete a message.');
  }
  const conversationId = message.conversation_id;
  const readers = await ctx.db.transaction().execute(async (trx) => {
    await trx.updateTable('messages').set({ deleted_at: new Date() }).where('id', '=', messageId).execute();
    // The last message falls back to the newest one still there.
    await trx
      .updateTable('conversations')
      .set({
        last_message_id: sql`(select max(id) from messages where conversation_id = ${conversationId} and deleted_at is null)`,
        updated_at: new Date(),
      })
      .where('id', '=', conversationId)
      .where('last_message_id', '=', messageId)
      .execute();
    // Whoever had not read it has one unread message fewer.
    await trx
      .updateTable('participants')
      .set({ unread_count: sql`greatest(unread_count - 1, 0)` })
      .where('conversation_id', '=', conversationId)
      .where('user_id', '<>', message.sender_id)
      .where('last_read_message_id', '<', messageId)
      .execute();
    return trx
      .selectFrom('participants')
      .select(['user_id', 'unread_count', 'last_read_at'])
      .where('conversation_id', '=', conversationId)
      .execute();
  });
  await ctx.broadcaster.dispatch(
    [event('MessageDeleted', conversationId, { id: messageId, conversation_id: conversationId }), ...(await inboxEvents(ctx.db, conversationId, readers))],
    actor.socketId,
  );
}

export const MAX_FORWARD_TARGETS = 20;

export async function forwardMessage(
  ctx: ChatContext,
  actor: Actor,
  messageId: number,
  conversationIds: readonly number[],
): Promise<MessageResource[]> {
  const targets = [...new Set(conversationIds)];
  if (targets.length === 0) throw invalid('conversation_ids', 'Name at least one conversation.');
  if (targets.length > MAX_FORWARD_TARGETS) {
    throw invalid('conversation_ids', `A message may be forwarded to at most ${MAX_FORWARD_TARGETS} conversations at once.`);
  }
  ctx.rateLimiter.consume('send', actor.userId);
  const { message: source } = await requireVisibleMessage(ctx, actor, messageId);
  for (const target of targets) {
    const membership = await requireParticipant(ctx.db, target, actor.userId);
    await refuseIfDirectBlocked(ctx.db, membership, actor.userId);
  }
  // A forward of a forward still names the original.
  const origin =
    source.forwarded_from_message_id !== null
      ? { id: source.forwarded_from_message_id, conversation_id: source.forwarded_from_conversation_id, sender_id: source.forwarded_from_sender_id }
      : { id: source.id, conversation_id: source.conversation_id, sender_id: source.sender_id };

  const now = new Date();
  const written = await ctx.db.transaction().execute(async (trx) => {
    const results: { conversationId: number; id: number; readers: ReaderState[]; conversation: Conversation | undefined }[] = [];
    for (const target of targets) {
      const result = await insertMessage(
        trx,
        {
          conversation_id: target,
          sender_id: actor.userId,
          body: source.body,
          attachment_id: source.attachment_id,
          forwarded_from_message_id: origin.id,
          forwarded_from_conversation_id: origin.conversation_id,
          forwarded_from_sender_id: origin.sender_id,
        },
        now,
      );
      if (!result) throw new ChatError('conflict', 'The forward could not be written.');
      results.push({ conversationId: target, ...result });
    }
    return results;
  });

  const messages = await loadMessages(ctx.db, written.map((w) => w.id));
  const events: DomainEvent[] = [];
  for (const w of written) {
    events.push(event('MessageSent', w.conversationId, sentPayload(messages.get(w.id)!)));
    const known = w.conversation && { conversation: w.conversation, lastMessage: messages.get(w.id)! };
    events.push(...(await inboxEvents(ctx.db, w.conversationId, w.readers, known)));
  }
  await ctx.broadcaster.dispatch(events, actor.socketId);
  return written.map((w) => messages.get(w.id)!);
}
