// Replay: a state loaded at a cursor, plus the changes GET /sync gives after it, applied the way a client applies
// live events, equals a fresh load. A seeded random mix of every operation (sends with replies and mentions,
// forwards, edits, deletes, reactions, reads, group creation, renames, members added and removed, roles, leaving,
// blocks) by four users, checked from two of them, on PGlite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { prng } from '../concurrency/invariants.js';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { newUsers, register } from './helpers.js';

const SEED = Number(process.env.REPLAY_SEED ?? 20261126);
// A client loads a conversation's history when it shows it: one it joined after the cursor is loaded then
// (the feed holds what happened while the user was in it, and newcomers see the history from before).
const OPERATIONS = 80;

/** What a client keeps, in the fields a fresh load and the events both carry. */
interface State {
  conversations: Map<number, any>;
  messages: Map<number, Map<number, any>>;
  reads: Map<number, Map<number, string | null>>;
  blocked: number[];
}

const conversationFields = (c: any) => ({
  id: c.id,
  type: c.type,
  name: c.name,
  avatar_url: c.avatar_url,
  participant_count: c.participant_count,
  participants_preview: c.participants_preview,
  last_message: c.last_message && { id: c.last_message.id, body: c.last_message.body },
  unread_count: c.unread_count,
  last_read_at: c.last_read_at,
});

const messageFields = (m: any) => ({
  id: m.id,
  body: m.body,
  sender: m.sender.id,
  edited_at: m.edited_at ?? null,
  reply_to: m.reply_to && { id: m.reply_to.id, body: m.reply_to.body, deleted: m.reply_to.deleted },
  forwarded_from: m.forwarded_from && m.forwarded_from.message_id,
  reactions: m.reactions ?? [],
});

async function freshLoad(app: TestApp, user: number): Promise<{ state: State; cursor: string }> {
  const inbox = await app.request(user, 'GET', '/conversations?limit=100');
  assert.equal(inbox.status, 200);
  const state: State = { conversations: new Map(), messages: new Map(), reads: new Map(), blocked: [] };
  for (const c of inbox.body.data) {
    state.conversations.set(c.id, conversationFields(c));
    const history = await app.request(user, 'GET', `/conversations/${c.id}/messages?limit=100`);
    state.messages.set(c.id, new Map(history.body.data.map((m: any) => [m.id, messageFields(m)])));
    const reads = await app.request(user, 'GET', `/conversations/${c.id}/reads?limit=100`);
    state.reads.set(c.id, new Map(reads.body.data.filter((r: any) => r.last_read_at !== null).map((r: any) => [r.user_id, r.last_read_at])));
  }
  state.blocked = (await app.request(user, 'GET', '/blocks')).body.messaging_blocked_user_ids;
  return { state, cursor: inbox.body.meta.sync_cursor };
}

/** Applies one change as a client applies the live event. */
function apply(state: State, change: { type: string; conversation_id: number | null; data: any }): void {
  const { data } = change;
  const id = change.conversation_id!;
  // Messages of a conversation whose history is not loaded (joined after the cursor) are not kept.
  const messages = () => state.messages.get(id) ?? new Map<number, any>();
  switch (change.type) {
    case 'InboxUpdated':
      state.conversations.set(data.id, conversationFields(data));
      return;
    case 'GroupMembershipRevoked':
      state.conversations.delete(id);
      state.messages.delete(id);
      state.reads.delete(id);
      return;
    case 'UserBlockChanged':
      state.blocked = data.messaging_blocked_user_ids;
      return;
    case 'MessageSent':
      messages().set(data.id, messageFields({ ...data, edited_at: null, reactions: [] }));
      return;
    case 'MessageUpdated': {
      const known = messages().get(data.id);
      messages().set(data.id, { ...messageFields(data), reactions: known?.reactions ?? [] });
      // Quotes of it follow.
      for (const m of messages().values()) if (m.reply_to?.id === data.id) m.reply_to = { ...m.reply_to, body: data.body };
      return;
    }
    case 'MessageDeleted':
      messages().delete(data.id);
      for (const m of messages().values()) if (m.reply_to?.id === data.id) m.reply_to = { ...m.reply_to, body: null, deleted: true };
      return;
    case 'MessageReactionsUpdated': {
      const m = messages().get(data.message_id);
      if (m) m.reactions = data.reactions;
      return;
    }
    case 'ConversationRead':
      state.reads.get(id)?.set(data.user_id, data.read_at);
      return;
    case 'GroupParticipantsChanged': {
      const c = state.conversations.get(id);
      if (c) Object.assign(c, { participant_count: data.participant_count, participants_preview: data.participants_preview });
      return;
    }
    default:
      assert.fail(`a change of an unexpected type: ${change.type}`);
  }
}

const plain = (state: State) => ({
  conversations: Object.fromEntries([...state.conversations].sort(([a], [b]) => a - b)),
  messages: Object.fromEntries([...state.messages].sort(([a], [b]) => a - b).map(([id, m]) => [id, [...m.values()].sort((a, b) => a.id - b.id)])),
  reads: Object.fromEntries([...state.reads].sort(([a], [b]) => a - b).map(([id, r]) => [id, Object.fromEntries([...r].sort(([a], [b]) => a - b))])),
  blocked: [...state.blocked].sort((a, b) => a - b),
});

for (const database of DATABASES) {
  describe(`sync replay (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database, env: { CHAT_RATE_SENDS_PER_MINUTE: '0', CHAT_RATE_OTHER_WRITES_PER_MINUTE: '0', CHAT_RATE_EDITS_PER_MINUTE: '0' } });
    });
    after(async () => {
      await app?.close();
    });

    test('a state loaded at a cursor plus the changes since equals a fresh load, for a seeded random mix of every operation', async () => {
      const users = newUsers(4);
      const [a, b, c] = users;
      await register(app, ...users);
      const r = prng(SEED);
      // Some history before the cursor.
      const direct = (await app.request(a, 'POST', '/conversations', { user_id: b })).body.data.id;
      const team = (await app.request(a, 'POST', '/groups', { name: 'Team', user_ids: [b, c] })).body.data.id;
      await app.request(b, 'POST', `/conversations/${direct}/messages`, { body: 'before the cursor' });
      await app.request(c, 'POST', `/conversations/${team}/messages`, { body: 'hello team' });

      const observers = [a, b];
      const loaded = new Map<number, { state: State; cursor: string }>();
      for (const o of observers) loaded.set(o, await freshLoad(app, o));

      const sentIn = new Map<number, number[]>();
      const conversationsOf = async (u: number): Promise<any[]> => (await app.request(u, 'GET', '/conversations?limit=100')).body.data;
      const log: string[] = [];
      for (let i = 0; i < OPERATIONS; i++) {
        const actor = r.pick(users);
        const mine = await conversationsOf(actor);
        const conv = mine.length > 0 ? r.pick(mine) : null;
        const known = conv ? (sentIn.get(conv.id) ?? []) : [];
        const target = known.length > 0 ? r.pick(known) : null;
        const other = r.pick(users.filter((u) => u !== actor));
        const op = r.int(15);
        let res: { status: number; body: any } | null = null;
        if (op <= 3 && conv) {
          const body: any = { body: `m${i} from ${actor}` };
          if (target && r.int(3) === 0) body.reply_to_id = target;
          res = await app.request(actor, 'POST', `/conversations/${conv.id}/messages`, body);
          if (res.status === 201) sentIn.set(conv.id, [...known, res.body.data.id]);
        } else if (op === 4 && target) res = await app.request(actor, 'PATCH', `/messages/${target}`, { body: `edited ${i}` });
        else if (op === 5 && target) res = await app.request(actor, 'DELETE', `/messages/${target}`);
        else if (op === 6 && target) res = await app.request(actor, r.int(3) === 0 ? 'DELETE' : 'PUT', `/messages/${target}/reactions/${encodeURIComponent(r.pick(['👍', '🎉', 'heart']))}`);
        else if (op === 7 && conv) res = await app.request(actor, 'POST', `/conversations/${conv.id}/read`, {});
        else if (op === 8 && target && conv) {
          const targets = mine.filter((x) => x.id !== conv.id).slice(0, 2).map((x) => x.id);
          if (targets.length > 0) {
            res = await app.request(actor, 'POST', `/messages/${target}/forward`, { conversation_ids: targets });
            if (res.status === 201 || res.status === 200) for (const [k, m] of (res.body.data as any[]).entries()) sentIn.set(targets[k]!, [...(sentIn.get(targets[k]!) ?? []), m.id]);
          }
        } else if (op === 9) res = await app.request(actor, 'POST', '/groups', { name: `G${i}`, user_ids: r.shuffle(users.filter((u) => u !== actor)).slice(0, 1 + r.int(3)) });
        else if (op === 10 && conv?.type === 'group') res = await app.request(actor, 'POST', `/groups/${conv.id}/participants`, { user_ids: [other] });
        else if (op === 11 && conv?.type === 'group') res = await app.request(actor, 'DELETE', `/groups/${conv.id}/participants/${other}`);
        else if (op === 12 && conv?.type === 'group') res = await app.request(actor, 'PATCH', `/groups/${conv.id}/participants/${other}`, { role: r.pick(['admin', 'member']) });
        else if (op === 13 && conv?.type === 'group') res = await app.request(actor, r.int(4) === 0 ? 'POST' : 'PATCH', r.int(4) === 0 ? `/groups/${conv.id}/leave` : `/groups/${conv.id}`, { name: `Renamed ${i}` });
        else if (op === 14) {
          const blocks = (await app.request(actor, 'GET', '/blocks')).body.data.map((u: any) => u.id);
          res = blocks.includes(other) ? await app.request(actor, 'DELETE', `/blocks/${other}`) : await app.request(actor, 'POST', '/blocks', { user_id: other });
        } else if (!conv) res = await app.request(actor, 'POST', '/conversations', { user_id: other });
        if (res) {
          assert.ok(res.status < 500, `operation ${i}: ${res.status} ${JSON.stringify(res.body)}`);
          log.push(`${i}: op ${op} by ${actor} → ${res.status}`);
        }
      }

      for (const o of observers) {
        const { state, cursor } = loaded.get(o)!;
        let since = cursor;
        for (;;) {
          const page = await app.request(o, 'GET', `/sync?since=${since}&limit=1000`);
          assert.equal(page.status, 200, JSON.stringify(page.body));
          for (const change of page.body.data.changes) apply(state, change);
          since = page.body.data.cursor;
          if (!page.body.data.has_more) break;
        }
        const fresh = await freshLoad(app, o);
        // A conversation the user joined after the cursor: a client loads its history when it shows it, as the
        // feed holds only what happened while they were in it.
        for (const id of fresh.state.messages.keys()) {
          if (!state.messages.has(id)) {
            state.messages.set(id, fresh.state.messages.get(id)!);
            state.reads.set(id, fresh.state.reads.get(id)!);
          }
        }
        assert.deepEqual(plain(state), plain(fresh.state), `user ${o}: replayed = fresh load (seed ${SEED})\n${log.join('\n')}`);
      }
    });
  });
}
