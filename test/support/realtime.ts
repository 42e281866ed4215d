// Harness for black-box tests of the embedded Pusher protocol v7 server: the realtime server on a real
// node:http server, raw `ws` clients that keep every frame for exact assertions, and pusher-js clients as
// apps use them. Everything a test opens is closed by `cleanup`, which each test file registers itself:
//
//   afterEach(cleanup);

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Options as PusherOptions } from 'pusher-js';
import { WebSocket, type ClientOptions } from 'ws';
import { settingDefault } from '../../src/config/settings.js';
import {
  PONG_TIMEOUT_SECONDS,
  channelAuth,
  createRealtimeNode,
  memoryParts,
  type AuthorizationLedger,
  type Occupancy,
  type RealtimeNode,
  type RealtimeSettings,
} from '../../src/realtime/index.js';
import { localPusherOptions, Pusher, type PusherClient } from '../../testkit/pusher.js';

export { Pusher, type PusherClient } from '../../testkit/pusher.js';

export const APP_KEY = 'test-key';
export const APP_SECRET = 'test-secret';
export const SOCKET_ID = /^\d+\.\d+$/;

/** One channel's occupancy as the HTTP API reports it: sockets, and distinct users on presence channels. */
export interface ChannelInfo {
  readonly subscriptionCount: number;
  readonly userCount?: number;
}

export interface Harness {
  rt: RealtimeNode;
  port: number;
  /** The node's authorization store: what the HTTP auth endpoint records before it answers. */
  authorizations: AuthorizationLedger;
  /** A ws:// URL on this server; by default the one pusher-js connects to. */
  url(path?: string): string;
  /** The signature a channel auth endpoint of the test app gives socketId for channel. */
  authorize(socketId: string, channel: string): string;
  /** From rt.occupancy: one channel's, undefined when nobody is subscribed. */
  channelInfo(channel: string): Promise<ChannelInfo | undefined>;
  /** From rt.occupancy: the occupied channels whose names start with prefix (all when omitted). */
  channelList(prefix?: string): Promise<Map<string, ChannelInfo>>;
  /** From rt.occupancy: the users present on a presence channel, in join order. */
  presenceUserIds(channel: string): Promise<string[]>;
}

const infoOf = (o: Occupancy): ChannelInfo => (o.userIds ? { subscriptionCount: o.subscriptionCount, userCount: o.userIds.length } : { subscriptionCount: o.subscriptionCount });

const cleanups: (() => Promise<void> | void)[] = [];

/** Runs something when the current test ends (last registered, first run). */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

/** Closes every client and server the test opened. Register with `afterEach(cleanup)`. */
export async function cleanup(): Promise<void> {
  while (cleanups.length > 0) await cleanups.pop()!();
}

/** What a test may change of a node's settings; clientEvents field by field. */
export type TestSettings = Partial<Omit<RealtimeSettings, 'clientEvents'>> & { clientEvents?: Partial<RealtimeSettings['clientEvents']> };

/** A one-node server's settings as a default deployment has them (the settings table's defaults), with the test app. */
export function testSettings(options: TestSettings = {}): RealtimeSettings {
  return {
    appKey: APP_KEY,
    appSecret: APP_SECRET,
    activityTimeoutSeconds: settingDefault('BROADCAST_ACTIVITY_TIMEOUT'),
    pongTimeoutSeconds: PONG_TIMEOUT_SECONDS,
    maxMessageBytes: settingDefault('BROADCAST_MAX_MESSAGE_BYTES'),
    maxBufferedBytes: settingDefault('BROADCAST_MAX_BUFFERED_BYTES'),
    maxChannelsPerConnection: settingDefault('BROADCAST_MAX_CHANNELS_PER_CONNECTION'),
    maxConnections: settingDefault('BROADCAST_MAX_CONNECTIONS'),
    maxConnectionsPerAddress: settingDefault('BROADCAST_MAX_CONNECTIONS_PER_ADDRESS'),
    trustedProxies: settingDefault('CHAT_TRUSTED_PROXIES'),
    maxFramesPerSecond: settingDefault('BROADCAST_MAX_FRAMES_PER_SECOND'),
    maxFrameBurst: settingDefault('BROADCAST_MAX_FRAME_BURST'),
    maxPresenceMembers: settingDefault('BROADCAST_MAX_PRESENCE_MEMBERS'),
    allowedOrigins: settingDefault('BROADCAST_ALLOWED_ORIGINS'),
    serverOwnedChannelPrefixes: [],
    revocableChannelPrefixes: [],
    ...memoryParts(),
    webhooks: null,
    logger: pino({ level: 'silent' }),
    ...options,
    clientEvents: {
      enabled: settingDefault('BROADCAST_CLIENT_EVENTS'),
      perSecond: settingDefault('BROADCAST_CLIENT_EVENTS_PER_SECOND'),
      maxDataBytes: settingDefault('BROADCAST_MAX_EVENT_BYTES'),
      ...options.clientEvents,
    },
  };
}

/** A realtime server with the test app key and secret (plus `options`) on a fresh port of 127.0.0.1. */
export async function start(options: TestSettings = {}): Promise<Harness> {
  const settings = testSettings(options);
  const rt = await createRealtimeNode(settings);
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => {
    if (!rt.handleUpgrade(req, socket, head)) socket.destroy();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  onCleanup(async () => {
    await rt.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    rt,
    port,
    authorizations: settings.authorizations,
    url: (path = `/app/${APP_KEY}?protocol=7&client=js&version=8.6.0`) => `ws://127.0.0.1:${port}${path}`,
    authorize: (socketId, channel) => channelAuth(APP_KEY, APP_SECRET, socketId, channel),
    async channelInfo(channel) {
      const o = (await rt.occupancy({ channel })).get(channel);
      return o && infoOf(o);
    },
    async channelList(prefix = '') {
      return new Map([...(await rt.occupancy({ prefix }))].map(([channel, o]) => [channel, infoOf(o)]));
    },
    presenceUserIds: async (channel) => (await rt.occupancy({ channel })).get(channel)?.userIds ?? [],
  };
}

/** A raw client that keeps every text frame in order, so tests can assert exact JSON. */
export class RawClient {
  readonly ws: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly frames: string[] = [];
  private readonly waiters: ((frame: string) => void)[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      const frame = data.toString();
      const waiter = this.waiters.shift();
      if (waiter) waiter(frame);
      else this.frames.push(frame);
    });
    this.closed = new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** Opens a socket (ws client options such as `origin` pass through) and resolves once it is open. */
  static async connect(url: string, options?: ClientOptions): Promise<RawClient> {
    const ws = new WebSocket(url, options);
    const client = new RawClient(ws);
    onCleanup(() => ws.terminate());
    await once(ws, 'open');
    return client;
  }

  /** Connects and consumes pusher:connection_established; returns the client and its socket id. */
  static async established(url: string, options?: ClientOptions): Promise<{ client: RawClient; socketId: string }> {
    const client = await RawClient.connect(url, options);
    const hello = JSON.parse(await client.next()) as { event: string; data: string };
    assert.equal(hello.event, 'pusher:connection_established');
    const { socket_id } = JSON.parse(hello.data) as { socket_id: string };
    return { client, socketId: socket_id };
  }

  next(timeoutMs = 2000): Promise<string> {
    const queued = this.frames.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(onFrame), 1);
        reject(new Error(`no frame within ${timeoutMs} ms`));
      }, timeoutMs);
      const onFrame = (frame: string): void => {
        clearTimeout(timer);
        resolve(frame);
      };
      this.waiters.push(onFrame);
    });
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  subscribe(channel: string, auth?: string): void {
    this.send({ event: 'pusher:subscribe', data: auth === undefined ? { channel } : { channel, auth } });
  }

  /** Proves the socket is open and that nothing else was queued before: the very next frame is a pong. */
  async assertNextIsPong(): Promise<void> {
    this.send({ event: 'pusher:ping', data: {} });
    assert.equal(await this.next(), PONG);
  }
}

export const PONG = '{"event":"pusher:pong","data":{}}';

/** The exact pusher_internal:subscription_succeeded of a public, private or encrypted channel. */
export const succeeded = (channel: string): string =>
  `{"event":"pusher_internal:subscription_succeeded","channel":${JSON.stringify(channel)},"data":"{}"}`;

/** The exact pusher:error frame (no channel; `data` an object, as on hosted Pusher). */
export const pusherError = (code: number, message: string): string =>
  `{"event":"pusher:error","data":{"code":${code},"message":${JSON.stringify(message)}}}`;

/** The exact pusher:subscription_error frame (`data` an object). */
export const subscriptionError = (channel: string, type: string, error: string, status: number): string =>
  `{"event":"pusher:subscription_error","channel":${JSON.stringify(channel)},"data":{"type":${JSON.stringify(type)},"error":${JSON.stringify(error)},"status":${status}}}`;

/** A pusher-js client on the harness; by default private channels are signed with h.authorize. */
export function pusherClient(h: Harness, options: Partial<PusherOptions> = {}, key = APP_KEY): PusherClient {
  const client = new Pusher(key, {
    ...localPusherOptions(h.port),
    channelAuthorization: {
      customHandler: (params, callback) => callback(null, { auth: h.authorize(params.socketId, params.channelName) }),
    },
    ...options,
  });
  onCleanup(() => client.disconnect());
  return client;
}

/** Resolves once the pusher-js client is connected (at once if it already is). */
export function connected(client: PusherClient): Promise<void> {
  if (client.connection.state === 'connected') return Promise.resolve();
  return new Promise((resolve) => client.connection.bind('connected', () => resolve()));
}

/** Polls `condition` every 10 ms; fails after timeoutMs. For state the server reaches after a socket event. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
