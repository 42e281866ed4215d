// What a realtime server asks of its cluster (ClusterLink, src/realtime/index.ts): a channel's traffic from the
// other nodes while it has subscribers here, and no subscription_succeeded before that traffic flows. The
// link here is a recording one whose listen() resolves when the test says; the real one is Redis
// (fanout/redis.ts, test/multinode/selective-fanout.test.ts).
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { ClusterLink } from '../../src/realtime/index.js';
import { until } from '../../testkit/wait.js';
import { RawClient, cleanup, start, succeeded } from '../support/realtime.js';

afterEach(cleanup);

/** A link that records what it is asked and lets the test decide when each channel's traffic flows. */
function recordingLink() {
  const calls: string[] = [];
  const flowing = new Map<string, () => void>();
  const link: ClusterLink = {
    relay: () => {},
    listen(channel) {
      calls.push(`listen ${channel}`);
      return new Promise<void>((resolve) => flowing.set(channel, resolve));
    },
    unlisten: (channel) => void calls.push(`unlisten ${channel}`),
  };
  /** Lets `channel`'s traffic flow, once the server has asked for it. */
  async function flow(channel: string): Promise<void> {
    await until(() => flowing.has(channel), 2000, () => `no listen(${channel})`);
    flowing.get(channel)!();
  }
  return { link, calls, flow };
}

describe('a realtime server in a cluster', () => {
  test('asks for a channel’s traffic on its first subscriber here and stops on its last', async () => {
    const h = await start();
    const { link, calls, flow } = recordingLink();
    h.rt.joinCluster(link);
    const a = await RawClient.established(h.url());
    const b = await RawClient.established(h.url());
    a.client.subscribe('news');
    b.client.subscribe('news');
    await flow('news');
    assert.equal(await a.client.next(), succeeded('news'));
    assert.equal(await b.client.next(), succeeded('news'));
    a.client.ws.close();
    await a.client.closed;
    await b.client.assertNextIsPong();
    assert.deepEqual(calls, ['listen news']);
    b.client.send({ event: 'pusher:unsubscribe', data: { channel: 'news' } });
    await b.client.assertNextIsPong();
    assert.deepEqual(calls, ['listen news', 'unlisten news']);
  });

  test('answers subscription_succeeded only once the channel’s traffic flows', async () => {
    const h = await start();
    const { link, flow } = recordingLink();
    h.rt.joinCluster(link);
    const a = await RawClient.established(h.url());
    a.client.subscribe('news');
    await assert.rejects(a.client.next(200), /no frame within/);
    await flow('news');
    assert.equal(await a.client.next(), succeeded('news'));
    // Already flowing: the next subscriber is answered at once.
    const b = await RawClient.established(h.url());
    b.client.subscribe('news');
    assert.equal(await b.client.next(), succeeded('news'));
  });

  test('channels subscribed before the server joined are asked for when it joins', async () => {
    const h = await start();
    const a = await RawClient.established(h.url());
    a.client.subscribe('early');
    assert.equal(await a.client.next(), succeeded('early'));
    const { link, calls } = recordingLink();
    h.rt.joinCluster(link);
    assert.deepEqual(calls, ['listen early']);
    assert.throws(() => h.rt.joinCluster(link), /once/);
  });
});
