// Publishing in a batch: the frames one batch sends to a socket are written together when the batch ends
// (the TCP socket is corked at the first and uncorked at the end: one writev), in order; outside a batch the
// frames of one turn of the event loop are written together when the loop turns. A fake socket shows the writes; a real server shows what clients get. Published frames
// are framed once by Parley itself (textFrame), whatever their length.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { Socket as NetSocket } from 'node:net';
import { afterEach, describe, test } from 'node:test';
import PusherServer from 'pusher';
import { WebSocket } from 'ws';
import { Connection, batchSends, textFrame } from '../../src/realtime/pusher/connection.js';
import { startTestApp } from '../support/app.js';
import { RawClient, cleanup, onCleanup, start, succeeded } from '../support/realtime.js';

afterEach(cleanup);

/** A stand-in for ws's WebSocket that logs what reaches its TCP socket. */
function fakeSocket(log: string[]) {
  const ws = Object.assign(new EventEmitter(), {
    readyState: WebSocket.OPEN,
    bufferedAmount: 0,
    send: (frame: string | Buffer) => log.push(`write ${frame.toString()}`),
    _socket: { cork: () => log.push('cork'), uncork: () => log.push('uncork') },
  });
  return ws as unknown as WebSocket;
}

test('in a batch a socket is corked at its first frame and uncorked once at the end', () => {
  const log: string[] = [];
  const a = new Connection('1.1', fakeSocket(log), 1024);
  batchSends(() => {
    a.send('one');
    a.send('two');
    log.push('batch ends');
  });
  assert.deepEqual(log, ['cork', 'write one', 'write two', 'batch ends', 'uncork']);
});

test('outside a batch, the frames of one turn of the event loop leave together when it turns', async () => {
  const log: string[] = [];
  const a = new Connection('1.1', fakeSocket(log), 1024);
  const b = new Connection('1.2', fakeSocket(log), 1024);
  a.send('one');
  b.send('to b');
  a.send('two');
  log.push('turn ends');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(log, ['cork', 'write one', 'cork', 'write to b', 'write two', 'turn ends', 'uncork', 'uncork']);
  a.send('three');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(log.slice(8), ['cork', 'write three', 'uncork'], 'the next turn corks again');
});

test('nested batches write at the end of the outermost one', () => {
  const log: string[] = [];
  const a = new Connection('1.1', fakeSocket(log), 1024);
  batchSends(() => {
    batchSends(() => a.send('inner'));
    log.push('inner done');
    a.send('outer');
  });
  assert.deepEqual(log, ['cork', 'write inner', 'inner done', 'write outer', 'uncork']);
});

async function subscribed(url: string, channels: string[]): Promise<RawClient> {
  const { client } = await RawClient.established(url);
  for (const channel of channels) {
    client.subscribe(channel);
    assert.equal(await client.next(), succeeded(channel));
  }
  return client;
}

test('the frames of one batch reach a real socket in order; the batch returns what fn returned', async () => {
  const h = await start();
  const client = await subscribed(h.url(), ['room', 'inbox']);

  const result = h.rt.batch(() => {
    h.rt.publish(['room'], 'MessageSent', '{"id":1}');
    h.rt.publish(['inbox'], 'InboxUpdated', '{"id":2}');
    return 42;
  });

  assert.equal(result, 42);
  assert.equal(await client.next(), '{"event":"MessageSent","channel":"room","data":"{\\"id\\":1}"}');
  assert.equal(await client.next(), '{"event":"InboxUpdated","channel":"inbox","data":"{\\"id\\":2}"}');
});

test('a batch that throws still writes what it sent, and later publishes are written at once', async () => {
  const h = await start();
  const client = await subscribed(h.url(), ['room']);
  assert.throws(() =>
    h.rt.batch(() => {
      h.rt.publish(['room'], 'before-error', '1');
      throw new Error('boom');
    }),
  );
  assert.equal(await client.next(), '{"event":"before-error","channel":"room","data":"1"}');
  h.rt.publish(['room'], 'after', '2');
  assert.equal(await client.next(), '{"event":"after","channel":"room","data":"2"}');
  await client.assertNextIsPong();
});

test('a published frame is written as one WebSocket frame whatever its length (7-, 16- and 64-bit lengths)', async () => {
  const h = await start();
  const client = await subscribed(h.url(), ['room']);
  for (const size of [0, 90, 125, 126, 65_535 - 60, 65_536, 200_000]) {
    const data = 'x'.repeat(size);
    h.rt.publish(['room'], 'big', data);
    const frame = await client.next();
    assert.equal(frame, `{"event":"big","channel":"room","data":${JSON.stringify(data)}}`, `payload of ${size} characters`);
  }
  await client.assertNextIsPong();
});

test('textFrame lays out the header as RFC 6455 says', () => {
  assert.deepEqual([...textFrame(Buffer.from('hi'))], [0x81, 2, 0x68, 0x69]);
  const mid = textFrame(Buffer.alloc(300));
  assert.deepEqual([...mid.subarray(0, 4)], [0x81, 126, 0x01, 0x2c]);
  assert.equal(mid.length, 304);
  const big = textFrame(Buffer.alloc(70_000));
  assert.deepEqual([...big.subarray(0, 10)], [0x81, 127, 0, 0, 0, 0, 0, 0x01, 0x11, 0x70]);
  assert.equal(big.length, 70_010);
});

describe('through the Pusher HTTP API', () => {
  /** Counts the writes the server makes to sockets it accepted on `port` (a writev of many frames is one). */
  function countServerWrites(port: number): { writes: () => number; restore: () => void } {
    const proto = NetSocket.prototype as unknown as { _write: (...a: unknown[]) => unknown; _writev: (...a: unknown[]) => unknown };
    const { _write, _writev } = proto;
    let writes = 0;
    const counted = (original: (...a: unknown[]) => unknown) =>
      function (this: NetSocket, ...args: unknown[]) {
        if (this.localPort === port) writes++;
        return original.apply(this, args);
      };
    proto._write = counted(_write);
    proto._writev = counted(_writev);
    return { writes: () => writes, restore: () => Object.assign(proto, { _write, _writev }) };
  }

  test('a batch_events of ten events to one channel reaches its subscriber in one write, in order', async () => {
    const app = await startTestApp();
    onCleanup(() => app.close());
    const { appId, appKey, appSecret } = app.config.broadcast;
    const sdk = new PusherServer({ appId, key: appKey, secret: appSecret, host: '127.0.0.1', port: String(app.port), useTLS: false });
    const client = await subscribed(`ws://127.0.0.1:${app.port}/app/${appKey}?protocol=7&client=js&version=8.6.0`, ['burst']);
    const spy = countServerWrites(app.port);
    try {
      const response = await sdk.triggerBatch(Array.from({ length: 10 }, (_, i) => ({ channel: 'burst', name: 'tick', data: { i } })));
      assert.equal(response.status, 200);
      const frames = [];
      for (let i = 0; i < 10; i++) frames.push(JSON.parse(await client.next()) as { event: string; data: string });
      assert.deepEqual(frames.map((f) => JSON.parse(f.data).i), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // The HTTP answer to the SDK is one more write on the same port; the ten frames are one.
      assert.equal(spy.writes(), 2, 'one write for the ten frames and one for the HTTP answer');
    } finally {
      spy.restore();
    }
  });
});
