// GET /sync: every change a user could have seen live, after a cursor, as the events they would have received:
// exact event names and payloads, commit order, paging, membership spans, inbox entries as state, 410 and 422.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { assertError, direct, group, newUsers, register, send } from './helpers.js';

/** Every change after `since`, page by page; returns them and the last cursor. */
async function syncAll(app: TestApp, userId: number, since: string, limit?: number): Promise<{ changes: any[]; cursor: string; pages: number }> {
  const changes: any[] = [];
  let cursor = since;
  let pages = 0;
  for (;;) {
    const res = await app.request(userId, 'GET', `/sync?since=${encodeURIComponent(cursor)}${limit ? `&limit=${limit}` : ''}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body.data).sort(), ['changes', 'cursor', 'has_more']);
    changes.push(...res.body.data.changes);
    cursor = res.body.data.cursor;
    pages++;
    if (!res.body.data.has_more) return { changes, cursor, pages };
  }
}

async function cursorOf(app: TestApp, userId: number): Promise<string> {
  const res = await app.request(userId, 'GET', '/sync');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data.changes, []);
  assert.equal(res.body.data.has_more, false);
  return res.body.data.cursor;
}

const typesOf = (changes: any[]) => changes.map((c) => c.type);

for (const database of DATABASES) {
  describe(`sync (${database})`, () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ database });
    });
    after(async () => {
      await app?.close();
    });

    test('without since: no changes and the position now; syncing from it right away gives nothing', async () => {
      const [me] = newUsers(1);
      await register(app, me);
      const cursor = await cursorOf(app, me);
      assert.deepEqual((await syncAll(app, me, cursor)).changes, []);
    });

    test('a direct conversation: send, edit, react, delete come back in order with the payloads of the live events', async () => {
      const [alice, bob] = newUsers(2);
      const id = await direct(app, alice, bob);
      const inbox = await app.request(bob, 'GET', '/conversations');
      const since = inbox.body.meta.sync_cursor;

      const sent = await send(app, alice, id, 'first');
      const edited = await app.request(alice, 'PATCH', `/messages/${sent.id}`, { body: 'first, edited' });
      assert.equal(edited.status, 200);
      assert.equal((await app.request(bob, 'PUT', `/messages/${sent.id}/reactions/${encodeURIComponent('👍')}`)).status, 200);
      const second = await send(app, alice, id, 'second');
      assert.equal((await app.request(alice, 'DELETE', `/messages/${second.id}`)).status, 204);

      const { changes } = await syncAll(app, bob, since);
      assert.deepEqual(typesOf(changes).filter((t) => t !== 'InboxUpdated'), ['MessageSent', 'MessageUpdated', 'MessageReactionsUpdated', 'MessageSent', 'MessageDeleted']);
      for (const c of changes) {
        assert.deepEqual(Object.keys(c).sort(), ['at', 'conversation_id', 'data', 'type']);
        assert.equal(c.conversation_id, id);
      }
      const { edited_at: _e, ...sentPayload } = sent;
      assert.deepEqual(changes.find((c) => c.type === 'MessageSent').data, sentPayload, 'MessageSent carries the message as it was sent');
      assert.deepEqual(changes.find((c) => c.type === 'MessageUpdated').data, edited.body.data);
      assert.deepEqual(changes.find((c) => c.type === 'MessageDeleted').data, { id: second.id, conversation_id: id });
      const reactions = changes.find((c) => c.type === 'MessageReactionsUpdated').data;
      assert.equal(reactions.message_id, sent.id);
      assert.equal(reactions.reactions[0].emoji, '👍');

      // InboxUpdated is state: once per conversation in the page, the entry as it is now.
      const entries = changes.filter((c) => c.type === 'InboxUpdated');
      assert.equal(entries.length, 1);
      const now = (await app.request(bob, 'GET', `/conversations/${id}`)).body.data;
      assert.equal(entries[0].data.id, id);
      assert.equal(entries[0].data.last_message?.id, sent.id);
      assert.equal(entries[0].data.unread_count, now.unread_count);
      assert.equal(changes.at(-1).type, 'InboxUpdated', 'at the place of the last inbox change');
    });

    test('the sender syncs their own actions too (other tabs of the same user)', async () => {
      const [alice, bob] = newUsers(2);
      const id = await direct(app, alice, bob);
      const since = await cursorOf(app, alice);
      await send(app, alice, id, 'from tab one');
      const { changes } = await syncAll(app, alice, since);
      assert.equal(changes.find((c) => c.type === 'MessageSent').data.body, 'from tab one');
    });

    test('a removed member gets the group’s changes up to the removal and none after; a member added later none before', async () => {
      const [owner, bob, carol, dave] = newUsers(4);
      const id = await group(app, owner, [bob, carol]);
      const carolSince = await cursorOf(app, carol);
      const daveSince = (await register(app, dave), await cursorOf(app, dave));
      await send(app, owner, id, 'before');
      assert.equal((await app.request(owner, 'PATCH', `/groups/${id}/participants/${bob}`, { role: 'admin' })).status, 204);
      assert.equal((await app.request(owner, 'DELETE', `/groups/${id}/participants/${carol}`)).status, 204);
      await send(app, owner, id, 'after');
      assert.equal((await app.request(owner, 'POST', `/groups/${id}/participants`, { user_ids: [dave] })).status, 200);
      await send(app, owner, id, 'welcome');

      const carols = (await syncAll(app, carol, carolSince)).changes;
      assert.deepEqual(typesOf(carols).filter((t) => t !== 'InboxUpdated'), ['MessageSent', 'GroupParticipantsChanged', 'GroupParticipantsChanged', 'GroupMembershipRevoked']);
      assert.equal(carols.find((c) => c.type === 'MessageSent').data.body, 'before');
      assert.deepEqual(carols.filter((c) => c.type === 'GroupParticipantsChanged').map((c) => c.data.change_type), ['role_changed', 'removed']);
      assert.deepEqual(carols.at(-1).data, { conversation_id: id, user_id: carol, reason: 'removed' });
      assert.equal(carols.at(-1).conversation_id, id);
      assert.ok(!carols.some((c) => c.type === 'InboxUpdated'), 'no inbox entry of a conversation the user has left');

      const daves = (await syncAll(app, dave, daveSince)).changes;
      assert.deepEqual(typesOf(daves).filter((t) => t !== 'InboxUpdated'), ['GroupParticipantsChanged', 'MessageSent']);
      assert.deepEqual(daves[0].data.target_user_ids, [dave]);
      assert.equal(daves.find((c) => c.type === 'MessageSent').data.body, 'welcome');
      assert.ok(daves.some((c) => c.type === 'InboxUpdated' && c.data.id === id));
    });

    test('a deleted group: each member gets GroupMembershipRevoked (group_deleted) on their own feed', async () => {
      const [owner, bob] = newUsers(2);
      const id = await group(app, owner, [bob]);
      const since = await cursorOf(app, bob);
      assert.equal((await app.request(owner, 'DELETE', `/groups/${id}`)).status, 204);
      const { changes } = await syncAll(app, bob, since);
      assert.deepEqual(changes.map((c) => [c.type, c.data]), [['GroupMembershipRevoked', { conversation_id: id, user_id: bob, reason: 'group_deleted' }]]);
    });

    test('blocks: UserBlockChanged on both users’ feeds, conversation_id null', async () => {
      const [alice, bob] = newUsers(2);
      await register(app, alice, bob);
      const [aliceSince, bobSince] = [await cursorOf(app, alice), await cursorOf(app, bob)];
      assert.equal((await app.request(alice, 'POST', '/blocks', { user_id: bob })).status, 200);
      const mine = (await syncAll(app, alice, aliceSince)).changes;
      const theirs = (await syncAll(app, bob, bobSince)).changes;
      assert.deepEqual(mine.map((c) => [c.type, c.conversation_id, c.data.messaging_blocked_user_ids]), [['UserBlockChanged', null, [bob]]]);
      assert.deepEqual(theirs.map((c) => [c.type, c.conversation_id, c.data.messaging_blocked_user_ids]), [['UserBlockChanged', null, [alice]]]);
    });

    test('reads: ConversationRead on the conversation’s feed; typing is not kept', async () => {
      const [alice, bob] = newUsers(2);
      const id = await direct(app, alice, bob);
      await send(app, alice, id, 'hi');
      const since = await cursorOf(app, alice);
      assert.equal((await app.request(bob, 'POST', `/conversations/${id}/typing`, { is_typing: true })).status, 204);
      const read = await app.request(bob, 'POST', `/conversations/${id}/read`, {});
      assert.equal(read.status, 200);
      const { changes } = await syncAll(app, alice, since);
      assert.deepEqual(typesOf(changes), ['ConversationRead']);
      const { last_read_message_id: _l, ...payload } = read.body.data;
      assert.deepEqual(changes[0].data, payload);
    });

    test('paging: has_more until the end, each change exactly once, in order', async () => {
      const [alice, bob] = newUsers(2);
      const id = await direct(app, alice, bob);
      const since = await cursorOf(app, bob);
      const sent = [];
      for (let i = 0; i < 7; i++) sent.push((await send(app, alice, id, `m${i}`)).id);
      const paged = await syncAll(app, bob, since, 2);
      assert.ok(paged.pages >= 4, `${paged.pages} pages of 2`);
      assert.deepEqual(paged.changes.filter((c) => c.type === 'MessageSent').map((c) => c.data.id), sent);
      const whole = await syncAll(app, bob, since);
      assert.deepEqual(whole.changes.filter((c) => c.type === 'MessageSent').map((c) => c.data.id), sent);
      // From the last cursor: nothing more until something happens.
      assert.deepEqual((await syncAll(app, bob, paged.cursor)).changes, []);
      const later = await send(app, alice, id, 'later');
      assert.deepEqual((await syncAll(app, bob, paged.cursor)).changes.filter((c) => c.type === 'MessageSent').map((c) => c.data.id), [later.id]);
    });

    test('a cursor is a position, not a capability: another user’s cursor gives nothing of theirs', async () => {
      const [alice, bob, eve] = newUsers(3);
      const id = await direct(app, alice, bob);
      await register(app, eve);
      const bobs = await cursorOf(app, bob);
      await send(app, alice, id, 'private');
      const { changes } = await syncAll(app, eve, bobs);
      assert.deepEqual(changes, []);
    });

    test('limit outside 1..1000 and a malformed cursor are 422; no token is 401', async () => {
      const [me] = newUsers(1);
      await register(app, me);
      const cursor = await cursorOf(app, me);
      for (const limit of ['0', '1001', 'x']) assertError(await app.request(me, 'GET', `/sync?since=${cursor}&limit=${limit}`), 422);
      for (const since of ['nope', Buffer.from('[1,2]').toString('base64url'), Buffer.from('[1,-1,0,0]').toString('base64url'), Buffer.from('[1,1,1,1,"1:2:x"]').toString('base64url')]) {
        assertError(await app.request(me, 'GET', `/sync?since=${since}`), 422);
      }
      assertError(await app.request(null, 'GET', '/sync'), 401);
    });

    test('a cursor whose snapshot PostgreSQL would refuse is 422, and the syncs asked with it are answered', async () => {
      const [me, other] = newUsers(2);
      const id = await direct(app, me, other);
      const since = await cursorOf(app, other);
      await send(app, me, id, 'hello');
      const now = Date.now();
      const forged = ['0:5:', '5:3:', '3:5:2', '3:5:5', '3:9:7,4', '1:18446744073709551616:'].map((seen) =>
        Buffer.from(JSON.stringify([1, 1, 1, now, seen])).toString('base64url'),
      );
      // Asked together, as a reconnect storm's syncs are: they may share one read of the feed.
      const answers = await Promise.all([...forged.map((c) => app.request(me, 'GET', `/sync?since=${c}`)), app.request(other, 'GET', `/sync?since=${encodeURIComponent(since)}`)]);
      for (const res of answers.slice(0, -1)) assertError(res, 422);
      const good = answers.at(-1)!;
      assert.equal(good.status, 200);
      assert.ok(good.body.data.changes.some((c: any) => c.type === 'MessageSent' && c.conversation_id === id));
    });
  });
}

describe('sync retention', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ env: { CHAT_SYNC_RETENTION_S: '1' } });
  });
  after(async () => {
    await app?.close();
  });

  test('a cursor older than CHAT_SYNC_RETENTION_S is 410 cursor_expired; a fresh one works', async () => {
    const [me] = newUsers(1);
    await register(app, me);
    const old = (await app.request(me, 'GET', '/sync')).body.data.cursor;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    assertError(await app.request(me, 'GET', `/sync?since=${old}`), 410, 'cursor_expired');
    const fresh = (await app.request(me, 'GET', '/sync')).body.data.cursor;
    assert.equal((await app.request(me, 'GET', `/sync?since=${fresh}`)).status, 200);
  });
});
