// Bans and erasures across two real Parley processes on one PostgreSQL and one Redis: each node knows the users
// whose tokens it has seen (no query per request, store/known-users.ts), so what a ban or an erasure made on
// node 1 must reach node 2 at its commit. A user known to node 2, with a socket there: a ban through node 1 closes
// that socket (4009) and node 2 refuses their token (403 user_banned) from then on, not from when its cache would
// have forgotten them; the unban through node 1 lets them in on node 2 again; an erasure through node 1 makes
// node 2 refuse the erased user's token (401).
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { Cluster } from '../../testkit/cluster.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { until } from '../../testkit/wait.js';
import { EchoClient } from '../support/echo.js';

describe('bans and erasures reach every node (two processes)', { timeout: 90_000 }, () => {
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;
  const clients: EchoClient[] = [];
  let nextUserId = 8600;

  before(async () => {
    cluster = await Cluster.start({ nodes: 2 });
    [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
  });
  afterEach(async (t) => {
    await Promise.all(clients.splice(0).map((c) => c.disconnect()));
    if ((t as { passed?: boolean }).passed === false) console.error(cluster.logs());
  });
  after(async () => {
    await Promise.all(clients.splice(0).map((c) => c.disconnect()));
    await cluster?.close();
  });

  /** A user known to node 2: their token has been answered there (twice, so from what node 2 remembers). */
  async function knownToNode2(): Promise<number> {
    const id = nextUserId++;
    for (let i = 0; i < 2; i++) assert.equal((await node2.request(id, 'GET', '/conversations')).status, 200);
    return id;
  }

  test('a ban through node 1 closes the socket on node 2 and node 2 refuses the token at once; the unban lets them back', async () => {
    const banned = await knownToNode2();
    const client = await EchoClient.connect(node2, banned);
    clients.push(client);
    await client.subscribeUser();
    const errors: number[] = [];
    client.echo.connector.pusher.connection.bind('error', (e: { data?: { code?: number } }) => void (e.data?.code !== undefined && errors.push(e.data.code)));

    assert.equal((await node1.server('PUT', `/users/${banned}/ban`, { reason: 'spam' })).status, 200);
    await until(() => errors.length > 0, 2_000, () => 'the socket on node 2 was not closed');
    assert.ok(errors.every((code) => code === 4009), errors.join(', '));
    // Node 2 heard the forget before the close (both through Redis, in that order): the very next request is refused.
    const refused = await node2.request(banned, 'GET', '/conversations');
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'user_banned');

    assert.equal((await node1.server('DELETE', `/users/${banned}/ban`)).status, 204);
    assert.equal((await node2.request(banned, 'GET', '/conversations')).status, 200, 'a banned user is never remembered, so the unban needs no message');
  });

  test('an erasure through node 1: node 2 refuses the erased user\'s token (401)', async () => {
    const erased = await knownToNode2();
    assert.equal((await node1.server('DELETE', `/users/${erased}`)).status, 202);
    // The forget is published before the DELETE answers; node 2 takes it within a Redis round trip.
    await until(async () => (await node2.request(erased, 'GET', '/conversations')).status === 401, 1_000, () => 'node 2 still accepts the erased user\'s token');
  });
});
