// Rate limits with two real nodes on one PostgreSQL and one Redis: a user's requests spread over both nodes
// count once (the limit is the deployment's, not each node's), and so do failed authentications from one address.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Cluster } from '../../testkit/cluster.js';
import type { RedisCluster } from '../../testkit/redis-cluster.js';
import { requestJson } from '../../testkit/http.js';
import type { ParleyNode } from '../../testkit/parley-node.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';

const LIMIT = 4;

for (const backend of REDIS_BACKENDS) describe(`rate limits shared by two nodes through ${backend.name}`, { timeout: 120_000 }, () => {
  let redis: RedisCluster | undefined;
  let cluster: Cluster;
  let node1: ParleyNode;
  let node2: ParleyNode;
  before(async () => {
    redis = await backend.start();
    cluster = await Cluster.start({
      redis,
      nodes: 2,
      env: { CHAT_RATE_EDITS_PER_MINUTE: String(LIMIT), CHAT_RATE_AUTH_FAILURES_PER_MINUTE: String(LIMIT) },
    });
    [node1, node2] = cluster.nodes as [ParleyNode, ParleyNode];
  });
  after(async () => {
    await cluster?.close();
    await redis?.close();
  });

  test('edits alternating between the nodes: the limit holds for the pair, not per node', async () => {
    const [alice, bob] = [7001, 7002];
    assert.equal((await node2.request(bob, 'GET', '/conversations')).status, 200);
    const conversation = await node1.request(alice, 'POST', '/conversations', { user_id: bob });
    const sent = await node1.request(alice, 'POST', `/conversations/${conversation.body.data.id}/messages`, { body: 'v0' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const statuses: number[] = [];
    for (let i = 1; i <= LIMIT + 2; i++) {
      const node = i % 2 === 0 ? node2 : node1;
      statuses.push((await node.request(alice, 'PATCH', `/messages/${sent.body.data.id}`, { body: `v${i}` })).status);
    }
    assert.deepEqual(statuses, [...Array<number>(LIMIT).fill(200), 429, 429], `per node, each would have allowed ${LIMIT}`);
    const refused = await node2.request(alice, 'DELETE', `/messages/${sent.body.data.id}`);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'rate_limited');
    assert.match(refused.headers.get('retry-after') ?? '', /^([1-9]|[1-5]\d|60)$/);
  });

  test('failed authentications from one address count across the nodes', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT + 2; i++) {
      const node = i % 2 === 0 ? node1 : node2;
      statuses.push((await requestJson(`${node.api}/conversations`, { method: 'GET', token: 'not-a-token' })).status);
    }
    assert.deepEqual(statuses, [...Array<number>(LIMIT).fill(401), 429, 429]);
    assert.equal((await node2.request(7003, 'GET', '/conversations')).status, 200, 'a valid token from the same address still works');
  });
});
