// Sends written in groups (group commit), seen by a real Laravel Echo client: concurrent sends into one
// conversation are each answered on their own, and the events follow the order of the message ids, with
// every recipient's unread count growing by one per message.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES, startTestApp, type TestApp } from '../support/app.js';
import { EchoClients } from '../support/echo.js';
import { direct } from '../http/helpers.js';

for (const database of DATABASES) {
  describe(`sends written in groups (${database})`, () => {
    let app: TestApp;
    const clients = new EchoClients(() => app);

    before(async () => {
      app = await startTestApp({ database, env: { CHAT_RATE_SENDS_PER_MINUTE: '0' } });
    });
    after(async () => {
      await clients.disconnectAll();
      await app?.close();
    });

    test('40 sends at once into one conversation: MessageSent in id order, and the reader’s unread count counts up by one each', async () => {
      const [alice, bob] = [9001, 9002];
      const id = await direct(app, alice, bob);
      const bobClient = await clients.listening(bob, [id]);
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => app.request(i % 4 === 3 ? bob : alice, 'POST', `/conversations/${id}/messages`, { body: `m${i}` })),
      );
      assert.deepEqual(answers.map((a) => a.status), answers.map(() => 201));
      const ids = answers.map((a) => a.body.data.id as number).sort((x, y) => x - y);
      const fromAlice = new Set(answers.filter((a) => a.body.data.sender.id === alice).map((a) => a.body.data.id as number));

      await bobClient.waitFor('MessageSent', (p) => p.id === ids.at(-1));
      await bobClient.waitFor('InboxUpdated', (p) => p.last_message?.id === ids.at(-1));
      const sent = bobClient.received.filter((r) => r.event === 'MessageSent').map((r) => r.payload.id as number);
      assert.deepEqual(sent, ids, 'every message once, in id order');

      // Each InboxUpdated to Bob shows the message it is about as last_message and Bob's unread count as of it.
      const inbox = bobClient.received.filter((r) => r.event === 'InboxUpdated').map((r) => r.payload);
      assert.deepEqual(inbox.map((p) => p.last_message.id), ids);
      let unread = 0;
      for (const payload of inbox) {
        if (fromAlice.has(payload.last_message.id)) unread++;
        assert.equal(payload.unread_count, unread, `unread count as of message ${payload.last_message.id}`);
      }
      const conversation = await app.request(bob, 'GET', `/conversations/${id}`);
      assert.equal(conversation.body.data.unread_count, fromAlice.size);
    });

    test('in one batch, a refused send (not a participant) fails alone; the others are written', async () => {
      const [carol, dave, eve] = [9011, 9012, 9013];
      const id = await direct(app, carol, dave);
      await app.request(eve, 'GET', '/conversations'); // Eve exists, but is not in the conversation
      const answers = await Promise.all([
        app.request(carol, 'POST', `/conversations/${id}/messages`, { body: 'one' }),
        app.request(eve, 'POST', `/conversations/${id}/messages`, { body: 'intruder' }),
        app.request(dave, 'POST', `/conversations/${id}/messages`, { body: 'two' }),
        app.request(carol, 'POST', `/conversations/${id}/messages`, { body: 'three', reply_to_id: 999_999_999 }),
      ]);
      assert.deepEqual(answers.map((a) => a.status), [201, 404, 201, 422]);
      const history = await app.request(carol, 'GET', `/conversations/${id}/messages`);
      assert.deepEqual(history.body.data.map((m: { body: string }) => m.body), ['two', 'one']);
    });

    test('the same client_message_id twice in one batch: one message, both answers name it, the second as not created', async () => {
      const [frank, grace] = [9021, 9022];
      const id = await direct(app, frank, grace);
      const body = { body: 'once', client_message_id: 'same-key' };
      const [a, b] = await Promise.all([
        app.request(frank, 'POST', `/conversations/${id}/messages`, body),
        app.request(frank, 'POST', `/conversations/${id}/messages`, body),
      ]);
      assert.deepEqual([a.status, b.status].sort(), [200, 201]);
      assert.equal(a.body.data.id, b.body.data.id);
      const history = await app.request(frank, 'GET', `/conversations/${id}/messages`);
      assert.equal(history.body.data.length, 1);
    });
  });
}
