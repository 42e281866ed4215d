// The named calls of @parley/client against a real Parley: conversations and messages (docs/api.md), their
// answers and their errors as ParleyError; a send whose answer is lost is retried with its client_message_id, so
// the message exists once; and a cursor older than the feed keeps (this app keeps changes 2 s) resets the client.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { ParleyError } from '../../packages/client/src/index.js';
import type { TestApp } from '../support/app.js';
import { clientOf, disconnectClients, startClientTestApp } from './helpers.js';

describe('@parley/client: conversations and messages', () => {
  let app: TestApp;
  before(async () => {
    app = await startClientTestApp({ CHAT_SYNC_RETENTION_S: '2' });
  });
  afterEach(disconnectClients);
  after(() => app?.close());

  test('conversations: openDirect creates or finds the direct conversation, get and list show it', async () => {
    const alice = await clientOf(app, 1);
    const opened = await alice.conversations.openDirect(2);
    assert.equal(opened.type, 'direct');
    assert.deepEqual(opened.participants_preview.map((p) => p.id).sort(), [1, 2]);
    assert.equal((await alice.conversations.openDirect(2)).id, opened.id, 'the same conversation the second time');
    assert.equal((await alice.conversations.get(opened.id)).id, opened.id);
    await alice.messages.send(opened.id, { body: 'first' });
    const inbox = await alice.conversations.list({ limit: 5 });
    assert.ok(inbox.data.some((c) => c.id === opened.id));
    assert.equal(typeof inbox.meta.sync_cursor, 'string');
    assert.equal(alice.cursor, inbox.meta.sync_cursor, 'the first inbox page gives the client its sync cursor');
    assert.deepEqual((await alice.conversations.list({ archived: true })).data, []);
  });

  test('messages: send (with reply, mentions, thread), list before/after/limit, edit, delete for everyone and for me', async () => {
    const alice = await clientOf(app, 1);
    const bob = await clientOf(app, 2);
    const { id } = await alice.conversations.openDirect(3);
    const first = await alice.messages.send(id, { body: 'one' });
    const second = await alice.messages.send(id, { body: 'two', reply_to_id: first.id, mentioned_user_ids: [3] });
    assert.equal(second.reply_to?.id, first.id);
    const reply = await alice.messages.send(id, { body: 'in the thread', thread_id: first.id });
    assert.equal(reply.body, 'in the thread');
    const third = await alice.messages.send(id, { body: 'three' });

    const newest = await alice.messages.list(id, { limit: 2 });
    assert.deepEqual(newest.data.map((m) => m.body), ['three', 'two'], 'newest first; the thread reply is not in history');
    assert.deepEqual(newest.data[1]!.mentioned_user_ids, [3]);
    assert.deepEqual((await alice.messages.list(id, { before: second.id })).data.map((m) => m.id), [first.id]);
    assert.deepEqual((await alice.messages.list(id, { after: first.id })).data.map((m) => m.id), [third.id, second.id]);

    const edited = await alice.messages.edit(third.id, 'three, edited');
    assert.equal(edited.body, 'three, edited');
    assert.notEqual(edited.edited_at, null);
    await alice.messages.delete(third.id);
    await alice.messages.delete(second.id, { forMe: true });
    assert.deepEqual((await alice.messages.list(id)).data.map((m) => m.id), [first.id], 'deleted for everyone, and hidden for me');
    await assert.rejects(bob.messages.list(id), (err: unknown) => err instanceof ParleyError && err.status === 404 && err.code === 'not_found');
  });

  test('errors are ParleyError with status, code, message and errors', async () => {
    const alice = await clientOf(app, 1);
    const { id } = await alice.conversations.openDirect(2);
    const err = await alice.messages.send(id, { body: '   ' }).catch((e: unknown) => e);
    assert.ok(err instanceof ParleyError);
    assert.equal(err.status, 422);
    assert.equal(err.code, 'validation_failed');
    assert.equal(typeof err.message, 'string');
    assert.ok(err.errors && Object.keys(err.errors).length > 0, 'errors names the field');
    const mine = await alice.messages.send(id, { body: 'mine' });
    const bob = await clientOf(app, 2);
    await assert.rejects(bob.messages.edit(mine.id, 'not yours'), (e: unknown) => e instanceof ParleyError && e.status === 403 && e.code === 'not_sender');
    const stranger = await clientOf(app, 1, { token: 'not-a-token' });
    await assert.rejects(stranger.conversations.list(), (e: unknown) => e instanceof ParleyError && e.status === 401 && e.code === 'unauthenticated');
  });

  test('request: any other call of the API with the same token and errors', async () => {
    const alice = await clientOf(app, 1);
    const { id } = await alice.conversations.openDirect(2);
    const answer = await alice.request<{ data: { conversation_id: number } }>('POST', `/conversations/${id}/read`);
    assert.equal(answer.data.conversation_id, id);
    await assert.rejects(alice.request('GET', '/no-such-route'), (e: unknown) => e instanceof ParleyError && e.status === 404);
  });

  test('a send whose first answer is lost after the server stored it is tried again with the same client_message_id: one message', async () => {
    const sent: string[] = [];
    let lost = 0;
    // The network fails after the request reached the server: the server stores the message, the answer never arrives.
    const losingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'POST' && String(input).endsWith('/messages')) {
        sent.push(JSON.parse(String(init.body)).client_message_id);
        if (lost++ === 0) {
          await response.arrayBuffer();
          throw new TypeError('fetch failed');
        }
      }
      return response;
    };
    const alice = await clientOf(app, 1, { fetch: losingFetch });
    const { id } = await alice.conversations.openDirect(2);
    const message = await alice.messages.send(id, { body: 'sent once, answered once' });
    assert.equal(sent.length, 2, 'tried twice');
    assert.equal(sent[0], sent[1], 'with the same client_message_id');
    const history = (await alice.messages.list(id, { limit: 100 })).data.filter((m) => m.body === 'sent once, answered once');
    assert.deepEqual(history.map((m) => m.id), [message.id], 'one message');
  });

  test('a send whose first answer never comes is tried again after sendTimeoutMs with the same client_message_id: one message', async () => {
    const sent: string[] = [];
    // The answer of the first try hangs (the server stored the message) until the client gives up on it.
    const hangingFetch: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'POST' && String(input).endsWith('/messages')) {
        sent.push(JSON.parse(String(init.body)).client_message_id);
        if (sent.length === 1) {
          await response.arrayBuffer();
          return new Promise<Response>((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
        }
      }
      return response;
    };
    const alice = await clientOf(app, 1, { fetch: hangingFetch, sendTimeoutMs: 500 });
    const { id } = await alice.conversations.openDirect(2);
    const message = await alice.messages.send(id, { body: 'answered the second time' });
    assert.deepEqual(sent, [sent[0], sent[0]], 'tried twice with the same client_message_id');
    const history = (await alice.messages.list(id, { limit: 100 })).data.filter((m) => m.body === 'answered the second time');
    assert.deepEqual(history.map((m) => m.id), [message.id], 'one message');
  });

  test('a cursor older than the feed keeps: sync calls onReset with the 410 and goes on from now', async () => {
    const alice = await clientOf(app, 1);
    const { id } = await alice.conversations.openDirect(2);
    await alice.sync(); // takes a cursor
    const old = alice.cursor;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await alice.messages.send(id, { body: 'after the cursor expired' });
    const resets: ParleyError[] = [];
    alice.onReset((err) => resets.push(err));
    assert.equal(await alice.sync(), 0, 'nothing delivered: the gap cannot be filled');
    assert.deepEqual(resets.map((e) => [e.status, e.code]), [[410, 'cursor_expired']]);
    assert.notEqual(alice.cursor, old);
    assert.equal(await alice.sync(), 0, 'from the new cursor');
    assert.equal(resets.length, 1);
  });

  test('an upload through request (FormData), a message with it, and its bytes through fetch with the token', async () => {
    const alice = await clientOf(app, 1);
    const bob = await clientOf(app, 2);
    const { id } = await alice.conversations.openDirect(2);
    const form = new FormData();
    form.append('file', new Blob(['hello, file'], { type: 'text/plain' }), 'hello.txt');
    const { data: attachment } = await alice.request<{ data: { id: number; url: string } }>('POST', '/attachments', { body: form });
    const message = await alice.messages.send(id, { attachment_id: attachment.id });
    assert.equal(message.attachment?.id, attachment.id);
    const bytes = await bob.fetch(message.attachment!.url);
    assert.equal(bytes.status, 200);
    assert.equal(await bytes.text(), 'hello, file');
    const withoutToken = await fetch(new URL(message.attachment!.url, app.baseUrl));
    assert.equal(withoutToken.status, 401, 'the bytes need the token');
  });
});
