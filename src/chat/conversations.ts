// The inbox, a single conversation, and find-or-create of direct conversations.
import { sql } from 'kysely';
import type { DomainEvent } from '../events/catalog.js';
import type { ConversationResource } from './resources.js';
import { refuseIfBlocked, requireParticipant } from './access.js';
import type { Actor, ChatContext } from './context.js';
import { invalid, notFound } from './errors.js';
import { inboxEvents } from './inbox.js';
import { conversationResource, loadSharedConversations } from './views.js';

export interface Page<T> {
  readonly data: T[];
  readonly next_cursor: string | null;
}

/** Inbox cursor: the last item's activity time and id, so paging is stable while new activity arrives. */
const encodeCursor = (at: Date, id: number): string => Buffer.from(`${at.getTime()}:${id}`).toString('base64url');
/** The last instant of year 9999: later times do not survive the trip to the database as an ISO string. */
const MAX_CURSOR_TIME = 253_402_300_799_999;
function decodeCursor(cursor: string): { at: Date; id: number } {
  const match = /^(\d{1,15}):(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString());
  const at = match ? Number(match[1]) : NaN;
  const id = match ? Number(match[2]) : NaN;
  if (!(at <= MAX_CURSOR_TIME) || !Number.isSafeInteger(id)) throw invalid('cursor', 'The cursor is not one this API returned.');
  return { at: new Date(at), id };
}

/** The user's conversations, newest activity first: four queries whatever the page size. */
export async function listInbox(ctx: ChatContext, actor: Actor, options: { cursor?: string; limit: number }): Promise<Page<ConversationResource>> {
  let query = ctx.db
    .selectFrom('participants as p')
    .innerJoin('conversations as c', 'c.id', 'p.conversation_id')
    .select(['c.id', 'c.last_activity_at', 'p.user_id', 'p.unread_count', 'p.last_read_at'])
    .where('p.user_id', '=', actor.userId)
    .orderBy('c.last_activity_at', 'desc')
    .orderBy('c.id', 'desc')
    .limit(options.limit + 1);
  if (options.cursor) {
    const { at, id } = decodeCursor(options.cursor);
    query = query.where(sql<boolean>`(c.last_activity_at, c.id) < (${at}, ${id})`);
  }
  const rows = await query.execute();
  const page = rows.slice(0, options.limit);
  const shared = await loadSharedConversations(ctx.db, page.map((r) => r.id));
  const last = page.at(-1);
  return {
    data: page.map((row) => conversationResource(shared.get(row.id)!, row)),
    next_cursor: rows.length > options.limit && last ? encodeCursor(last.last_activity_at, last.id) : null,
  };
}

export async function getConversation(ctx: ChatContext, actor: Actor, conversationId: number): Promise<ConversationResource> {
  const { participant } = await requireParticipant(ctx.db, conversationId, actor.userId);
  const shared = (await loadSharedConversations(ctx.db, [conversationId])).get(conversationId)!;
  return conversationResource(shared, participant);
}

/** Find or create the direct conversation between the actor and another user. */
export async function openDirect(
  ctx: ChatContext,
  actor: Actor,
  otherUserId: number,
): Promise<{ conversation: ConversationResource; created: boolean }> {
  if (otherUserId === actor.userId) throw invalid('user_id', 'A direct conversation needs another user.');
  const other = await ctx.db.selectFrom('users').select('id').where('id', '=', otherUserId).executeTakeFirst();
  if (!other) throw notFound('User');
  await refuseIfBlocked(ctx.db, actor.userId, otherUserId);

  const [low, high] = actor.userId < otherUserId ? [actor.userId, otherUserId] : [otherUserId, actor.userId];
  const directKey = `${low}:${high}`;
  const now = new Date();
  // The unique direct_key makes two simultaneous opens agree on one conversation.
  const created = await ctx.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('conversations')
      .values({ type: 'direct', direct_key: directKey, participant_count: 2, last_activity_at: now, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('direct_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) return null;
    await trx
      .insertInto('participants')
      .values([low, high].map((user_id) => ({ conversation_id: row.id, user_id, role: 'member' as const, joined_at: now })))
      .execute();
    return row.id;
  });
  const id =
    created ??
    (await ctx.db.selectFrom('conversations').select('id').where('direct_key', '=', directKey).executeTakeFirstOrThrow()).id;

  let events: DomainEvent[] = [];
  if (created !== null) {
    events = await inboxEvents(ctx.db, id);
    await ctx.broadcaster.dispatch(events, actor.socketId);
  }
  const own = events.find((e) => e.to[0] === actor.userId);
  return {
    conversation: own ? (own.payload as ConversationResource) : await getConversation(ctx, actor, id),
    created: created !== null,
  };
}

