// Several real Parley processes on one PostgreSQL database and one Redis: what a client on one node hears of
// what happens through the others. Three nodes (`node --import tsx src/main.ts`), real Laravel Echo clients
// over real WebSockets, channels authorized by the real /broadcasting/auth endpoint.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Cluster } from '../../testkit/cluster.js';
import type { RedisCluster } from '../../testkit/redis-cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { sleep } from '../../testkit/wait.js';
import { EchoClient, type EchoTarget } from '../support/echo.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';

const PRESENCE_TIMEOUT_MS = 600;
const TYPING_TIMEOUT_MS = 400;

for (const backend of REDIS_BACKENDS) describe(`three nodes on one PostgreSQL and ${backend.name}`, { timeout: 90_000 }, () => {
  let redis: RedisCluster | undefined;
  const redisSkip = () => (backend.cluster ? false : 'only a Redis Cluster has shard channels');
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;
  let node3: ParleyNode;
  const clients: EchoClient[] = [];
  let nextUserId = 5000;

  before(async () => {
    redis = await backend.start();
    cluster = await Cluster.start({
      redis,
      nodes: 3,
      env: {
        CHAT_PRESENCE_TIMEOUT_MS: String(PRESENCE_TIMEOUT_MS),
        CHAT_PRESENCE_SWEEP_MS: '100',
        CHAT_TYPING_TIMEOUT_MS: String(TYPING_TIMEOUT_MS),
      },
    });
    [node1, node2, node3] = cluster.nodes as [ParleyNode, ParleyNode, ParleyNode];
  });

  afterEach(async (t) => {
    await Promise.all(clients.splice(0).map((c) => c.disconnect()));
    // A failed test shows what the nodes logged (LOG_LEVEL=warn: only what went wrong).
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });

  after(async () => {
    await Promise.all(clients.splice(0).map((c) => c.disconnect()));
    await cluster?.close();
    await redis?.close();
  });

  // -------------------------------------------------------------------------------------------
  // Setup through the HTTP API of whichever node

  async function ok(node: ParleyNode, userId: number, method: string, path: string, body?: unknown, status = 200, headers?: Record<string, string>) {
    const res = await node.request(userId, method, path, body, headers);
    assert.equal(res.status, status, `${node.name} ${method} ${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Fresh users, each created by a first request (to a node of its own). */
  async function users(count: number): Promise<number[]> {
    const ids = Array.from({ length: count }, () => nextUserId++);
    await Promise.all(ids.map((id, i) => ok(cluster.nodes[i % cluster.nodes.length]!, id, 'GET', '/conversations')));
    return ids;
  }

  const direct = async (node: ParleyNode, a: number, b: number): Promise<number> => (await ok(node, a, 'POST', '/conversations', { user_id: b }, 201)).data.id;
  const group = async (node: ParleyNode, owner: number, members: number[]): Promise<number> =>
    (await ok(node, owner, 'POST', '/groups', { name: 'Team', user_ids: members }, 201)).data.id;
  const send = async (node: ParleyNode, userId: number, conversationId: number, body: string, headers?: Record<string, string>) =>
    (await ok(node, userId, 'POST', `/conversations/${conversationId}/messages`, { body }, 201, headers)).data as Record<string, any>;

  /** A Laravel Echo client whose socket is on one node (and whose channel auth goes to another, if given). */
  async function connect(socketNode: ParleyNode, userId: number, authNode: ParleyNode = socketNode): Promise<EchoClient> {
    const target: EchoTarget = { port: socketNode.port, api: authNode.api, config: socketNode.config, token: (id) => socketNode.token(id) };
    const client = await EchoClient.connect(target, userId);
    clients.push(client);
    return client;
  }

  async function listening(socketNode: ParleyNode, userId: number, conversationIds: readonly number[] = []): Promise<EchoClient> {
    const client = await connect(socketNode, userId);
    await client.subscribeUser();
    for (const id of conversationIds) await client.subscribeConversation(id);
    return client;
  }

  // -------------------------------------------------------------------------------------------

  test('a client on node 1 receives MessageSent and InboxUpdated caused by requests to node 2 and to node 3', async () => {
    const [alice, bob, carol] = await users(3);
    const conversationId = await group(node2, alice, [bob, carol]);
    const b = await listening(node1, bob, [conversationId]);
    const c = await listening(node3, carol, [conversationId]);

    const viaNode2 = await send(node2, alice, conversationId, 'through node 2');
    const viaNode3 = await send(node3, carol, conversationId, 'through node 3');

    for (const message of [viaNode2, viaNode3]) {
      const { channel, payload } = await b.waitFor('MessageSent', (p) => p.id === message.id);
      assert.equal(channel, `chat.conversation.${conversationId}`);
      assert.equal(payload.body, message.body);
      const inbox = await b.waitFor('InboxUpdated', (p) => p.id === conversationId && p.last_message?.id === message.id);
      assert.equal(inbox.channel, `chat.user.${bob}`);
    }
    // A client on the node that handled the request hears it too, and nobody hears an event twice.
    await c.waitFor('MessageSent', (p) => p.id === viaNode3.id);
    await c.waitFor('MessageSent', (p) => p.id === viaNode2.id);
    await sleep(200);
    assert.deepEqual(b.payloads('MessageSent').map((p) => p.id), [viaNode2.id, viaNode3.id]);
    assert.deepEqual(c.payloads('MessageSent').map((p) => p.id), [viaNode2.id, viaNode3.id]);
    // Bob's unread count is counted in the one database, whichever node answered.
    assert.equal(b.payloads('InboxUpdated', (p) => p.last_message?.id === viaNode3.id)[0].unread_count, 2);
  });

  // From 64 readers up a dispatch's InboxUpdated crosses to the other nodes as one message per Redis server, the
  // shared part once and each member's own part (src/realtime/broker/redis.ts, EACH_AS_ONE_FROM).
  test('a group of 70: members on every node get their own InboxUpdated of each message, once and in order, whichever node sent it', async () => {
    const ids = await users(70);
    const [owner, ...members] = ids as [number, ...number[]];
    const conversationId = await group(node2, owner, members);
    const listeners = await Promise.all(members.slice(0, 6).map((id, i) => listening(cluster.nodes[i % 3]!, id)));
    const receivedBy1 = async () => Number(/^parley_cluster_channel_messages_received_total (\d+)/m.exec(await (await fetch(`${node1.baseUrl}/metrics`)).text())![1]);
    const received0 = await receivedBy1();
    // Four messages at once through node 2 (one send batch), then one through node 3.
    const sent = await Promise.all([1, 2, 3, 4].map((n) => send(node2, owner, conversationId, `at once ${n}`)));
    sent.push(await send(node3, owner, conversationId, 'after'));
    const order = sent.map((m) => m.id as number).sort((a, b) => a - b);
    for (const client of listeners) {
      await client.waitFor('InboxUpdated', (p) => p.id === conversationId && p.last_message?.id === order.at(-1));
      await sleep(100);
      const inbox = client.payloads('InboxUpdated', (p) => p.id === conversationId);
      assert.deepEqual(inbox.map((p) => p.last_message.id), order, `user ${client.userId}: one InboxUpdated per message, in order`);
      assert.deepEqual(inbox.map((p) => p.unread_count), [1, 2, 3, 4, 5], `user ${client.userId}: its own unread counts`);
      assert.deepEqual(inbox.map((p) => p.participant_count), [70, 70, 70, 70, 70]);
    }
    // Node 1 read every member's part of each message, its two members' and the others' (counted one per channel).
    assert.ok((await receivedBy1()) - received0 >= 5 * 69, `node 1 received ${(await receivedBy1()) - received0} channel messages`);
  });

  test('a channel authorized through node 2 can be subscribed on a socket of node 1: pending authorizations are shared', async () => {
    const [alice, bob] = await users(2);
    const conversationId = await direct(node3, alice, bob);
    const b = await connect(node1, bob, node2);
    await b.subscribeConversation(conversationId);
    await b.subscribeUser();

    const message = await send(node3, alice, conversationId, 'hello across nodes');
    await b.waitFor('MessageSent', (p) => p.id === message.id);
  });

  /**
   * A user of a group on node 1 gets a signature for the group's channel through `issuer`, is removed through node
   * 3, then tries to subscribe on node 1 with it: the subscription must be refused and hear nothing.
   */
  async function replayAfterRemoval(issuer: ParleyNode): Promise<void> {
    const [owner, removed] = await users(2);
    const groupId = await group(node1, owner, [removed]);
    let signature = '';
    const target: EchoTarget = { port: node1.port, api: issuer.api, config: node1.config, token: (id) => node1.token(id) };
    const r = await EchoClient.connect(target, removed, { authorize: (_params, callback) => callback(null, { auth: signature }) });
    clients.push(r);
    const issued = await fetch(`${issuer.api}/broadcasting/auth`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await issuer.token(removed)}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ socket_id: r.socketId(), channel_name: `private-chat.conversation.${groupId}` }).toString(),
      signal: AbortSignal.timeout(5_000),
    });
    assert.equal(issued.status, 200);
    signature = ((await issued.json()) as { auth: string }).auth;

    await ok(node3, owner, 'DELETE', `/groups/${groupId}/participants/${removed}`, undefined, 204);
    // Node 3 voids what Redis holds itself; what node 1 holds in memory, node 1 voids when the removal reaches it
    // through Redis (milliseconds here).
    await sleep(300);
    const outcome = await r.trySubscribe(`chat.conversation.${groupId}`);
    const message = await send(node2, owner, groupId, 'not for the removed');
    await r.expectNone('MessageSent', (p) => p.id === message.id);
    assert.equal(outcome.ok, false, 'the subscription is refused');
  }

  test('a signature issued through node 2 does not let a user removed through node 3 subscribe on node 1', () => replayAfterRemoval(node2));

  // Authorized through the node that holds the socket, the authorization stays in that node's memory
  // (authorizations/local-first.ts): a removal through another node must void it there too.
  test('a signature issued through the socket’s own node does not let a user removed through node 3 subscribe', () => replayAfterRemoval(node1));

  test('X-Socket-ID leaves the sender’s socket out on whatever node it is: the same user’s socket on another node still hears the event', async () => {
    const [alice, bob] = await users(2);
    const conversationId = await direct(node1, alice, bob);
    const phone = await listening(node1, alice, [conversationId]);
    const laptop = await listening(node2, alice, [conversationId]);
    const b = await listening(node1, bob, [conversationId]);

    // Sent through node 3, on behalf of the phone on node 1.
    const message = await send(node3, alice, conversationId, 'from my phone', phone.excludeMe());
    await laptop.waitFor('MessageSent', (p) => p.id === message.id);
    await laptop.waitFor('InboxUpdated', (p) => p.last_message?.id === message.id);
    await b.waitFor('MessageSent', (p) => p.id === message.id);
    await phone.expectNone('MessageSent');
    assert.deepEqual(phone.payloads('InboxUpdated'), []);

    // And the other way round: the laptop (node 2) left out of a request to node 1.
    const second = await send(node1, alice, conversationId, 'from my laptop', laptop.excludeMe());
    await phone.waitFor('MessageSent', (p) => p.id === second.id);
    await laptop.expectNone('MessageSent', (p) => p.id === second.id);
  });

  test('UserPresenceChanged is dispatched once per transition when heartbeats and offline signals reach different nodes', async () => {
    const [alice, bob] = await users(2);
    await direct(node1, alice, bob);
    const b = await listening(node1, bob);
    const changes = () => b.payloads('UserPresenceChanged', (p) => p.user_id === alice);

    // Three heartbeats at once, one per node: one transition to online.
    await Promise.all([node1, node2, node3].map((node) => ok(node, alice, 'POST', '/presence/heartbeat')));
    await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === true);
    await ok(node2, alice, 'POST', '/presence/heartbeat'); // online already: no transition
    // Two offline signals at once, on two nodes: one transition to offline.
    await Promise.all([node2, node3].map((node) => ok(node, alice, 'POST', '/presence/offline')));
    await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === false);
    await sleep(PRESENCE_TIMEOUT_MS + 300); // long enough for any node's sweep to have announced something more
    console.log(`presence events heard by bob: ${JSON.stringify(changes())}`);
    assert.deepEqual(changes(), [
      { user_id: alice, is_online: true },
      { user_id: alice, is_online: false },
    ]);
  });

  test('the server-side presence expiry is dispatched once, not once per sweeping node', async () => {
    const [alice, bob, carol] = await users(3);
    await group(node2, alice, [bob, carol]);
    const b = await listening(node1, bob);
    const c = await listening(node3, carol);

    // Beats on every node, then silence: all three nodes sweep every 100 ms.
    for (const node of [node1, node2, node3]) await ok(node, alice, 'POST', '/presence/heartbeat');
    await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === true);
    await b.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === false, PRESENCE_TIMEOUT_MS + 3_000);
    await c.waitFor('UserPresenceChanged', (p) => p.user_id === alice && p.is_online === false, 1_000);
    await sleep(800); // several more sweeps of every node
    for (const client of [b, c]) {
      assert.deepEqual(client.payloads('UserPresenceChanged', (p) => p.user_id === alice), [
        { user_id: alice, is_online: true },
        { user_id: alice, is_online: false },
      ]);
    }
    const presence = await ok(node3, bob, 'GET', `/presence?user_ids=${alice}`);
    assert.equal(presence.data[0].is_online, false);
    assert.notEqual(presence.data[0].last_seen_at, null);
  });

  test('an unrenewed typing start ends with one UserTyping false from the servers, whichever node took it', async () => {
    const [alice, bob] = await users(2);
    const conversationId = await direct(node1, alice, bob);
    const b = await listening(node1, bob, [conversationId]);

    await ok(node2, alice, 'POST', `/conversations/${conversationId}/typing`, { is_typing: true }, 204);
    await b.waitFor('UserTyping', (p) => p.is_typing === true);
    await b.waitFor('UserTyping', (p) => p.is_typing === false, TYPING_TIMEOUT_MS + 2_000);
    await sleep(TYPING_TIMEOUT_MS + 200);
    assert.deepEqual(b.payloads('UserTyping').map((p) => p.is_typing), [true, false]);
  });

  test('a typing renewal through another node is not cut short by the first node’s expiry', async () => {
    const [alice, bob] = await users(2);
    const conversationId = await direct(node1, alice, bob);
    const b = await listening(node3, bob, [conversationId]);

    await ok(node1, alice, 'POST', `/conversations/${conversationId}/typing`, { is_typing: true }, 204);
    await sleep(TYPING_TIMEOUT_MS / 2);
    const renewedAt = Date.now();
    await ok(node2, alice, 'POST', `/conversations/${conversationId}/typing`, { is_typing: true }, 204);
    // Node 1's timer fires about TYPING_TIMEOUT_MS / 2 from here; it must not end the renewed indication.
    await b.waitFor('UserTyping', (p) => p.is_typing === false, TYPING_TIMEOUT_MS + 2_000);
    const stoppedAfter = Date.now() - renewedAt;
    console.log(`typing false heard ${stoppedAfter} ms after the renewal (timeout ${TYPING_TIMEOUT_MS} ms)`);
    assert.ok(stoppedAfter >= TYPING_TIMEOUT_MS - 10, `the false came ${stoppedAfter} ms after the renewal, before its timeout`);
    await sleep(TYPING_TIMEOUT_MS);
    assert.deepEqual(b.payloads('UserTyping').map((p) => p.is_typing), [true, true, false]);
  });

  test('a group member on node 1 removed through node 2 stops receiving the group’s events at once and cannot subscribe again', async () => {
    const [owner, member, removed] = await users(3);
    const groupId = await group(node3, owner, [member, removed]);
    const m = await listening(node3, member, [groupId]);
    const r = await listening(node1, removed, [groupId]);
    const before = await send(node2, owner, groupId, 'before');
    await r.waitFor('MessageSent', (p) => p.id === before.id);

    await ok(node2, owner, 'DELETE', `/groups/${groupId}/participants/${removed}`, undefined, 204);
    // Straight after the removal's response, through a third node.
    const afterRemoval = await send(node3, owner, groupId, 'after');
    await ok(node2, owner, 'POST', `/conversations/${groupId}/typing`, { is_typing: true }, 204);
    await m.waitFor('MessageSent', (p) => p.id === afterRemoval.id);
    await m.waitFor('UserTyping', (p) => p.is_typing === true);
    await r.waitFor('GroupMembershipRevoked', (p) => p.conversation_id === groupId);
    await r.expectNone('MessageSent', (p) => p.id === afterRemoval.id);
    assert.deepEqual(r.payloads('UserTyping'), []);

    const again = await connect(node1, removed, node3);
    const outcome = await again.trySubscribe(`chat.conversation.${groupId}`);
    assert.equal(!outcome.ok && outcome.error.status, 403);
  });

  test('every node answers /healthz, /readyz (database and Redis checked) and /metrics', async () => {
    const [alice, bob] = await users(2);
    const conversationId = await direct(node2, alice, bob);
    await listening(node1, bob, [conversationId]);
    await send(node2, alice, conversationId, 'counted');

    for (const node of [node1, node2, node3]) {
      const health = await fetch(`${node.baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
      assert.equal(health.status, 200);
      assert.deepEqual(await health.json(), { status: 'ok' });

      const ready = await fetch(`${node.baseUrl}/readyz`, { signal: AbortSignal.timeout(5_000) });
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ready', checks: { database: 'ok', redis: 'ok' } });

      const metrics = await fetch(`${node.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) });
      assert.equal(metrics.status, 200);
      assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
      const text = await metrics.text();
      for (const name of ['parley_socket_connections', 'parley_events_dispatched_total', 'parley_http_request_duration_seconds_bucket', 'parley_redis_up 1']) {
        assert.ok(text.includes(name), `${node.name}'s /metrics has ${name}`);
      }
    }
    // Per node: node 1 holds Bob's socket, node 2 dispatched the message.
    const metrics1 = await (await fetch(`${node1.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    assert.match(metrics1, /^parley_socket_connections [1-9]/m);
    const metrics2 = await (await fetch(`${node2.baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    assert.match(metrics2, /^parley_events_dispatched_total\{event="MessageSent"\} [1-9]/m);
  });

  test('on a Redis Cluster each Pusher channel has a shard channel of its own, named after it, and the channels spread over the masters', { skip: redisSkip() }, async () => {
    const [alice, ...others] = await users(9);
    const conversationIds = await Promise.all(others.map((other) => direct(node2, alice, other)));
    await listening(node1, alice, conversationIds);
    const byMaster = redis!.shardChannels(`${cluster.redisPrefix}*`);
    const all = [...byMaster.values()].flat();
    for (const name of [...conversationIds.map((id) => `private-chat.conversation.${id}`), `private-chat.user.${alice}`]) {
      assert.ok(all.includes(`${cluster.redisPrefix}ch:{${name}}`), `a shard channel for ${name} among ${JSON.stringify(all)}`);
    }
    // Nine channels over three masters: more than one master carries some (each master's share is its slots').
    assert.ok([...byMaster.values()].filter((channels) => channels.some((c) => c.includes(':ch:'))).length >= 2, JSON.stringify([...byMaster]));
  });
});
