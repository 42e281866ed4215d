// BROADCAST_DRIVER=pusher end to end, with a second Parley as the external Pusher server. Parley A is the chat
// backend (BROADCAST_DRIVER=pusher, PUSHER_* pointing at B); Parley B only carries sockets
// (BROADCAST_DRIVER=builtin, BROADCAST_CHAT_CHANNELS=relay). Both are real node processes. Real Laravel Echo
// clients connect to B, authorize their channels at A's /broadcasting/auth, and hear what A's API causes.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { ParleyNode } from '../../testkit/parley-node.js';
import { freshPostgres } from '../../testkit/postgres.js';
import { SECRETS } from '../../testkit/secrets.js';
import { sleep, until } from '../../testkit/wait.js';
import { EchoClient, type EchoClientOptions, type EchoTarget } from '../support/echo.js';

/** B refuses an event's data above this (413); A does not even send one above A_MAX_EVENT_BYTES. */
const B_MAX_EVENT_BYTES = 6_000;
const A_MAX_EVENT_BYTES = 8_000;

describe('Parley A publishing through the Pusher HTTP API of Parley B (BROADCAST_DRIVER=pusher)', { timeout: 120_000 }, () => {
  let a: ParleyNode;
  let b: ParleyNode;
  /** A third Parley as B, but owning its chat channels (the default): for the test of what relay changes. */
  let owning: ParleyNode;
  let dropDatabase: (() => Promise<void>) | undefined;
  const clients: EchoClient[] = [];
  const nodes: ParleyNode[] = [];
  let nextUserId = 7000;

  before(async () => {
    [b, owning] = await Promise.all([
      ParleyNode.start('relay-b', { BROADCAST_CHAT_CHANNELS: 'relay', BROADCAST_MAX_EVENT_BYTES: String(B_MAX_EVENT_BYTES) }),
      ParleyNode.start('owning-c', {}),
    ]);
    nodes.push(b, owning);
    const database = await freshPostgres();
    dropDatabase = database.drop;
    a = await ParleyNode.start('chat-a', {
      DATABASE_URL: database.url,
      BROADCAST_DRIVER: 'pusher',
      PUSHER_APP_ID: SECRETS.BROADCAST_APP_ID,
      PUSHER_APP_KEY: SECRETS.BROADCAST_APP_KEY,
      PUSHER_APP_SECRET: SECRETS.BROADCAST_APP_SECRET,
      PUSHER_HOST: '127.0.0.1',
      PUSHER_PORT: String(b.port),
      PUSHER_SCHEME: 'http',
      PUSHER_MAX_EVENT_BYTES: String(A_MAX_EVENT_BYTES),
    });
    nodes.push(a);
  });

  afterEach(async (t) => {
    await Promise.all(clients.splice(0).map((c) => c.disconnect()));
    if ((t as { passed?: boolean }).passed === false) for (const node of nodes) console.error(`--- ${node.name}\n${node.logs()}`);
  });

  after(async () => {
    await Promise.all(clients.splice(0).map((c) => c.disconnect()));
    for (const node of nodes) await node.stop().catch(() => node.kill());
    for (const node of nodes) node.kill();
    await dropDatabase?.();
  });

  // -------------------------------------------------------------------------------------------

  async function ok(userId: number, method: string, path: string, body?: unknown, status = 200, headers?: Record<string, string>) {
    const res = await a.request(userId, method, path, body, headers);
    assert.equal(res.status, status, `${method} ${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Fresh users, each created by a first request to A. */
  async function users(count: number): Promise<number[]> {
    const ids = Array.from({ length: count }, () => nextUserId++);
    await Promise.all(ids.map((id) => ok(id, 'GET', '/conversations')));
    return ids;
  }

  const group = async (owner: number, members: number[]): Promise<number> => (await ok(owner, 'POST', '/groups', { name: 'Team', user_ids: members }, 201)).data.id;
  const send = async (userId: number, conversationId: number, body: string, headers?: Record<string, string>) =>
    (await ok(userId, 'POST', `/conversations/${conversationId}/messages`, { body }, 201, headers)).data as Record<string, any>;

  /** An Echo client whose socket is on `socketNode` (default B) and whose channels are authorized by A. */
  async function connect(userId: number, options: EchoClientOptions = {}, socketNode: ParleyNode = b): Promise<EchoClient> {
    const target: EchoTarget = { port: socketNode.port, api: a.api, config: socketNode.config, token: (id) => a.token(id) };
    const client = await EchoClient.connect(target, userId, options);
    clients.push(client);
    return client;
  }

  async function listening(userId: number, conversationIds: readonly number[] = [], options: EchoClientOptions = {}): Promise<EchoClient> {
    const client = await connect(userId, options);
    await client.subscribeUser();
    for (const id of conversationIds) await client.subscribeConversation(id);
    return client;
  }

  const metricsOf = async (node: ParleyNode) => (await fetch(`${node.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();

  // -------------------------------------------------------------------------------------------

  test('A tells browsers to connect to B: its key, host, port, no TLS', async () => {
    const config = await (await fetch(`${a.api}/client-config`, { signal: AbortSignal.timeout(5_000) })).json();
    assert.deepEqual(config, { app_key: SECRETS.BROADCAST_APP_KEY, ws_host: '127.0.0.1', ws_port: b.port, force_tls: false, realtime: true, demo: false });
  });

  test('clients on B hear MessageSent, InboxUpdated, UserTyping and ConversationRead caused through A’s API', async () => {
    const [alice, bob, carol] = await users(3);
    const groupId = await group(alice!, [bob!, carol!]);
    const bobs = await listening(bob!, [groupId]);
    const carols = await listening(carol!, [groupId]);

    const message = await send(alice!, groupId, 'Hello through Pusher');
    for (const client of [bobs, carols]) {
      const { channel, payload } = await client.waitFor('MessageSent', (p) => p.id === message.id);
      assert.equal(channel, `chat.conversation.${groupId}`);
      assert.equal(payload.body, 'Hello through Pusher');
      const inbox = await client.waitFor('InboxUpdated', (p) => p.id === groupId && p.last_message?.id === message.id);
      assert.equal(inbox.channel, `chat.user.${client.userId}`);
      assert.equal(inbox.payload.unread_count, 1);
    }

    await ok(alice!, 'POST', `/conversations/${groupId}/typing`, { is_typing: true }, 204);
    await bobs.waitFor('UserTyping', (p) => p.user_id === alice && p.is_typing === true);
    await ok(bob!, 'POST', `/conversations/${groupId}/read`, {});
    await carols.waitFor('ConversationRead', (p) => p.user_id === bob);
    await bobs.waitFor('InboxUpdated', (p) => p.id === groupId && p.unread_count === 0);

    await sleep(200);
    assert.deepEqual(bobs.payloads('MessageSent').map((p) => p.id), [message.id], 'heard once');
  });

  test('X-Socket-ID from a socket on B leaves that socket out: A passes it on as socket_id', async () => {
    const [alice, bob] = await users(2);
    const conversationId = (await ok(alice!, 'POST', '/conversations', { user_id: bob }, 201)).data.id;
    const phone = await listening(alice!, [conversationId]);
    const laptop = await listening(alice!, [conversationId]);
    const bobs = await listening(bob!, [conversationId]);

    const message = await send(alice!, conversationId, 'from my phone', phone.excludeMe());
    await laptop.waitFor('MessageSent', (p) => p.id === message.id);
    await bobs.waitFor('MessageSent', (p) => p.id === message.id);
    await phone.expectNone('MessageSent');
    assert.deepEqual(phone.payloads('InboxUpdated'), []);
  });

  test('without BROADCAST_CHAT_CHANNELS=relay a Parley refuses conversation channels authorized by another Parley', async () => {
    const [alice, bob] = await users(2);
    const conversationId = (await ok(alice!, 'POST', '/conversations', { user_id: bob }, 201)).data.id;
    const client = await connect(bob!, {}, owning);
    // Signed with the right key and secret by A, but C never recorded the authorization: refused.
    const outcome = await client.trySubscribe(`chat.conversation.${conversationId}`);
    assert.equal(outcome.ok, false);
    // On B, in relay mode, the same is accepted.
    const relayed = await connect(bob!);
    assert.deepEqual(await relayed.trySubscribe(`chat.conversation.${conversationId}`), { ok: true });
  });

  test('a removed member signed in on B has its connections ended by A and cannot subscribe again; members keep hearing', async () => {
    const [owner, member, removed] = await users(3);
    const groupId = await group(owner!, [member!, removed!]);
    const members = await listening(member!, [groupId]);
    const removedClient = await listening(removed!, [groupId], { signin: true });
    const connection = removedClient.echo.connector.pusher.connection;
    const before = await send(owner!, groupId, 'before');
    await removedClient.waitFor('MessageSent', (p) => p.id === before.id);
    // B has confirmed the signin (pusher:signin_success): the socket is known there as the user's.
    const user = removedClient.echo.connector.pusher.user as unknown as { user_data: { id: string } | null };
    await until(() => user.user_data?.id === String(removed), 5_000, () => 'the signin was not confirmed');

    await ok(owner!, 'DELETE', `/groups/${groupId}/participants/${removed}`, undefined, 204);
    await until(() => connection.state !== 'connected', 5_000, () => `the removed member’s socket is still ${connection.state}`);
    const afterRemoval = await send(owner!, groupId, 'after');
    await members.waitFor('MessageSent', (p) => p.id === afterRemoval.id);
    await members.waitFor('GroupParticipantsChanged', (p) => p.change_type === 'removed');
    await removedClient.expectNone('MessageSent', (p) => p.id === afterRemoval.id);

    // Connecting again: the auth endpoint (A) refuses the group's channel, the user's own channel still works.
    const again = await connect(removed!);
    const outcome = await again.trySubscribe(`chat.conversation.${groupId}`);
    assert.equal(!outcome.ok && outcome.error.status, 403);
    await again.subscribeUser();
  });

  test('a member who leaves keeps the connection (only removals by others end connections)', async () => {
    const [owner, leaver] = await users(2);
    const groupId = await group(owner!, [leaver!]);
    const client = await listening(leaver!, [groupId], { signin: true });
    await ok(leaver!, 'POST', `/groups/${groupId}/leave`, undefined, 204);
    await client.waitFor('GroupMembershipRevoked', (p) => p.conversation_id === groupId && p.reason === 'left');
    await sleep(200);
    assert.equal(client.echo.connector.pusher.connection.state, 'connected');
  });

  test('an event too large for the external server is not delivered, is logged with size and status and counted; the message is committed and caught up with ?after=', async () => {
    const [alice, bob] = await users(2);
    const conversationId = (await ok(alice!, 'POST', '/conversations', { user_id: bob }, 201)).data.id;
    const bobs = await listening(bob!, [conversationId]);
    const first = await send(alice!, conversationId, 'short');
    await bobs.waitFor('MessageSent', (p) => p.id === first.id);

    // Between B's limit and A's: A sends it, B answers 413. Above A's limit: A does not send it at all.
    const refusedByB = await send(alice!, conversationId, 'b'.repeat(B_MAX_EVENT_BYTES + 500));
    const keptByA = await send(alice!, conversationId, 'a'.repeat(A_MAX_EVENT_BYTES + 500));
    const last = await send(alice!, conversationId, 'short again');
    await bobs.waitFor('MessageSent', (p) => p.id === last.id);
    assert.deepEqual(bobs.payloads('MessageSent').map((p) => p.id), [first.id, last.id], 'the two long ones were not delivered, the next one was');

    // What the operator sees on A: an error line per event, with its size and status, and the counters.
    await until(() => a.logs().includes('"status":413'), 2_000, () => 'no error logged for the 413');
    const errors = a
      .logs()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((line) => line.level === 50 && line.event === 'MessageSent');
    const byB = errors.find((l) => l.status === 413)!;
    assert.equal(byB.reason, 'too_large');
    assert.deepEqual(byB.channels, [`private-chat.conversation.${conversationId}`]);
    assert.ok(byB.bytes > B_MAX_EVENT_BYTES && byB.bytes <= A_MAX_EVENT_BYTES, `size ${byB.bytes}`);
    const byA = errors.find((l) => l.status === null)!;
    assert.equal(byA.limit, A_MAX_EVENT_BYTES);
    assert.ok(byA.bytes > A_MAX_EVENT_BYTES);
    assert.match(await metricsOf(a), /^parley_pusher_events_failed_total\{event="MessageSent",reason="too_large"\} 2$/m);

    // The client catches up over HTTP with ?after=.
    const missed = await ok(bob!, 'GET', `/conversations/${conversationId}/messages?after=${first.id}`);
    assert.deepEqual(new Set(missed.data.map((m: { id: number }) => m.id)), new Set([refusedByB.id, keptByA.id, last.id]));
  });
});
