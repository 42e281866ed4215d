// Conversations: creating groups and direct conversations, group settings, deletion, and the inbox's order.
import { sql } from 'kysely';
import { chunks } from './bulk.js';
import type { DB } from './database.js';
import type { Role } from './schema.js';

/** Creates a group with its participants: the creator as owner, then the others as members in the order given. */
export async function insertGroup(
  db: DB,
  group: { name: string; avatar_url: string | null; ownerId: number; memberIds: readonly number[] },
  now: Date,
): Promise<number> {
  const { id } = await db
    .insertInto('conversations')
    .values({
      type: 'group',
      name: group.name,
      avatar_url: group.avatar_url,
      participant_count: group.memberIds.length + 1,
      last_activity_at: now,
      created_at: now,
      updated_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  // Ranked join times keep the creator first and the others in the order given.
  const rows = [group.ownerId, ...group.memberIds].map((user_id, i) => ({
    conversation_id: id,
    user_id,
    role: (i === 0 ? 'owner' : 'member') as Role,
    joined_at: new Date(now.getTime() + i),
  }));
  for (const chunk of chunks(rows)) await db.insertInto('participants').values(chunk).execute();
  return id;
}

/** "smallerId:largerId": the unique key of a direct conversation. */
export const directKey = (a: number, b: number): string => (a < b ? `${a}:${b}` : `${b}:${a}`);

export async function findDirect(db: DB, a: number, b: number): Promise<number | null> {
  const row = await db.selectFrom('conversations').select('id').where('direct_key', '=', directKey(a, b)).executeTakeFirst();
  return row?.id ?? null;
}

/** Creates the direct conversation of two users unless it exists; the unique key settles a race between nodes. */
export async function insertDirect(db: DB, a: number, b: number, now: Date): Promise<number | null> {
  const row = await db
    .insertInto('conversations')
    .values({ type: 'direct', direct_key: directKey(a, b), participant_count: 2, last_activity_at: now, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('direct_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!row) return null;
  await db
    .insertInto('participants')
    .values([a, b].sort((x, y) => x - y).map((user_id) => ({ conversation_id: row.id, user_id, role: 'member' as const, joined_at: now })))
    .execute();
  return row.id;
}

/** A group's settings that PATCH /groups/{id} changes. */
export interface GroupSettings {
  name?: string;
  avatar_url?: string | null;
  slow_mode_s?: number;
  frozen?: boolean;
}

export async function updateSettings(db: DB, conversationId: number, changes: GroupSettings, now: Date): Promise<void> {
  await db.updateTable('conversations').set({ ...changes, updated_at: now }).where('id', '=', conversationId).execute();
}

/** How many participants a conversation has (0 when it is gone). */
export async function participantCount(db: DB, conversationId: number): Promise<number> {
  const row = await db.selectFrom('conversations').select('participant_count').where('id', '=', conversationId).executeTakeFirst();
  return row?.participant_count ?? 0;
}

/** Deletes a conversation with its participants and messages. */
export async function deleteConversation(db: DB, conversationId: number): Promise<void> {
  await db.deleteFrom('conversations').where('id', '=', conversationId).execute();
}

/** Where an inbox page ends: in the pinned conversations (by pinning time) or in the others (by activity time). */
export interface InboxPosition {
  readonly pinned: boolean;
  readonly at: Date;
  readonly id: number;
}

/**
 * One page of a user's conversations after a position: the pinned ones first, most recently pinned first, then
 * the others by newest activity (each then by id). archived: the archived ones instead, by newest activity. A
 * conversation cleared since its last message is left out until a new message arrives.
 */
export async function inboxPage(db: DB, userId: number, options: { after?: InboxPosition; limit: number; archived?: boolean }) {
  const base = (part: 0 | 1) =>
    db
      .selectFrom('participants as p')
      .innerJoin('conversations as c', 'c.id', 'p.conversation_id')
      .select(['c.id', 'c.last_activity_at', 'p.user_id', 'p.unread_count', 'p.last_read_at', 'p.unread_mention_count', 'p.muted', 'p.muted_until', 'p.archived_at', 'p.pinned_at', 'p.cleared_at', 'p.cleared_message_id'])
      .select([
        sql<number>`${sql.lit(part)}::int`.as('part'),
        // Whether the user hid the conversation's last message (then it is looked up for them: rare).
        sql<boolean>`exists (select 1 from hidden_messages h where h.user_id = p.user_id and h.message_id = c.last_message_id)`.as('last_hidden'),
      ])
      .where('p.user_id', '=', userId)
      .where('p.archived_at', options.archived ? 'is not' : 'is', null)
      .where(sql<boolean>`(p.cleared_at is null or c.last_message_id > p.cleared_message_id)`)
      .limit(options.limit);
  const after = options.after;
  const pinnedFirst = !options.archived;
  let others = base(1).orderBy('c.last_activity_at', 'desc').orderBy('c.id', 'desc');
  if (pinnedFirst) others = others.where('p.pinned_at', 'is', null);
  if (after && !after.pinned) others = others.where(sql<boolean>`(c.last_activity_at, c.id) < (${after.at}, ${after.id})`);
  if (!pinnedFirst || (after && !after.pinned)) return others.execute();
  // The pinned and the others in one statement: each part in its own order, the pinned first.
  let pinned = base(0).where('p.pinned_at', 'is not', null).orderBy('p.pinned_at', 'desc').orderBy('c.id', 'desc');
  if (after) pinned = pinned.where(sql<boolean>`(p.pinned_at, c.id) < (${after.at}, ${after.id})`);
  type Row = Awaited<ReturnType<typeof others.execute>>[number];
  const { rows } = await sql<Row>`
    select * from ((${pinned}) union all (${others})) x
    order by x.part, x.pinned_at desc nulls last, case when x.part = 1 then x.last_activity_at end desc, x.id desc
    limit ${options.limit}`.execute(db);
  return rows;
}
