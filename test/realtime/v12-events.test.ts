// The v1.2 events end to end (docs/events.md): real Laravel Echo clients over real WebSockets. A reply in a thread
// is ThreadReplySent then ThreadUpdated on chat.conversation.{id} (never MessageSent or InboxUpdated); a pin is
// MessagePinned there; a user's own state (ConversationStateChanged, MessageHidden) reaches their own channel
// only, so their other tabs follow and nobody else hears it. Each with exactly its keys.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../support/app.js';
import { EchoClients } from '../support/echo.js';

const keys = (payload: object): string[] => Object.keys(payload).sort();

describe('v1.2 events over Laravel Echo', () => {
  let app: TestApp;
  const clients = new EchoClients(() => app);
  let nextUserId = 7000;

  before(async () => {
    app = await startTestApp({ database: 'pglite' });
  });
  afterEach(async () => {
    const unknown = clients.unknownEvents();
    await clients.disconnectAll();
    assert.deepEqual(unknown, [], 'every event is broadcast under a known name');
  });
  after(async () => {
    await clients.disconnectAll();
    await app?.close();
  });

  async function users(count: number): Promise<number[]> {
    const ids = Array.from({ length: count }, () => nextUserId++);
    for (const id of ids) assert.equal((await app.request(id, 'GET', '/conversations')).status, 200);
    return ids;
  }
  async function group(owner: number, members: number[]): Promise<number> {
    const res = await app.request(owner, 'POST', '/groups', { name: 'Team', user_ids: members });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data.id as number;
  }
  async function send(userId: number, conversationId: number, body: Record<string, unknown>): Promise<any> {
    const res = await app.request(userId, 'POST', `/conversations/${conversationId}/messages`, body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.data;
  }

  test('a reply in a thread: ThreadReplySent then ThreadUpdated on the conversation channel, no MessageSent or InboxUpdated; ThreadRead', async () => {
    const [alice, bob] = await users(2);
    const id = await group(alice!, [bob!]);
    const root = await send(alice!, id, { body: 'root' });
    const a = await clients.listening(alice!, [id]);
    const reply = await send(bob!, id, { body: 'in the thread', thread_id: root.id });
    const sent = await a.waitFor('ThreadReplySent', (p) => p.message.id === reply.id);
    assert.equal(sent.channel, `chat.conversation.${id}`);
    assert.deepEqual(keys(sent.payload), ['conversation_id', 'message', 'thread_id']);
    assert.equal(sent.payload.message.thread_id, root.id);
    const updated = await a.waitFor('ThreadUpdated', (p) => p.thread_id === root.id);
    assert.deepEqual(keys(updated.payload), ['conversation_id', 'last_reply_at', 'participant_ids', 'reply_count', 'thread_id']);
    assert.equal(updated.payload.reply_count, 1);
    assert.equal(a.events('MessageSent').length, 0);
    assert.equal(a.events('InboxUpdated').length, 0);
    assert.equal((await app.request(alice!, 'POST', `/messages/${root.id}/thread/read`)).status, 200);
    const read = await a.waitFor('ThreadRead', (p) => p.thread_id === root.id);
    assert.deepEqual(keys(read.payload), ['conversation_id', 'read_at', 'thread_id', 'user_id']);
  });

  test('replies in a thread (plain, quoting, mentioning): /sync carries exactly the payloads heard live, in order', async () => {
    const [alice, bob, carol] = await users(3);
    const id = await group(alice!, [bob!, carol!]);
    const root = await send(alice!, id, { body: 'root' });
    const since = (await app.request(alice!, 'GET', '/sync')).body.data.cursor;
    const a = await clients.listening(alice!, [id]);
    await send(bob!, id, { body: 'plain', thread_id: root.id });
    await send(carol!, id, { body: 'quoting', thread_id: root.id, reply_to_id: root.id });
    const last = await send(bob!, id, { body: 'for carol', thread_id: root.id, mentioned_user_ids: [carol] });
    await a.waitFor('ThreadUpdated', (p) => p.reply_count === 3);
    const live = a.received.filter((e) => e.event === 'ThreadReplySent' || e.event === 'ThreadUpdated').map((e) => ({ type: e.event, data: e.payload }));
    const changes = (await app.request(alice!, 'GET', `/sync?since=${encodeURIComponent(since)}`)).body.data.changes;
    assert.deepEqual(changes.map((c: any) => ({ type: c.type, data: c.data })), live);
    assert.deepEqual(live.at(-1)!.data, {
      conversation_id: id, thread_id: root.id, reply_count: 3, last_reply_at: last.created_at, participant_ids: [alice, bob, carol].sort((x, y) => x! - y!),
    });
  });

  test('a pin: MessagePinned on the conversation channel', async () => {
    const [alice, bob] = await users(2);
    const id = await group(alice!, [bob!]);
    const message = await send(bob!, id, { body: 'pin me' });
    const b = await clients.listening(bob!, [id]);
    assert.equal((await app.request(alice!, 'PUT', `/messages/${message.id}/pin`)).status, 200);
    const pinned = await b.waitFor('MessagePinned', (p) => p.message_id === message.id);
    assert.equal(pinned.channel, `chat.conversation.${id}`);
    assert.deepEqual(keys(pinned.payload), ['conversation_id', 'message_id', 'pinned', 'pinned_at', 'pinned_by']);
    assert.equal(pinned.payload.pinned_by, alice);
  });

  test('own state: ConversationStateChanged and MessageHidden on the user’s own channel, heard by their other tab, not by others', async () => {
    const [alice, bob] = await users(2);
    const id = await group(alice!, [bob!]);
    const message = await send(bob!, id, { body: 'x' });
    const tab1 = await clients.listening(alice!, [id]);
    const tab2 = await clients.listening(alice!, [id]);
    const other = await clients.listening(bob!, [id]);
    assert.equal((await app.request(alice!, 'PUT', `/conversations/${id}/archive`)).status, 200);
    assert.equal((await app.request(alice!, 'DELETE', `/messages/${message.id}?for=me`)).status, 204);
    for (const tab of [tab1, tab2]) {
      const state = await tab.waitFor('ConversationStateChanged', (p) => p.conversation_id === id && p.archived_at !== null);
      assert.equal(state.channel, `chat.user.${alice}`);
      assert.deepEqual(keys(state.payload), ['archived_at', 'cleared_at', 'conversation_id', 'muted', 'muted_until', 'pinned_at']);
      const hidden = await tab.waitFor('MessageHidden', (p) => p.message_id === message.id);
      assert.equal(hidden.channel, `chat.user.${alice}`);
      assert.deepEqual(hidden.payload, { conversation_id: id, message_id: message.id });
    }
    // Bob heard neither (a later event of his own proves his socket was live).
    await send(alice!, id, { body: 'still here' });
    await other.waitFor('MessageSent', (p) => p.body === 'still here');
    assert.equal(other.events('ConversationStateChanged').length, 0);
    assert.equal(other.events('MessageHidden').length, 0);
  });

  test('InboxUpdated carries the last message as each receiver sees it: none after a clear, the one before after hiding it; /sync too', async () => {
    const [alice, bob, carol] = await users(3);
    const id = await group(alice!, [bob!, carol!]);
    const older = await send(alice!, id, { body: 'older' });
    const newest = await send(alice!, id, { body: 'newest' });
    assert.equal((await app.request(bob!, 'POST', `/conversations/${id}/clear`)).status, 200);
    assert.equal((await app.request(carol!, 'DELETE', `/messages/${newest.id}?for=me`)).status, 204);
    const since = { bob: await cursorOf(bob!), carol: await cursorOf(carol!) };
    const [b, c, a] = [await clients.listening(bob!, []), await clients.listening(carol!, []), await clients.listening(alice!, [])];
    // An edit of the last message tells every participant's inbox.
    assert.equal((await app.request(alice!, 'PATCH', `/messages/${newest.id}`, { body: 'newest, edited' })).status, 200);
    const lastOf = async (tab: typeof a) => (await tab.waitFor('InboxUpdated', (p) => p.id === id)).payload.last_message;
    assert.equal(await lastOf(b), null, 'bob cleared the history');
    assert.equal((await lastOf(c))?.id, older.id, 'carol hid the newest message');
    assert.equal((await lastOf(a))?.body, 'newest, edited');
    for (const [user, cursor, expected] of [[bob!, since.bob, null], [carol!, since.carol, older.id]] as const) {
      const changes = (await app.request(user, 'GET', `/sync?since=${encodeURIComponent(cursor)}`)).body.data.changes;
      const entry = changes.find((ch: any) => ch.type === 'InboxUpdated' && ch.conversation_id === id);
      assert.equal(entry?.data.last_message?.id ?? null, expected, `user ${user}'s synced entry`);
    }
  });

  async function cursorOf(userId: number): Promise<string> {
    return (await app.request(userId, 'GET', '/sync')).body.data.cursor;
  }
});
