// A real Laravel Echo client (over pusher-js and a real WebSocket) for one user of a running Parley, as a
// browser app would use it: private channels authorized by POST /broadcasting/auth with the user's bearer
// token, events listened to by broadcast name with the leading dot. Every event it hears is recorded, so
// tests can wait for one (waitFor) or prove that one never came (expectNone).
import Echo from 'laravel-echo';
import type PusherModule from 'pusher-js';
import type { ChannelAuthorizationHandler } from 'pusher-js';
import { localPusherOptions, Pusher } from '../../testkit/pusher.js';

/**
 * The broadcast names of v1's event table in docs/events.md (ConversationInboxUpdated is broadcast as InboxUpdated), and
 * MessageReactionsUpdated, the event v1.1 adds.
 */
export const BROADCAST_NAMES = [
  'MessageSent',
  'MessageUpdated',
  'MessageDeleted',
  'ConversationRead',
  'UserTyping',
  'GroupParticipantsChanged',
  'InboxUpdated',
  'UserPresenceChanged',
  'UserBlockChanged',
  'GroupMembershipRevoked',
  'MessageReactionsUpdated',
  // v1.2
  'ThreadReplySent',
  'ThreadUpdated',
  'ThreadRead',
  'MessagePinned',
  'ConversationStateChanged',
  'MessageHidden',
] as const;
export type BroadcastName = (typeof BROADCAST_NAMES)[number];

/** One event as Echo delivered it: the channel as Echo names it (without `private-`), the name, the payload. */
export interface Received {
  readonly channel: string;
  readonly event: string;
  // Payloads are JSON from the wire; tests inspect them freely.
  readonly payload: any;
}

/** What pusher-js hands to `.error(cb)` on pusher:subscription_error. */
export interface SubscriptionError {
  readonly type: string;
  readonly error: string;
  readonly status: number;
}

export type SubscriptionOutcome = { readonly ok: true } | { readonly ok: false; readonly error: SubscriptionError };

export interface EchoClientOptions {
  /** The bearer token to authorize channels with; null sends none. Default: a fresh token for the user. */
  readonly token?: string | null;
  /** Replaces the HTTP auth endpoint (e.g. to present a forged or replayed signature on the socket). */
  readonly authorize?: ChannelAuthorizationHandler;
  /** Also sign the socket in as the user (pusher:signin through /broadcasting/user-auth) once connected. */
  readonly signin?: boolean;
}

/**
 * What a client needs of a running Parley: its socket port, the API base URL (for /broadcasting/auth) and user
 * tokens. A TestApp is one; so is a node process (testkit/parley-node.ts), or a mix of two nodes (socket on one,
 * channel auth on another).
 */
export interface EchoTarget {
  readonly port: number;
  readonly api: string;
  readonly config: { readonly broadcast: { readonly appKey: string } };
  token(userId: number): Promise<string>;
}

const DEFAULT_WAIT_MS = 3000;
const DEFAULT_QUIET_MS = 300;

export type Predicate = (payload: any) => boolean;

export class EchoClient {
  readonly userId: number;
  readonly echo: Echo<'pusher'>;
  /** Events heard through `.listen('.Name')`, in arrival order. */
  readonly received: Received[] = [];
  /** Events heard through listenToAll whose name is not one of BROADCAST_NAMES. */
  readonly unknown: Received[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(userId: number, echo: Echo<'pusher'>) {
    this.userId = userId;
    this.echo = echo;
  }

  /** Connects a Laravel Echo client for userId to the app's built-in socket server and waits until connected. */
  static async connect(app: EchoTarget, userId: number, options: EchoClientOptions = {}): Promise<EchoClient> {
    const token = options.token === undefined ? await app.token(userId) : options.token;
    const echo = new Echo({
      broadcaster: 'pusher',
      // Echo's typings resolve pusher-js's default export the same CommonJS way; the runtime value is the class.
      Pusher: Pusher as unknown as typeof PusherModule,
      key: app.config.broadcast.appKey,
      ...localPusherOptions(app.port),
      authEndpoint: `${app.api}/broadcasting/auth`,
      auth: { headers: token === null ? {} : { Authorization: `Bearer ${token}` } },
      ...(options.authorize ? { channelAuthorization: { customHandler: options.authorize } } : {}),
      ...(options.signin
        ? { userAuthentication: { endpoint: `${app.api}/broadcasting/user-auth`, transport: 'ajax' as const, headers: token === null ? {} : { Authorization: `Bearer ${token}` } } }
        : {}),
    });
    const client = new EchoClient(userId, echo);
    const connection = echo.connector.pusher.connection;
    await new Promise<void>((resolve, reject) => {
      if (connection.state === 'connected') return resolve();
      const timer = setTimeout(() => {
        echo.disconnect();
        reject(new Error(`Echo for user ${userId} did not connect (state ${connection.state})`));
      }, DEFAULT_WAIT_MS);
      connection.bind('connected', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (options.signin) echo.connector.pusher.signin();
    return client;
  }

  /** The socket id Echo would send as X-Socket-ID. */
  socketId(): string {
    return this.echo.socketId() ?? '';
  }

  /** The header a request sends so that its events skip this socket. */
  excludeMe(): Record<string, string> {
    return { 'X-Socket-ID': this.socketId() };
  }

  /**
   * Subscribes to a private channel by its Echo name (`chat.user.7`, `chat.conversation.3`), listens for every
   * name of BROADCAST_NAMES, and settles when the server answers: ok, or the subscription error.
   */
  trySubscribe(channel: string): Promise<SubscriptionOutcome> {
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => resolve({ ok: false, error: { type: 'Timeout', error: `no answer to the subscription of ${channel}`, status: 0 } }),
        DEFAULT_WAIT_MS,
      );
      const settle = (outcome: SubscriptionOutcome): void => {
        clearTimeout(timer);
        resolve(outcome);
      };
      const subscription = this.echo.private(channel);
      subscription.subscribed(() => settle({ ok: true })).error((error: SubscriptionError) => settle({ ok: false, error }));
      for (const name of BROADCAST_NAMES) {
        subscription.listen(`.${name}`, (payload: unknown) => this.record(this.received, channel, name, payload));
      }
      subscription.listenToAll((event: string, payload: unknown) => {
        const name = event.startsWith('.') ? event.slice(1) : event;
        if (!(BROADCAST_NAMES as readonly string[]).includes(name)) this.record(this.unknown, channel, event, payload);
      });
    });
  }

  /** Subscribes and fails the test unless the subscription succeeds. */
  async subscribe(channel: string): Promise<void> {
    const outcome = await this.trySubscribe(channel);
    if (!outcome.ok) throw new Error(`user ${this.userId} could not subscribe to ${channel}: ${JSON.stringify(outcome.error)}`);
  }

  /** The user's own channel, chat.user.{id}. */
  subscribeUser(): Promise<void> {
    return this.subscribe(`chat.user.${this.userId}`);
  }

  subscribeConversation(conversationId: number): Promise<void> {
    return this.subscribe(`chat.conversation.${conversationId}`);
  }

  /** Recorded events with this broadcast name (optionally matching a predicate). */
  events(event: BroadcastName, predicate: Predicate = () => true): Received[] {
    return this.received.filter((r) => r.event === event && predicate(r.payload));
  }

  /** Payloads of the recorded events with this name. */
  payloads(event: BroadcastName, predicate: Predicate = () => true): any[] {
    return this.events(event, predicate).map((r) => r.payload);
  }

  /** The first event with this name matching the predicate, already received or arriving within timeoutMs. */
  waitFor(event: BroadcastName, predicate: Predicate = () => true, timeoutMs = DEFAULT_WAIT_MS): Promise<Received> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.received.find((r) => r.event === event && predicate(r.payload));
        if (!found) return false;
        clearTimeout(timer);
        this.waiters.delete(onEvent);
        resolve(found);
        return true;
      };
      const onEvent = (): void => void check();
      const timer = setTimeout(() => {
        this.waiters.delete(onEvent);
        const heard = this.received.map((r) => `${r.channel} ${r.event} ${JSON.stringify(r.payload)}`).join('\n  ');
        reject(new Error(`user ${this.userId} did not receive a matching ${event} within ${timeoutMs} ms; heard:\n  ${heard || '(nothing)'}`));
      }, timeoutMs);
      if (!check()) this.waiters.add(onEvent);
    });
  }

  /** Waits quietMs and fails if an event with this name matching the predicate was received at any time. */
  async expectNone(event: BroadcastName, predicate: Predicate = () => true, quietMs = DEFAULT_QUIET_MS): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const matching = this.events(event, predicate);
    if (matching.length > 0) {
      throw new Error(`user ${this.userId} received ${event} it should not have: ${JSON.stringify(matching.map((r) => r.payload))}`);
    }
  }

  /** Forgets what was received so far. */
  clear(): void {
    this.received.length = 0;
    this.unknown.length = 0;
  }

  /** Closes the socket and waits until pusher-js reports it disconnected. */
  async disconnect(): Promise<void> {
    const connection = this.echo.connector.pusher.connection;
    if (connection.state === 'disconnected') return;
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      connection.bind('state_change', ({ current }: { current: string }) => {
        if (current === 'disconnected') {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    this.echo.disconnect();
    await closed;
  }

  private record(list: Received[], channel: string, event: string, payload: unknown): void {
    list.push({ channel, event, payload });
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** Keeps the clients a suite connects, so one hook can disconnect them all. */
export class EchoClients {
  private readonly clients: EchoClient[] = [];

  constructor(private readonly app: () => EchoTarget) {}

  async connect(userId: number, options?: EchoClientOptions): Promise<EchoClient> {
    const client = await EchoClient.connect(this.app(), userId, options);
    this.clients.push(client);
    return client;
  }

  /** Connects and subscribes to the user's own channel and to each given conversation. */
  async listening(userId: number, conversationIds: readonly number[] = []): Promise<EchoClient> {
    const client = await this.connect(userId);
    await client.subscribeUser();
    for (const id of conversationIds) await client.subscribeConversation(id);
    return client;
  }

  /** Every event any client heard under a name not in BROADCAST_NAMES. */
  unknownEvents(): Received[] {
    return this.clients.flatMap((c) => c.unknown);
  }

  async disconnectAll(): Promise<void> {
    const clients = this.clients.splice(0);
    await Promise.all(clients.map((c) => c.disconnect()));
  }
}
