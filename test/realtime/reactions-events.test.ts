// MessageReactionsUpdated (API v1.1) end to end: a real Parley, real Laravel Echo clients over real WebSockets,
// channels authorized by /broadcasting/auth. One broadcast on chat.conversation.{id} per change, carrying the
// message's whole summary with exactly {conversation_id, message_id, reactions}; heard by the participants,
// never by outsiders; X-Socket-ID honoured; nothing for requests that change nothing or are refused.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { EchoClients, type EchoClient } from '../support/echo.js';

const keys = (payload: object): string[] => Object.keys(payload).sort();
const REACTIONS_UPDATED_KEYS = ['conversation_id', 'message_id', 'reactions'];
const SUMMARY_KEYS = ['count', 'emoji', 'user_ids'];

for (const database of DATABASES) {
  describe(`MessageReactionsUpdated over Laravel Echo (${database})`, () => {
    let app: TestApp;
    const clients = new EchoClients(() => app);
    let nextUserId = 5000;

    before(async () => {
      app = await startTestApp({ database });
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

    async function direct(a: number, b: number): Promise<number> {
      const res = await app.request(a, 'POST', '/conversations', { user_id: b });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.id as number;
    }

    async function group(owner: number, members: number[]): Promise<number> {
      const res = await app.request(owner, 'POST', '/groups', { name: 'Team', user_ids: members });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.id as number;
    }

    async function send(userId: number, conversationId: number, body = 'hello'): Promise<number> {
      const res = await app.request(userId, 'POST', `/conversations/${conversationId}/messages`, { body });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.data.id as number;
    }

    function reaction(userId: number, method: 'PUT' | 'DELETE', messageId: number, emoji: string, headers?: Record<string, string>) {
      return app.request(userId, method, `/messages/${messageId}/reactions/${encodeURIComponent(emoji)}`, undefined, headers);
    }

    async function react(userId: number, messageId: number, emoji: string, headers?: Record<string, string>) {
      const res = await reaction(userId, 'PUT', messageId, emoji, headers);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.data as { message_id: number; reactions: any[] };
    }

    /** Everything the client heard besides MessageReactionsUpdated since it last cleared. */
    const others = (client: EchoClient) => client.received.filter((r) => r.event !== 'MessageReactionsUpdated');

    async function dispatchedCount(): Promise<number> {
      const text = await (await fetch(`${app.baseUrl}/metrics`)).text();
      const match = /^parley_events_dispatched_total\{event="MessageReactionsUpdated"\} (\d+)$/m.exec(text);
      return match ? Number(match[1]) : 0;
    }

    test('a reaction is one MessageReactionsUpdated on chat.conversation.{id}, heard by every participant, with exactly its keys', async () => {
      const [alice, bob] = await users(2);
      const conversationId = await direct(alice, bob);
      const messageId = await send(alice, conversationId, 'lunch?');
      const a = await clients.listening(alice, [conversationId]);
      const b = await clients.listening(bob, [conversationId]);

      const answer = await react(bob, messageId, '👍');
      for (const client of [a, b]) {
        const { channel, payload } = await client.waitFor('MessageReactionsUpdated', (p) => p.message_id === messageId);
        assert.equal(channel, `chat.conversation.${conversationId}`);
        assert.deepEqual(keys(payload), REACTIONS_UPDATED_KEYS);
        for (const summary of payload.reactions) assert.deepEqual(keys(summary), SUMMARY_KEYS);
        assert.deepEqual(payload, { conversation_id: conversationId, message_id: messageId, reactions: [{ emoji: '👍', count: 1, user_ids: [bob] }] });
        assert.deepEqual(payload.reactions, answer.reactions, 'the same summary as the HTTP answer');
      }

      // Withdrawing is announced the same way, with the summary after it (here: empty).
      const withdrawn = await reaction(bob, 'DELETE', messageId, '👍');
      assert.equal(withdrawn.status, 200);
      for (const client of [a, b]) {
        await client.waitFor('MessageReactionsUpdated', (p) => p.message_id === messageId && p.reactions.length === 0);
        assert.equal(client.events('MessageReactionsUpdated').length, 2);
        assert.deepEqual(others(client), [], 'no other event: the inbox does not change');
      }
    });

    test('in a group, a reaction is one broadcast on the conversation channel, not one per member', async () => {
      const [owner, ...members] = await users(30);
      const groupId = await group(owner, members);
      const messageId = await send(owner, groupId);
      const listeners = await Promise.all([owner, members[0]!, members[28]!].map((id) => clients.listening(id, [groupId])));
      const before = await dispatchedCount();

      await react(members[5]!, messageId, '🎉');
      for (const client of listeners) {
        const { channel } = await client.waitFor('MessageReactionsUpdated', (p) => p.message_id === messageId);
        assert.equal(channel, `chat.conversation.${groupId}`);
      }
      assert.equal((await dispatchedCount()) - before, 1);
      for (const client of listeners) assert.deepEqual(others(client), []);
    });

    test('requests that change nothing dispatch nothing: reacting again, withdrawing a reaction one lacks', async () => {
      const [alice, bob] = await users(2);
      const conversationId = await direct(alice, bob);
      const messageId = await send(alice, conversationId);
      const a = await clients.listening(alice, [conversationId]);

      await react(bob, messageId, '🔥');
      await a.waitFor('MessageReactionsUpdated');
      a.clear();
      await react(bob, messageId, '🔥');
      assert.equal((await reaction(bob, 'DELETE', messageId, '😂')).status, 200);
      assert.equal((await reaction(alice, 'DELETE', messageId, '🔥')).status, 200);
      await a.expectNone('MessageReactionsUpdated');
    });

    test('refused reactions dispatch nothing: over 20 distinct emoji (422), a blocked direct pair (403)', async () => {
      const [alice, bob] = await users(2);
      const conversationId = await direct(alice, bob);
      const messageId = await send(alice, conversationId);
      const emoji = ['😀', '😂', '😍', '😎', '😭', '😡', '👍', '👎', '👏', '🙏', '🔥', '🎉', '💯', '❤️', '💔', '🤔', '🙈', '🚀', '🌈', '🍕', '☕'];
      for (const e of emoji.slice(0, 20)) await react(bob, messageId, e);
      const a = await clients.listening(alice, [conversationId]);

      assert.equal((await reaction(bob, 'PUT', messageId, emoji[20]!)).status, 422);
      assert.equal((await app.request(alice, 'POST', '/blocks', { user_id: bob })).status, 200);
      assert.equal((await reaction(bob, 'PUT', messageId, '👍')).status, 403);
      assert.equal((await reaction(bob, 'DELETE', messageId, '👍')).status, 403);
      await a.expectNone('MessageReactionsUpdated');
    });

    test('an outsider cannot subscribe to the conversation channel and hears nothing of its reactions', async () => {
      const [alice, bob, outsider] = await users(3);
      const conversationId = await direct(alice, bob);
      const messageId = await send(alice, conversationId);
      const b = await clients.listening(bob, [conversationId]);
      const x = await clients.listening(outsider);

      const outcome = await x.trySubscribe(`chat.conversation.${conversationId}`);
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.error.status, 403);
      assert.equal(!outcome.ok && outcome.error.type, 'AuthError');
      // Nor may the outsider react (404, as for any message they cannot see).
      assert.equal((await reaction(outsider, 'PUT', messageId, '👀')).status, 404);

      await react(alice, messageId, '👋');
      await b.waitFor('MessageReactionsUpdated', (p) => p.message_id === messageId);
      await x.expectNone('MessageReactionsUpdated');
      assert.deepEqual(x.received, []);
    });

    test('X-Socket-ID leaves the reacting socket out; the same user’s other client and the others hear it', async () => {
      const [alice, bob] = await users(2);
      const conversationId = await direct(alice, bob);
      const messageId = await send(bob, conversationId);
      const phone = await clients.listening(alice, [conversationId]);
      const laptop = await clients.listening(alice, [conversationId]);
      const b = await clients.listening(bob, [conversationId]);

      await react(alice, messageId, '❤️', phone.excludeMe());
      for (const client of [laptop, b]) await client.waitFor('MessageReactionsUpdated', (p) => p.message_id === messageId);
      await phone.expectNone('MessageReactionsUpdated');

      const res = await reaction(alice, 'DELETE', messageId, '❤️', phone.excludeMe());
      assert.equal(res.status, 200);
      for (const client of [laptop, b]) await client.waitFor('MessageReactionsUpdated', (p) => p.reactions.length === 0);
      await phone.expectNone('MessageReactionsUpdated');
    });

    test('concurrent reactions: the last event every listener gets carries the final summary', async () => {
      const [owner, ...members] = await users(13);
      const groupId = await group(owner, members);
      const listeners = await Promise.all([owner, members[0]!].map((id) => clients.listening(id, [groupId])));
      for (let trial = 0; trial < 3; trial++) {
        const messageId = await send(owner, groupId, `trial ${trial}`);
        const work = members.map((userId, i) => (i % 3 === 2 ? reaction(userId, 'DELETE', messageId, '👍') : reaction(userId, 'PUT', messageId, i % 2 ? '👍' : '🎉')));
        // Some withdraw what others add at the same time.
        work.push(...members.slice(0, 4).map((userId) => reaction(userId, 'DELETE', messageId, '🎉')));
        for (const res of await Promise.all(work)) assert.equal(res.status, 200, JSON.stringify(res.body));

        const final = (await app.request(owner, 'GET', `/conversations/${groupId}/messages`)).body.data.find((m: any) => m.id === messageId).reactions;
        for (const client of listeners) {
          await client.waitFor('MessageReactionsUpdated', (p) => p.message_id === messageId && JSON.stringify(p.reactions) === JSON.stringify(final));
          await new Promise((resolve) => setTimeout(resolve, 200));
          const heard = client.payloads('MessageReactionsUpdated', (p) => p.message_id === messageId);
          assert.deepEqual(heard.at(-1).reactions, final, `the last of ${heard.length} events is the final state`);
        }
      }
    });
  });
}
