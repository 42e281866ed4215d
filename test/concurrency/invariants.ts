// Shared by the concurrency suites: a real Parley on real PostgreSQL, a recorder of every answer (so a test can
// say "never a 5xx"), a direct SQL view of the app's database, and the invariants that must hold once the dust
// of a burst of concurrent requests has settled:
//   - every participant's unread_count equals a recount: messages after their read position, sent by others,
//     not deleted;
//   - a conversation's last message is its newest message not deleted (or none);
//   - participant_count equals the number of participant rows;
//   - a group that still has participants has exactly one owner;
// checked both in the tables and through the API (GET /conversations/{id} as each participant).
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';

/** Limits high enough that the rate limiter never answers for a burst of a test. */
export const UNLIMITED = {
  CHAT_RATE_SENDS_PER_MINUTE: '1000000',
  CHAT_RATE_TYPING_PER_MINUTE: '1000000',
  CHAT_RATE_HEARTBEATS_PER_MINUTE: '1000000',
  CHAT_RATE_CHANNEL_AUTHS_PER_MINUTE: '1000000',
  CHAT_RATE_EDITS_PER_MINUTE: '1000000',
  CHAT_RATE_READS_PER_MINUTE: '1000000',
  CHAT_RATE_CONVERSATIONS_PER_MINUTE: '1000000',
  CHAT_RATE_GROUPS_PER_HOUR: '1000000',
  CHAT_RATE_UPLOADS_PER_MINUTE: '1000000',
  CHAT_RATE_BLOCKS_PER_MINUTE: '1000000',
  CHAT_RATE_OTHER_WRITES_PER_MINUTE: '1000000',
  CHAT_RATE_SEARCHES_PER_MINUTE: '1000000',
  CHAT_RATE_HISTORY_PAGES_PER_MINUTE: '1000000',
};

export interface Answer {
  readonly user: number;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly body: any;
}

/** A Parley on a fresh PostgreSQL database, a SQL client on that database, and every answer it gave. */
export interface Harness {
  readonly app: TestApp;
  readonly sql: pg.Client;
  /** Every answer to `call`, in the order the answers came. */
  readonly answers: Answer[];
  /** One request as a user, recorded. */
  call(user: number, method: string, path: string, body?: unknown): Promise<Answer>;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const app = await startTestApp({ database: 'postgres', env: UNLIMITED });
  assert.ok(app.config.databaseUrl, 'the app runs on PostgreSQL');
  const sql = new pg.Client({ connectionString: app.config.databaseUrl });
  await sql.connect();
  const answers: Answer[] = [];
  return {
    app,
    sql,
    answers,
    async call(user, method, path, body) {
      const res = await app.request(user, method, path, body);
      const answer = { user, method, path, status: res.status, body: res.body };
      answers.push(answer);
      return answer;
    },
    async close() {
      await sql.end();
      await app.close();
    },
  };
}

/** Answers with a 5xx status among the given ones (all recorded ones by default), for assert.deepEqual(…, []). */
export function serverErrors(answers: readonly Answer[]): string[] {
  return answers.filter((a) => a.status >= 500).map((a) => `${a.method} ${a.path} as ${a.user} → ${a.status} ${JSON.stringify(a.body)}`);
}

export function assertNoServerErrors(answers: readonly Answer[]): void {
  assert.deepEqual(serverErrors(answers), [], 'no request answers with a 5xx');
}

export function statuses(answers: readonly Answer[]): number[] {
  return answers.map((a) => a.status).sort((a, b) => a - b);
}

/** Runs the functions at the same time and waits for all of them. */
export function together<T>(operations: readonly (() => Promise<T>)[]): Promise<T[]> {
  return Promise.all(operations.map((op) => op()));
}

/** Creates users (a first request with their token does). */
export async function register(h: Harness, ...users: number[]): Promise<void> {
  await Promise.all(users.map(async (u) => assert.equal((await h.call(u, 'GET', '/blocks')).status, 200)));
}

export async function directConversation(h: Harness, a: number, b: number): Promise<number> {
  await register(h, a, b);
  const res = await h.call(a, 'POST', '/conversations', { user_id: b });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id;
}

/** A group owned by owner, with the members in the order given, and admins promoted (in that order). */
export async function groupOf(h: Harness, owner: number, members: readonly number[], admins: readonly number[] = []): Promise<number> {
  await register(h, owner, ...members);
  const res = await h.call(owner, 'POST', '/groups', { name: 'Race track', user_ids: members });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const id = res.body.data.id;
  for (const admin of admins) {
    const promoted = await h.call(owner, 'PATCH', `/groups/${id}/participants/${admin}`, { role: 'admin' });
    assert.equal(promoted.status, 204, JSON.stringify(promoted.body));
  }
  return id;
}

/** Sends one message (one after the other when called in a loop) and returns its id. */
export async function sendOne(h: Harness, user: number, conversationId: number, body = `from ${user}`): Promise<number> {
  const res = await h.call(user, 'POST', `/conversations/${conversationId}/messages`, { body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id;
}

// ---- The tables, read directly ---------------------------------------------------------------------------

export interface ParticipantRow {
  user_id: number;
  role: string;
  unread_count: number;
  last_read_message_id: number;
  /** Messages after last_read_message_id, sent by others, not deleted. */
  recount: number;
}

export async function participantRows(sql: pg.Client, conversationId: number): Promise<ParticipantRow[]> {
  const { rows } = await sql.query(
    `select p.user_id::int as user_id, p.role, p.unread_count, p.last_read_message_id::int as last_read_message_id,
            (select count(*)::int from messages m
              where m.conversation_id = p.conversation_id and m.id > p.last_read_message_id
                and m.sender_id <> p.user_id and m.deleted_at is null) as recount
       from participants p where p.conversation_id = $1 order by p.user_id`,
    [conversationId],
  );
  return rows;
}

export async function conversationRow(
  sql: pg.Client,
  conversationId: number,
): Promise<{ type: string; participant_count: number; last_message_id: number | null; newest_visible: number | null } | null> {
  const { rows } = await sql.query(
    `select c.type, c.participant_count, c.last_message_id::int as last_message_id,
            (select max(m.id)::int from messages m where m.conversation_id = c.id and m.deleted_at is null) as newest_visible
       from conversations c where c.id = $1`,
    [conversationId],
  );
  return rows[0] ?? null;
}

export async function ownersOf(sql: pg.Client, conversationId: number): Promise<number[]> {
  const { rows } = await sql.query(`select user_id::int as id from participants where conversation_id = $1 and role = 'owner' order by user_id`, [
    conversationId,
  ]);
  return rows.map((r) => r.id);
}

export async function isParticipant(sql: pg.Client, conversationId: number, userId: number): Promise<boolean> {
  const { rows } = await sql.query(`select 1 from participants where conversation_id = $1 and user_id = $2`, [conversationId, userId]);
  return rows.length > 0;
}

/** Rows anywhere that still belong to the conversation (it, its participants, its messages). */
export async function leftovers(sql: pg.Client, conversationId: number): Promise<{ conversations: number; participants: number; messages: number }> {
  const { rows } = await sql.query(
    `select (select count(*)::int from conversations where id = $1) as conversations,
            (select count(*)::int from participants where conversation_id = $1) as participants,
            (select count(*)::int from messages where conversation_id = $1) as messages`,
    [conversationId],
  );
  return rows[0];
}

// ---- The invariants ------------------------------------------------------------------------------------------

/**
 * Every way the conversation breaks the invariants, in the tables and through the API; [] when it keeps them.
 * A conversation that is gone must be gone entirely (no participants, no messages left).
 */
export async function violations(h: Harness, conversationId: number): Promise<string[]> {
  const found: string[] = [];
  const say = (what: string) => found.push(`conversation ${conversationId}: ${what}`);
  const conversation = await conversationRow(h.sql, conversationId);
  const participants = await participantRows(h.sql, conversationId);
  if (conversation === null) {
    const rest = await leftovers(h.sql, conversationId);
    if (rest.participants + rest.messages > 0) say(`is gone but left ${JSON.stringify(rest)}`);
    return found;
  }

  // The tables.
  if (conversation.participant_count !== participants.length) {
    say(`participant_count is ${conversation.participant_count}, but ${participants.length} participant rows`);
  }
  if (conversation.last_message_id !== conversation.newest_visible) {
    say(`last_message_id is ${conversation.last_message_id}, the newest message not deleted is ${conversation.newest_visible}`);
  }
  for (const p of participants) {
    if (p.unread_count !== p.recount) {
      say(`user ${p.user_id}: unread_count ${p.unread_count}, recount ${p.recount} (read up to ${p.last_read_message_id})`);
    }
  }
  const owners = participants.filter((p) => p.role === 'owner').map((p) => p.user_id);
  if (conversation.type === 'group' && participants.length > 0 && owners.length !== 1) {
    say(`has ${owners.length} owners [${owners.join(', ')}], not exactly one`);
  }
  if (conversation.type === 'direct' && participants.some((p) => p.role !== 'member')) say('a direct participant is not a member');

  // The API, as each participant sees it.
  for (const p of participants) {
    const seen = await h.app.request(p.user_id, 'GET', `/conversations/${conversationId}`);
    if (seen.status !== 200) {
      say(`GET /conversations/${conversationId} as participant ${p.user_id} → ${seen.status}`);
      continue;
    }
    const view = seen.body.data;
    const newest = await h.app.request(p.user_id, 'GET', `/conversations/${conversationId}/messages?limit=1`);
    const newestId = newest.body?.data?.[0]?.id ?? null;
    const where = `as user ${p.user_id} through the API`;
    if (view.unread_count !== p.recount) say(`${where}: unread_count ${view.unread_count}, recount ${p.recount}`);
    if (view.participant_count !== participants.length) say(`${where}: participant_count ${view.participant_count}, ${participants.length} participants`);
    if ((view.last_message?.id ?? null) !== newestId) say(`${where}: last_message ${view.last_message?.id ?? null}, newest in history ${newestId}`);
    if (conversation.type === 'group' && participants.length <= view.participants_preview.length) {
      const previewOwners = view.participants_preview.filter((x: any) => x.role === 'owner').length;
      if (previewOwners !== 1) say(`${where}: participants_preview shows ${previewOwners} owners`);
    }
  }
  return found;
}

/** Asserts the invariants for every conversation given, listing every violation at once. */
export async function assertInvariants(h: Harness, conversationIds: readonly number[], context = ''): Promise<void> {
  const found: string[] = [];
  for (const id of conversationIds) found.push(...(await violations(h, id)));
  assert.deepEqual(found, [], `the invariants hold${context ? ` (${context})` : ''}`);
}

// ---- Fixed-seed randomness -----------------------------------------------------------------------------------

/** mulberry32: a small, fast PRNG; the same seed gives the same sequence. */
export function prng(seed: number): { next(): number; int(n: number): number; pick<T>(items: readonly T[]): T; shuffle<T>(items: T[]): T[] } {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: (items) => items[int(items.length)]!,
    shuffle(items) {
      for (let i = items.length - 1; i > 0; i--) {
        const j = int(i + 1);
        [items[i], items[j]] = [items[j]!, items[i]!];
      }
      return items;
    },
  };
}

/** Trials per rule (CONCURRENCY_TRIALS=n overrides; `fallback` per rule): each race fails most trials of a broken version. */
export const trials = (fallback: number): number => Number(process.env.CONCURRENCY_TRIALS ?? fallback);
/** The seed of the random generators (CONCURRENCY_SEED=n overrides); printed by the tests that use it. */
export const SEED = Number(process.env.CONCURRENCY_SEED ?? 20261120);
