// What a realtime node asks of its broker (src/realtime/broker/broker.ts): a channel's publications from the other
// nodes while it has subscribers here, and no subscription_succeeded before they flow; its own publications
// reach its sockets only through the broker's callback, as the other nodes' do. The broker here is a
// recording one that the test drives; the real ones are broker/memory.ts and broker/redis.ts
// (test/multinode/selective-fanout.test.ts).
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import { userAuth, type Broker, type BrokerHandler, type Publication } from '../../src/realtime/index.js';
import { until } from '../../testkit/wait.js';
import { APP_KEY, APP_SECRET, RawClient, cleanup, pusherError, start, succeeded } from '../support/realtime.js';

afterEach(cleanup);

/** A broker that records what it is asked, lets the test decide when each channel's traffic flows, and holds publications until released. */
function recordingBroker() {
  const calls: string[] = [];
  const flowing = new Map<string, () => void>();
  const held: [readonly string[], Publication][] = [];
  let handler: BrokerHandler | undefined;
  const broker: Broker = {
    async start(h) {
      handler = h;
    },
    publish(channels, publication) {
      calls.push(`publish ${channels.join(',')}`);
      held.push([channels, publication]);
    },
    subscribe(channel) {
      calls.push(`subscribe ${channel}`);
      return new Promise<void>((resolve) => flowing.set(channel, resolve));
    },
    unsubscribe: (channel) => void calls.push(`unsubscribe ${channel}`),
    command: async (command) => void calls.push(`command ${JSON.stringify(command)}`),
    survey: async () => new Map(),
    received: () => 0,
  };
  /** Lets `channel`'s traffic flow, once the node has asked for it. */
  async function flow(channel: string): Promise<void> {
    await until(() => flowing.has(channel), 2000, () => `no subscribe(${channel})`);
    flowing.get(channel)!();
  }
  /** Hands the held publications back to the node, as a broker does once it has carried them. */
  function release(): void {
    for (const [channels, publication] of held.splice(0)) handler!.publication(channels, publication);
  }
  return { broker, calls, flow, release, handler: () => handler! };
}

describe('a realtime node and its broker', () => {
  test('asks for a channel’s publications on its first subscriber here and stops on its last', async () => {
    const { broker, calls, flow } = recordingBroker();
    const h = await start({ broker });
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
    assert.deepEqual(calls, ['subscribe news']);
    b.client.send({ event: 'pusher:unsubscribe', data: { channel: 'news' } });
    await b.client.assertNextIsPong();
    assert.deepEqual(calls, ['subscribe news', 'unsubscribe news']);
  });

  test('answers subscription_succeeded only once the channel’s publications flow', async () => {
    const { broker, flow } = recordingBroker();
    const h = await start({ broker });
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

  test('its own publications reach its sockets through the broker’s callback, like another node’s', async () => {
    const { broker, calls, flow, release, handler } = recordingBroker();
    const h = await start({ broker });
    const a = await RawClient.established(h.url());
    a.client.subscribe('news');
    await flow('news');
    assert.equal(await a.client.next(), succeeded('news'));
    await h.rt.publish(['news', 'empty'], 'Hello', '{"n":1}');
    assert.deepEqual(calls, ['subscribe news', 'publish news,empty']);
    await a.client.assertNextIsPong(); // nothing written before the broker hands it back
    release();
    assert.equal(await a.client.next(), '{"event":"Hello","channel":"news","data":"{\\"n\\":1}"}');
    // Another node's client event arrives as a ready frame.
    handler().publication(['news'], { kind: 'frame', frame: '{"event":"client-typing","channel":"news","data":{}}' });
    assert.equal(await a.client.next(), '{"event":"client-typing","channel":"news","data":{}}');
  });

  test('unsubscribing and terminating a user are carried out here and sent to the other nodes; their orders are carried out here', async () => {
    const { broker, calls, handler } = recordingBroker();
    const h = await start({ broker });
    await h.rt.unsubscribeUser('private-room', '7');
    await h.rt.terminateUserConnections('7');
    assert.deepEqual(calls, ['command {"kind":"unsubscribe","channel":"private-room","userId":"7"}', 'command {"kind":"terminate","userId":"7"}']);
    const a = await RawClient.established(h.url());
    const userData = JSON.stringify({ id: '8' });
    a.client.send({ event: 'pusher:signin', data: { auth: userAuth(APP_KEY, APP_SECRET, a.socketId, userData), user_data: userData } });
    assert.equal(JSON.parse(await a.client.next()).event, 'pusher:signin_success');
    handler().command({ kind: 'terminate', userId: '8' });
    assert.equal(await a.client.next(), pusherError(4009, 'Connection terminated'));
    assert.equal((await a.client.closed).code, 4009);
  });
});
