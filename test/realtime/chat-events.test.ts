// The ten real-time events of v1 (docs/events.md), end to end: a real Parley (HTTP + built-in Pusher sockets, real database),
// real Laravel Echo clients over real WebSockets, channels authorized by the real /broadcasting/auth endpoint.
// Each rule is proven by the API operation that fires it, by who hears it (and who does not), and by the exact key
// set of its payload.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { EchoClients } from '../support/echo.js';

const keys = (payload: object): string[] => Object.keys(payload).sort();

// v1's payload keys, exactly (docs/events.md).
const MESSAGE_SENT_KEYS = ['id', 'conversation_id', 'body', 'attachment', 'sender', 'reply_to', 'forwarded_from', 'created_at'].sort();
const MESSAGE_UPDATED_KEYS = [...MESSAGE_SENT_KEYS, 'edited_at'].sort();
const MESSAGE_DELETED_KEYS = ['id', 'conversation_id'].sort();
const CONVERSATION_READ_KEYS = ['conversation_id', 'user_id', 'read_at'].sort();
const USER_TYPING_KEYS = ['conversation_id', 'user_id', 'is_typing'].sort();
const PARTICIPANTS_CHANGED_KEYS = ['conversation_id', 'change_type', 'actor_user_id', 'target_user_ids', 'participant_count', 'participants_preview'].sort();
const PRESENCE_KEYS = ['user_id', 'is_online'].sort();
const BLOCK_KEYS = ['blocker_id', 'blocked_user_id', 'blocked', 'messaging_blocked_user_ids'].sort();
const REVOKED_KEYS = ['conversation_id', 'user_id', 'reason'].sort();
// The ConversationResource of docs/api.md (as events carry it) and ParticipantResource.
const CONVERSATION_KEYS = [
  'id', 'type', 'name', 'avatar_url', 'participant_count', 'participants_preview', 'last_message', 'unread_count', 'last_read_at', 'created_at', 'updated_at',
].sort();
const PARTICIPANT_KEYS = ['id', 'name', 'avatar_url', 'role'].sort();

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** MessageSent carries the MessageResource without edited_at. */
function withoutEditedAt(message: Record<string, any>): Record<string, any> {
  const { edited_at: _editedAt, ...rest } = message;
  return rest;
}

for (const database of DATABASES) {
  describe(`real-time chat events over Laravel Echo (${database})`, () => {
    let app: TestApp;
    const clients = new EchoClients(() => app);
    let nextUserId = 1000;

    before(async () => {
      app = await startTestApp({
        database,
        env: { CHAT_TYPING_TIMEOUT_MS: '300', CHAT_PRESENCE_TIMEOUT_MS: '500', CHAT_PRESENCE_SWEEP_MS: '100' },
      });
    });

    afterEach(async () => {
      const unknown = clients.unknownEvents();
      await clients.disconnectAll();
      assert.deepEqual(unknown, [], 'every event is broadcast under one of the names docs/events.md lists');
    });

    after(async () => {
      await clients.disconnectAll();
      await app?.close();
    });

    // -------------------------------------------------------------------------------------------
    // Setup through the HTTP API, as a client app would do it

    /** Fresh users (a first authenticated request creates each). */
    async function users(count: number): Promise<number[]> {
      const ids = Array.from({ length: count }, () => nextUserId++);
      for (const id of ids) assert.equal((await app.request(id, 'GET', '/conversations')).status, 200);
      return ids;
    }

    async function direct(a: number, b: number): Promise<number> {
      const res = await app.request(a, 'POST', '/conversations', { user_id: b });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.id as number;
    }

    async function group(owner: number, members: number[], name = 'Team'): Promise<number> {
      const res = await app.request(owner, 'POST', '/groups', { name, user_ids: members });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.id as number;
    }

    async function send(userId: number, conversationId: number, body: Record<string, unknown>, headers?: Record<string, string>) {
      const res = await app.request(userId, 'POST', `/conversations/${conversationId}/messages`, body, headers);
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data as Record<string, any>;
    }

    async function ok(userId: number, method: string, path: string, body?: unknown, status = 200) {
      const res = await app.request(userId, method, path, body);
      assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
      return res.body;
    }

    // -------------------------------------------------------------------------------------------

    describe('MessageSent', () => {
      test('sending a message delivers MessageSent on chat.conversation.{id} to every participant with exactly v1’s keys', async () => {
        const [alice, bob] = await users(2);
        const conversationId = await direct(alice, bob);
        const a = await clients.listening(alice, [conversationId]);
        const b = await clients.listening(bob, [conversationId]);

        const first = await send(alice, conversationId, { body: 'hello' });
        const reply = await send(bob, conversationId, { body: 'hi back', reply_to_id: first.id });

        for (const client of [a, b]) {
          const { channel, payload } = await client.waitFor('MessageSent', (p) => p.id === reply.id);
          assert.equal(channel, `chat.conversation.${conversationId}`);
          assert.deepEqual(keys(payload), MESSAGE_SENT_KEYS);
          assert.deepEqual(payload, withoutEditedAt(reply));
          assert.equal(payload.conversation_id, conversationId);
          assert.equal(payload.body, 'hi back');
          assert.deepEqual(payload.sender, { id: bob, name: `User ${bob}`, avatar_url: null });
          assert.equal(payload.reply_to.id, first.id);
          assert.equal(payload.forwarded_from, null);
          assert.equal(payload.attachment, null);
          assert.match(payload.created_at, ISO_UTC);
        }
      });

      test('forwarding a message delivers MessageSent on each target conversation, naming its origin in forwarded_from', async () => {
        const [alice, bob, carol, dave] = await users(4);
        const source = await direct(alice, bob);
        const toCarol = await direct(alice, carol);
        const toDave = await direct(alice, dave);
        const c = await clients.listening(carol, [toCarol]);
        const d = await clients.listening(dave, [toDave]);
        const original = await send(alice, source, { body: 'pass it on' });

        const res = await app.request(alice, 'POST', `/messages/${original.id}/forward`, { conversation_ids: [toCarol, toDave] });
        assert.equal(res.status, 201, JSON.stringify(res.body));

        for (const [client, conversationId] of [[c, toCarol], [d, toDave]] as const) {
          const { channel, payload } = await client.waitFor('MessageSent', (p) => p.conversation_id === conversationId);
          assert.equal(channel, `chat.conversation.${conversationId}`);
          assert.deepEqual(keys(payload), MESSAGE_SENT_KEYS);
          assert.equal(payload.body, 'pass it on');
          assert.deepEqual(payload.forwarded_from, { message_id: original.id, conversation_id: source, sender: original.sender });
        }
      });
    });

    describe('MessageUpdated', () => {
      test('editing a message delivers MessageUpdated with the new body and edited_at, and InboxUpdated when it is the last message', async () => {
        const [alice, bob] = await users(2);
        const conversationId = await direct(alice, bob);
        const a = await clients.listening(alice, [conversationId]);
        const b = await clients.listening(bob, [conversationId]);
        const older = await send(alice, conversationId, { body: 'frist' });
        const last = await send(alice, conversationId, { body: 'secnod' });

        const edited = (await ok(alice, 'PATCH', `/messages/${last.id}`, { body: 'second' })).data;
        for (const client of [a, b]) {
          const { channel, payload } = await client.waitFor('MessageUpdated', (p) => p.id === last.id);
          assert.equal(channel, `chat.conversation.${conversationId}`);
          assert.deepEqual(keys(payload), MESSAGE_UPDATED_KEYS);
          assert.equal(payload.body, 'second');
          assert.match(payload.edited_at, ISO_UTC);
          assert.deepEqual(payload, edited);
          const inbox = await client.waitFor('InboxUpdated', (p) => p.id === conversationId && p.last_message?.body === 'second');
          assert.equal(inbox.channel, `chat.user.${client.userId}`);
        }

        // Not the last message: the conversation hears MessageUpdated, the inboxes are left alone.
        a.clear();
        b.clear();
        await ok(alice, 'PATCH', `/messages/${older.id}`, { body: 'first' });
        for (const client of [a, b]) {
          const { payload } = await client.waitFor('MessageUpdated', (p) => p.id === older.id);
          assert.deepEqual(keys(payload), MESSAGE_UPDATED_KEYS);
          assert.equal(payload.body, 'first');
        }
        await b.expectNone('InboxUpdated');
        assert.deepEqual(a.payloads('InboxUpdated'), []);
      });
    });

    describe('MessageDeleted', () => {
      test('deleting a message delivers MessageDeleted {id, conversation_id} and InboxUpdated to every participant', async () => {
        const [alice, bob] = await users(2);
        const conversationId = await direct(alice, bob);
        const a = await clients.listening(alice, [conversationId]);
        const b = await clients.listening(bob, [conversationId]);
        const kept = await send(alice, conversationId, { body: 'stays' });
        const doomed = await send(alice, conversationId, { body: 'oops' });

        await ok(alice, 'DELETE', `/messages/${doomed.id}`, undefined, 204);
        for (const client of [a, b]) {
          const { channel, payload } = await client.waitFor('MessageDeleted', (p) => p.id === doomed.id);
          assert.equal(channel, `chat.conversation.${conversationId}`);
          assert.deepEqual(keys(payload), MESSAGE_DELETED_KEYS);
          assert.deepEqual(payload, { id: doomed.id, conversation_id: conversationId });
          // The inbox falls back to the newest message still there.
          const inbox = await client.waitFor('InboxUpdated', (p) => p.id === conversationId && p.last_message?.id === kept.id);
          assert.deepEqual(keys(inbox.payload), CONVERSATION_KEYS);
        }
        const [bobsView] = b.payloads('InboxUpdated', (p) => p.last_message?.id === kept.id);
        assert.equal(bobsView.unread_count, 1, 'the deleted message no longer counts as unread');
      });
    });

    describe('ConversationRead', () => {
      test('marking read delivers ConversationRead {conversation_id, user_id, read_at} to every participant and InboxUpdated only to the reader', async () => {
        const [alice, bob] = await users(2);
        const conversationId = await direct(alice, bob);
        await send(alice, conversationId, { body: 'one' });
        await send(alice, conversationId, { body: 'two' });
        const a = await clients.listening(alice, [conversationId]);
        const b = await clients.listening(bob, [conversationId]);

        const read = (await ok(bob, 'POST', `/conversations/${conversationId}/read`, {})).data;
        for (const client of [a, b]) {
          const { channel, payload } = await client.waitFor('ConversationRead', (p) => p.user_id === bob);
          assert.equal(channel, `chat.conversation.${conversationId}`);
          assert.deepEqual(keys(payload), CONVERSATION_READ_KEYS);
          assert.deepEqual(payload, { conversation_id: conversationId, user_id: bob, read_at: read.read_at });
          assert.match(payload.read_at, ISO_UTC);
        }
        const { payload: inbox } = await b.waitFor('InboxUpdated', (p) => p.id === conversationId);
        assert.deepEqual(keys(inbox), CONVERSATION_KEYS);
        assert.equal(inbox.unread_count, 0);
        assert.equal(inbox.last_read_at, read.read_at);
        await a.expectNone('InboxUpdated');
      });
    });

    describe('UserTyping', () => {
      test('a typing start delivers UserTyping true, then the server’s own false once the timeout passes unrenewed', async () => {
        const [alice, bob] = await users(2);
        const conversationId = await direct(alice, bob);
        const b = await clients.listening(bob, [conversationId]);

        await ok(alice, 'POST', `/conversations/${conversationId}/typing`, { is_typing: true }, 204);
        const started = await b.waitFor('UserTyping', (p) => p.is_typing === true);
        assert.equal(started.channel, `chat.conversation.${conversationId}`);
        assert.deepEqual(keys(started.payload), USER_TYPING_KEYS);
        assert.deepEqual(started.payload, { conversation_id: conversationId, user_id: alice, is_typing: true });

        // Nobody asks to stop: the server says it (CHAT_TYPING_TIMEOUT_MS=300 here).
        const stopped = await b.waitFor('UserTyping', (p) => p.is_typing === false);
        assert.deepEqual(keys(stopped.payload), USER_TYPING_KEYS);
        assert.deepEqual(stopped.payload, { conversation_id: conversationId, user_id: alice, is_typing: false });
        assert.equal(b.payloads('UserTyping').length, 2);
      });

      test('an explicit typing stop delivers UserTyping false and cancels the server’s expiry', async () => {
        const [alice, bob] = await users(2);
        const conversationId = await direct(alice, bob);
        const b = await clients.listening(bob, [conversationId]);

        await ok(alice, 'POST', `/conversations/${conversationId}/typing`, { is_typing: true }, 204);
        await ok(alice, 'POST', `/conversations/${conversationId}/typing`, { is_typing: false }, 204);
        await b.waitFor('UserTyping', (p) => p.is_typing === false);
        await new Promise((resolve) => setTimeout(resolve, 500)); // past the 300 ms timeout
        assert.deepEqual(
          b.payloads('UserTyping').map((p) => p.is_typing),
          [true, false],
        );
      });
    });

    describe('InboxUpdated (ConversationInboxUpdated)', () => {
      test('a message delivers InboxUpdated on each participant’s own chat.user.{id}, with that participant’s own ConversationResource and unread_count', async () => {
        const [alice, bob, carol, outsider] = await users(4);
        const groupId = await group(alice, [bob, carol]);
        await send(alice, groupId, { body: 'one' });
        await ok(bob, 'POST', `/conversations/${groupId}/read`, {});
        const a = await clients.listening(alice);
        const b = await clients.listening(bob);
        const c = await clients.listening(carol);
        const o = await clients.listening(outsider);

        const message = await send(alice, groupId, { body: 'two' });
        const expectedUnread = new Map([[alice, 0], [bob, 1], [carol, 2]]);
        for (const client of [a, b, c]) {
          const { channel, payload } = await client.waitFor('InboxUpdated', (p) => p.id === groupId && p.last_message?.id === message.id);
          assert.equal(channel, `chat.user.${client.userId}`);
          assert.deepEqual(keys(payload), CONVERSATION_KEYS);
          assert.equal(payload.unread_count, expectedUnread.get(client.userId), `unread_count of user ${client.userId}`);
          assert.equal(payload.type, 'group');
          assert.equal(payload.name, 'Team');
          assert.equal(payload.participant_count, 3);
          assert.deepEqual(payload.last_message, message);
          for (const participant of payload.participants_preview) assert.deepEqual(keys(participant), PARTICIPANT_KEYS);
          // Each user's own read position: only bob has read.
          assert.equal(payload.last_read_at === null, client.userId !== bob);
        }
        await o.expectNone('InboxUpdated');
      });

      test('opening a direct conversation delivers InboxUpdated to both users when it is created, and nothing when it is found', async () => {
        const [alice, bob] = await users(2);
        const a = await clients.listening(alice);
        const b = await clients.listening(bob);

        const conversationId = await direct(alice, bob);
        for (const client of [a, b]) {
          const { payload } = await client.waitFor('InboxUpdated', (p) => p.id === conversationId);
          assert.deepEqual(keys(payload), CONVERSATION_KEYS);
          assert.equal(payload.type, 'direct');
          assert.equal(payload.last_message, null);
          assert.deepEqual(payload.participants_preview.map((p: { id: number }) => p.id).sort(), [alice, bob].sort());
        }

        a.clear();
        b.clear();
        assert.equal((await app.request(bob, 'POST', '/conversations', { user_id: alice })).status, 200);
        await b.expectNone('InboxUpdated');
        assert.deepEqual(a.payloads('InboxUpdated'), []);
      });

      test('renaming a group delivers InboxUpdated with the new name to every participant', async () => {
        const [alice, bob] = await users(2);
        const groupId = await group(alice, [bob], 'Old name');
        const a = await clients.listening(alice);
        const b = await clients.listening(bob);

        await ok(alice, 'PATCH', `/groups/${groupId}`, { name: 'New name' });
        for (const client of [a, b]) {
          const { payload } = await client.waitFor('InboxUpdated', (p) => p.id === groupId);
          assert.deepEqual(keys(payload), CONVERSATION_KEYS);
          assert.equal(payload.name, 'New name');
        }
      });
    });

    describe('UserPresenceChanged', () => {
      test('heartbeat and offline signal deliver {user_id, is_online} to users sharing a conversation, on transitions only, and not to a user sharing none', async () => {
        const [alice, bob, stranger] = await users(3);
        await direct(alice, bob);
        const b = await clients.listening(bob);
        const s = await clients.listening(stranger);

        await ok(alice, 'POST', '/presence/heartbeat');
        const online = await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === true);
        assert.equal(online.channel, `chat.user.${bob}`);
        assert.deepEqual(keys(online.payload), PRESENCE_KEYS);
        assert.deepEqual(online.payload, { user_id: alice, is_online: true });

        // A second beat while online is no transition; right after it, the offline signal is one.
        await ok(alice, 'POST', '/presence/heartbeat');
        await ok(alice, 'POST', '/presence/offline');
        const offline = await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === false);
        assert.deepEqual(keys(offline.payload), PRESENCE_KEYS);
        assert.deepEqual(offline.payload, { user_id: alice, is_online: false });
        // Frames on one socket arrive in order: had the second beat dispatched, it would be here already.
        assert.deepEqual(b.payloads('UserPresenceChanged'), [
          { user_id: alice, is_online: true },
          { user_id: alice, is_online: false },
        ]);

        await s.expectNone('UserPresenceChanged');
      });

      test('a user whose heartbeats stop is announced offline by the server after the presence timeout', async () => {
        const [alice, bob] = await users(2);
        await group(bob, [alice]);
        const b = await clients.listening(bob);

        await ok(alice, 'POST', '/presence/heartbeat');
        await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === true);
        // CHAT_PRESENCE_TIMEOUT_MS=500, swept every 100 ms.
        const { payload } = await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === false, 5000);
        assert.deepEqual(payload, { user_id: alice, is_online: false });
        const presence = await ok(bob, 'GET', `/presence?user_ids=${alice}`);
        assert.equal(presence.data[0].is_online, false);
      });
    });

    describe('UserBlockChanged', () => {
      test('blocking and unblocking deliver UserBlockChanged on both parties’ user channels, each with its own messaging_blocked_user_ids', async () => {
        const [alice, bob, carol, stranger] = await users(4);
        await ok(bob, 'POST', '/blocks', { user_id: carol }); // bob's list already holds carol
        const a = await clients.listening(alice);
        const b = await clients.listening(bob);
        const s = await clients.listening(stranger);

        await ok(alice, 'POST', '/blocks', { user_id: bob });
        const aliceBlocked = await a.waitFor('UserBlockChanged', (p) => p.blocked === true);
        const bobBlocked = await b.waitFor('UserBlockChanged', (p) => p.blocked === true);
        assert.equal(aliceBlocked.channel, `chat.user.${alice}`);
        assert.equal(bobBlocked.channel, `chat.user.${bob}`);
        for (const { payload } of [aliceBlocked, bobBlocked]) assert.deepEqual(keys(payload), BLOCK_KEYS);
        assert.deepEqual(aliceBlocked.payload, { blocker_id: alice, blocked_user_id: bob, blocked: true, messaging_blocked_user_ids: [bob] });
        assert.deepEqual(bobBlocked.payload, {
          blocker_id: alice,
          blocked_user_id: bob,
          blocked: true,
          messaging_blocked_user_ids: [alice, carol].sort((x, y) => x - y),
        });

        await ok(alice, 'DELETE', `/blocks/${bob}`);
        const aliceUnblocked = await a.waitFor('UserBlockChanged', (p) => p.blocked === false);
        const bobUnblocked = await b.waitFor('UserBlockChanged', (p) => p.blocked === false);
        assert.deepEqual(aliceUnblocked.payload, { blocker_id: alice, blocked_user_id: bob, blocked: false, messaging_blocked_user_ids: [] });
        assert.deepEqual(bobUnblocked.payload, { blocker_id: alice, blocked_user_id: bob, blocked: false, messaging_blocked_user_ids: [carol] });

        await s.expectNone('UserBlockChanged');
      });
    });

    describe('GroupParticipantsChanged and GroupMembershipRevoked', () => {
      test('adding participants delivers GroupParticipantsChanged (added) on the group’s channel and InboxUpdated to everyone, newcomer included', async () => {
        const [owner, member, newcomer] = await users(3);
        const groupId = await group(owner, [member]);
        const o = await clients.listening(owner, [groupId]);
        const m = await clients.listening(member, [groupId]);
        const n = await clients.listening(newcomer);

        await ok(owner, 'POST', `/groups/${groupId}/participants`, { user_ids: [newcomer] });
        for (const client of [o, m]) {
          const { channel, payload } = await client.waitFor('GroupParticipantsChanged', (p) => p.change_type === 'added');
          assert.equal(channel, `chat.conversation.${groupId}`);
          assert.deepEqual(keys(payload), PARTICIPANTS_CHANGED_KEYS);
          assert.equal(payload.conversation_id, groupId);
          assert.equal(payload.actor_user_id, owner);
          assert.deepEqual(payload.target_user_ids, [newcomer]);
          assert.equal(payload.participant_count, 3);
          assert.deepEqual(
            payload.participants_preview.map((p: { id: number; role: string }) => [p.id, p.role]),
            [[owner, 'owner'], [member, 'member'], [newcomer, 'member']],
          );
          for (const participant of payload.participants_preview) assert.deepEqual(keys(participant), PARTICIPANT_KEYS);
        }
        for (const client of [o, m, n]) {
          const { payload } = await client.waitFor('InboxUpdated', (p) => p.id === groupId && p.participant_count === 3);
          assert.deepEqual(keys(payload), CONVERSATION_KEYS);
        }
        // The newcomer may now subscribe to the group's channel.
        await n.subscribeConversation(groupId);
      });

      test('changing a role delivers GroupParticipantsChanged (role_changed) naming the participant', async () => {
        const [owner, member] = await users(2);
        const groupId = await group(owner, [member]);
        const o = await clients.listening(owner, [groupId]);
        const m = await clients.listening(member, [groupId]);

        await ok(owner, 'PATCH', `/groups/${groupId}/participants/${member}`, { role: 'admin' }, 204);
        for (const client of [o, m]) {
          const { payload } = await client.waitFor('GroupParticipantsChanged', (p) => p.change_type === 'role_changed');
          assert.deepEqual(keys(payload), PARTICIPANTS_CHANGED_KEYS);
          assert.equal(payload.actor_user_id, owner);
          assert.deepEqual(payload.target_user_ids, [member]);
          assert.equal(payload.participant_count, 2);
          assert.deepEqual(payload.participants_preview.find((p: { id: number }) => p.id === member).role, 'admin');
        }
      });

      test('removing a participant delivers GroupParticipantsChanged (removed) to the rest and GroupMembershipRevoked (removed) only to the removed user', async () => {
        const [owner, member, removed] = await users(3);
        const groupId = await group(owner, [member, removed]);
        const o = await clients.listening(owner, [groupId]);
        const m = await clients.listening(member, [groupId]);
        const r = await clients.listening(removed, [groupId]);

        await ok(owner, 'DELETE', `/groups/${groupId}/participants/${removed}`, undefined, 204);
        for (const client of [o, m]) {
          const { payload } = await client.waitFor('GroupParticipantsChanged', (p) => p.change_type === 'removed');
          assert.deepEqual(keys(payload), PARTICIPANTS_CHANGED_KEYS);
          assert.deepEqual(
            { ...payload, participants_preview: payload.participants_preview.map((p: { id: number }) => p.id) },
            { conversation_id: groupId, change_type: 'removed', actor_user_id: owner, target_user_ids: [removed], participant_count: 2, participants_preview: [owner, member] },
          );
        }
        const revoked = await r.waitFor('GroupMembershipRevoked');
        assert.equal(revoked.channel, `chat.user.${removed}`);
        assert.deepEqual(keys(revoked.payload), REVOKED_KEYS);
        assert.deepEqual(revoked.payload, { conversation_id: groupId, user_id: removed, reason: 'removed' });
        // The removed user's sockets were dropped from the channel before the change was announced on it.
        assert.deepEqual(r.payloads('GroupParticipantsChanged'), []);
        await o.expectNone('GroupMembershipRevoked');
        assert.deepEqual(m.payloads('GroupMembershipRevoked'), []);
      });

      test('leaving delivers GroupParticipantsChanged (removed, actor = self) to the rest and GroupMembershipRevoked (left) only to the leaver', async () => {
        const [owner, member, leaver] = await users(3);
        const groupId = await group(owner, [member, leaver]);
        const o = await clients.listening(owner, [groupId]);
        const m = await clients.listening(member, [groupId]);
        const l = await clients.listening(leaver, [groupId]);

        await ok(leaver, 'POST', `/groups/${groupId}/leave`, undefined, 204);
        for (const client of [o, m]) {
          const { payload } = await client.waitFor('GroupParticipantsChanged', (p) => p.change_type === 'removed');
          assert.deepEqual(keys(payload), PARTICIPANTS_CHANGED_KEYS);
          assert.equal(payload.actor_user_id, leaver);
          assert.deepEqual(payload.target_user_ids, [leaver]);
          assert.equal(payload.participant_count, 2);
        }
        const revoked = await l.waitFor('GroupMembershipRevoked');
        assert.deepEqual(keys(revoked.payload), REVOKED_KEYS);
        assert.deepEqual(revoked.payload, { conversation_id: groupId, user_id: leaver, reason: 'left' });
        await o.expectNone('GroupMembershipRevoked');
        assert.deepEqual(m.payloads('GroupMembershipRevoked'), []);
      });

      test('an owner leaving hands ownership over, announced as GroupParticipantsChanged (role_changed) for the heir', async () => {
        const [owner, first, second] = await users(3);
        const groupId = await group(owner, [first, second]);
        const f = await clients.listening(first, [groupId]);

        await ok(owner, 'POST', `/groups/${groupId}/leave`, undefined, 204);
        const { payload } = await f.waitFor('GroupParticipantsChanged', (p) => p.change_type === 'role_changed');
        assert.deepEqual(keys(payload), PARTICIPANTS_CHANGED_KEYS);
        assert.deepEqual(payload.target_user_ids, [first]);
        assert.equal(payload.participants_preview.find((p: { id: number }) => p.id === first).role, 'owner');
      });

      test('deleting a group delivers GroupMembershipRevoked (group_deleted) to every participant on their own channel', async () => {
        const [owner, member, outsider] = await users(3);
        const groupId = await group(owner, [member]);
        const o = await clients.listening(owner, [groupId]);
        const m = await clients.listening(member, [groupId]);
        const x = await clients.listening(outsider);

        await ok(owner, 'DELETE', `/groups/${groupId}`, undefined, 204);
        for (const client of [o, m]) {
          const { channel, payload } = await client.waitFor('GroupMembershipRevoked');
          assert.equal(channel, `chat.user.${client.userId}`);
          assert.deepEqual(keys(payload), REVOKED_KEYS);
          assert.deepEqual(payload, { conversation_id: groupId, user_id: client.userId, reason: 'group_deleted' });
        }
        await x.expectNone('GroupMembershipRevoked');
      });
    });

    describe('channel authorization', () => {
      test('an outsider’s subscription to a conversation channel is refused with 403', async () => {
        const [alice, bob, outsider] = await users(3);
        const conversationId = await direct(alice, bob);
        const x = await clients.connect(outsider);

        const outcome = await x.trySubscribe(`chat.conversation.${conversationId}`);
        assert.equal(outcome.ok, false);
        assert.equal(!outcome.ok && outcome.error.status, 403);
        assert.equal(!outcome.ok && outcome.error.type, 'AuthError');

        // The endpoint itself, as pusher-js calls it (a form post).
        const res = await fetch(`${app.api}/broadcasting/auth`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await app.token(outsider)}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ socket_id: x.socketId(), channel_name: `private-chat.conversation.${conversationId}` }).toString(),
        });
        assert.equal(res.status, 403);
        assert.equal(((await res.json()) as { code: string }).code, 'forbidden');
      });

      test('a subscription to another user’s channel is refused with 403', async () => {
        const [alice, bob] = await users(2);
        const a = await clients.connect(alice);
        const outcome = await a.trySubscribe(`chat.user.${bob}`);
        assert.equal(outcome.ok, false);
        assert.equal(!outcome.ok && outcome.error.status, 403);
      });

      test('a subscription without a token is refused with 401', async () => {
        const [alice] = await users(1);
        const anonymous = await clients.connect(alice, { token: null });
        const outcome = await anonymous.trySubscribe(`chat.user.${alice}`);
        assert.equal(outcome.ok, false);
        assert.equal(!outcome.ok && outcome.error.status, 401);

        const res = await fetch(`${app.api}/broadcasting/auth`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ socket_id: anonymous.socketId(), channel_name: `private-chat.user.${alice}` }).toString(),
        });
        assert.equal(res.status, 401);
      });

      test('a forged channel signature is refused on the socket', async () => {
        const [alice, bob, outsider] = await users(3);
        const conversationId = await direct(alice, bob);
        // Signed like the server would, but without its secret.
        const forged = await clients.connect(outsider, {
          authorize: ({ socketId, channelName }, callback) => {
            const signature = createHmac('sha256', 'not-the-app-secret').update(`${socketId}:${channelName}`).digest('hex');
            callback(null, { auth: `${app.config.broadcast.appKey}:${signature}` });
          },
        });
        const outcome = await forged.trySubscribe(`chat.conversation.${conversationId}`);
        assert.deepEqual(outcome, { ok: false, error: { type: 'AuthError', error: 'Invalid channel signature', status: 401 } });

        // Nothing said on the channel reaches the refused socket.
        const b = await clients.listening(bob, [conversationId]);
        const message = await send(alice, conversationId, { body: 'private' });
        await b.waitFor('MessageSent', (p) => p.id === message.id);
        await forged.expectNone('MessageSent');
      });

      test('a signature the endpoint issued for another socket is refused on the socket', async () => {
        const [alice, bob, outsider] = await users(3);
        const conversationId = await direct(alice, bob);
        const channelName = `private-chat.conversation.${conversationId}`;
        const a = await clients.connect(alice);
        const issued = await fetch(`${app.api}/broadcasting/auth`, {
          method: 'POST',
          headers: { authorization: `Bearer ${await app.token(alice)}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ socket_id: a.socketId(), channel_name: channelName }).toString(),
        });
        assert.equal(issued.status, 200);
        const { auth } = (await issued.json()) as { auth: string };

        const replay = await clients.connect(outsider, { authorize: (_params, callback) => callback(null, { auth }) });
        const outcome = await replay.trySubscribe(`chat.conversation.${conversationId}`);
        assert.equal(outcome.ok, false);
        assert.equal(!outcome.ok && outcome.error.status, 401);
      });
    });

    describe('delivery', () => {
      test('a request with X-Socket-ID leaves that socket out: the sender’s own Echo gets no MessageSent, the same user’s other client does', async () => {
        const [alice, bob] = await users(2);
        const conversationId = await direct(alice, bob);
        const phone = await clients.listening(alice, [conversationId]);
        const laptop = await clients.listening(alice, [conversationId]);
        const b = await clients.listening(bob, [conversationId]);

        const message = await send(alice, conversationId, { body: 'from my phone' }, phone.excludeMe());
        for (const client of [laptop, b]) {
          const { payload } = await client.waitFor('MessageSent', (p) => p.id === message.id);
          assert.deepEqual(keys(payload), MESSAGE_SENT_KEYS);
        }
        await laptop.waitFor('InboxUpdated', (p) => p.last_message?.id === message.id);
        await phone.expectNone('MessageSent');
        // Every event of that request skips that socket, the user-channel ones too.
        assert.deepEqual(phone.payloads('InboxUpdated'), []);
      });

      test('a participant removed from a group stops receiving the conversation’s events at once and cannot subscribe again', async () => {
        const [owner, member, removed] = await users(3);
        const groupId = await group(owner, [member, removed]);
        const m = await clients.listening(member, [groupId]);
        const r = await clients.listening(removed, [groupId]);
        // While a participant, the removed user hears the group.
        const before = await send(owner, groupId, { body: 'before' });
        await r.waitFor('MessageSent', (p) => p.id === before.id);

        await ok(owner, 'DELETE', `/groups/${groupId}/participants/${removed}`, undefined, 204);
        const afterRemoval = await send(owner, groupId, { body: 'after' });
        await ok(owner, 'POST', `/conversations/${groupId}/typing`, { is_typing: true }, 204);
        await m.waitFor('MessageSent', (p) => p.id === afterRemoval.id);
        await m.waitFor('UserTyping', (p) => p.is_typing === true);
        await r.expectNone('MessageSent', (p) => p.id === afterRemoval.id);
        assert.deepEqual(r.payloads('UserTyping'), []);
        assert.deepEqual(r.payloads('InboxUpdated', (p) => p.id === groupId && p.last_message?.id === afterRemoval.id), []);

        const again = await clients.connect(removed);
        const outcome = await again.trySubscribe(`chat.conversation.${groupId}`);
        assert.equal(!outcome.ok && outcome.error.status, 403);
      });

      test(
        'a channel signature obtained while a participant does not let a removed user subscribe after the removal',
        async () => {
          const [owner, removed] = await users(2);
          const groupId = await group(owner, [removed]);
          let signature = '';
          const r = await clients.connect(removed, { authorize: (_params, callback) => callback(null, { auth: signature }) });
          const issued = await fetch(`${app.api}/broadcasting/auth`, {
            method: 'POST',
            headers: { authorization: `Bearer ${await app.token(removed)}`, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ socket_id: r.socketId(), channel_name: `private-chat.conversation.${groupId}` }).toString(),
          });
          assert.equal(issued.status, 200);
          signature = ((await issued.json()) as { auth: string }).auth;

          await ok(owner, 'DELETE', `/groups/${groupId}/participants/${removed}`, undefined, 204);
          const outcome = await r.trySubscribe(`chat.conversation.${groupId}`);
          const message = await send(owner, groupId, { body: 'not for the removed' });
          await r.expectNone('MessageSent', (p) => p.id === message.id);
          assert.equal(outcome.ok, false);
        },
      );
    });
  });
}

