// ParleyClient: the HTTP API with the bearer token, the user's socket, and the catch-up over GET /sync that
// makes at-most-once socket delivery whole (docs/events.md, "Delivery guarantee and catching up"). After a
// reconnect it syncs before it is live again; while it syncs, live events wait, and the ledger drops any change a
// handler has seen already, so each handler sees each change once, in order.
import { isNetworkError, ParleyError } from './errors.js';
import { Emitter, conversationOf, type EventHandler, type EventMeta, type ParleyEventName } from './events.js';
import type { SyncChange, SyncPage } from './generated/contract.js';
import { Http, type RequestOptions, type TokenSource } from './http.js';
import { userIdOfToken } from './ids.js';
import { ChangeLedger } from './ledger.js';
import { Connection, type ConnectionOptions } from './connection.js';
import { conversationsApi, messagesApi } from './resources.js';

export interface ParleyClientOptions extends ConnectionOptions {
  /** The server's origin, e.g. http://localhost:8080 (the API is below /api/chat/v1). */
  baseUrl: string;
  /** A user token, or a function giving one: called once, and again after a 401 (token refresh). */
  token: TokenSource;
  /** Default: the token's `sub`. */
  userId?: number;
  /** Where GET /sync starts (a cursor kept from an earlier run); default: the inbox's, or now at connect. */
  cursor?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Send X-Socket-ID with every request while connected, so this client's socket gets no live events for its own
   * requests (docs/events.md). They still come with the next sync (the feed holds your own actions too).
   */
  excludeOwnSocket?: boolean;
  /** How long one try of messages.send waits for its answer before it tries again with the same id (ms, 15000). */
  sendTimeoutMs?: number;
  /**
   * After a lost connection, how long each new attempt may take before the client starts another (ms; the last
   * repeats). pusher-js alone waits up to 15-60 s per attempt, long after a restarted server answers again.
   */
  reconnectDelaysMs?: readonly number[];
  /**
   * While live, the client also syncs this often (ms, default 5 minutes): changes of conversations it does not
   * watch arrive at the latest then, and its cursor never grows older than the server keeps changes.
   */
  syncEveryMs?: number;
}

/**
 * `disconnected`: not connected (before connect, after disconnect). `connecting`: the socket is opening or
 * reopening. `syncing`: connected, catching up over GET /sync. `live`: caught up, events arrive as they happen.
 */
export type ConnectionState = 'disconnected' | 'connecting' | 'syncing' | 'live';

/** Live changes waiting for their copy from a sync before the client syncs by itself to confirm them. */
const CHECKPOINT_AFTER = 200;
/** While live the client syncs this often too, so its cursor never grows older than the feed keeps changes. */
const CHECKPOINT_EVERY_MS = 5 * 60_000;
const RETRY_SYNC_MS = 2_000;
const userChannel = (id: number) => `private-chat.user.${id}`;
const conversationChannel = (id: number) => `private-chat.conversation.${id}`;

export class ParleyClient {
  readonly conversations;
  readonly messages;
  private readonly http: Http;
  private readonly emitter = new Emitter();
  private readonly ledger = new ChangeLedger();
  private readonly stateListeners = new Set<(state: ConnectionState) => void>();
  private readonly resetListeners = new Set<(error: ParleyError) => void>();
  private readonly errorListeners = new Set<(error: unknown) => void>();
  private connection: Connection | null = null;
  private connecting: Promise<void> | null = null;
  /** Counts connect() and disconnect() calls, so an opening that was disconnected meanwhile stops. */
  private generation = 0;
  private _state: ConnectionState = 'disconnected';
  private _cursor: string | null;
  private _userId: number | null;
  private needsCatchUp = false;
  private syncDepth = 0;
  private buffer: { name: string; payload: unknown; channel: string }[] = [];
  private syncChain: Promise<unknown> = Promise.resolve();
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private checkpointTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly options: ParleyClientOptions) {
    const ownSocket = (): Record<string, string> => (options.excludeOwnSocket && this.socketId ? { 'X-Socket-ID': this.socketId } : {});
    this.http = new Http(options.baseUrl.replace(/\/+$/, ''), options.token, options.fetch ?? ((input, init) => fetch(input, init)), ownSocket);
    this._cursor = options.cursor ?? null;
    this._userId = options.userId ?? null;
    this.conversations = conversationsApi(this.http, (page, opts) => {
      // The inbox's first page: its cursor is where a sync starts, if nothing else set one yet.
      if (this._cursor === null && !opts.cursor && !opts.archived) this._cursor = page.meta.sync_cursor;
    });
    this.messages = messagesApi(this.http, options.sendTimeoutMs);
  }

  /** Where the client is: see ConnectionState. */
  get state(): ConnectionState {
    return this._state;
  }

  /** The change feed's position the next sync starts from (keep it to resume a later run without a gap). */
  get cursor(): string | null {
    return this._cursor;
  }

  /** The signed-in user's id (known once connected, or from the options). */
  get userId(): number | null {
    return this._userId;
  }

  /** This connection's socket id, for X-Socket-ID (events.md: leave out the acting socket); null while not connected. */
  get socketId(): string | null {
    return this.connection?.socketId ?? null;
  }

  /** Any call of docs/api.md: `path` below /api/chat/v1; same token, refresh and errors as the named methods. */
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T> {
    return this.http.request<T>(method, path, options);
  }

  /**
   * fetch with the token (and its refresh after a 401) for what is not JSON: an attachment's bytes, a request that
   * must outlive the page (`keepalive`). `url` absolute, or a path of the server (`/api/chat/v1/...`).
   */
  fetch(url: string, init?: RequestInit): Promise<Response> {
    return this.http.fetch(/^https?:/.test(url) ? url : `${this.http.baseUrl}${url}`, init);
  }

  /** Calls `handler` for each `name` event, live or caught up; returns the function that stops it. */
  on<N extends ParleyEventName>(name: N, handler: EventHandler<N>): () => void {
    return this.emitter.on(name, handler as (payload: unknown, meta: EventMeta) => void);
  }

  /** Calls `listener` on each change of `state`; returns the function that stops it. */
  onStateChange(listener: (state: ConnectionState) => void): () => void {
    this.stateListeners.add(listener);
    return () => void this.stateListeners.delete(listener);
  }

  /**
   * Calls `listener` when the change feed cannot fill a gap (410 cursor_expired: offline longer than the server
   * keeps changes). The client goes on from now; reload what you show (the inbox, open conversations).
   */
  onReset(listener: (error: ParleyError) => void): () => void {
    this.resetListeners.add(listener);
    return () => void this.resetListeners.delete(listener);
  }

  /**
   * Calls `listener` with an error the client met on its own, not in a call of yours (a catch-up after a
   * reconnect that failed, e.g. 401 with a token that cannot be refreshed; it tries again every 2 s). Without a
   * listener such errors go to console.error.
   */
  onError(listener: (error: unknown) => void): () => void {
    this.errorListeners.add(listener);
    return () => void this.errorListeners.delete(listener);
  }

  private reportError(error: unknown): void {
    if (this.errorListeners.size === 0) console.error('@parley/client:', error);
    for (const listener of [...this.errorListeners]) listener(error);
  }

  /** Opens the socket, subscribes the user's channel, catches up from the cursor; resolves once live. */
  connect(): Promise<void> {
    if (!this.connecting) {
      const opening = this.open(++this.generation);
      this.connecting = opening;
      opening.catch(() => this.connecting === opening && (this.connecting = null));
    }
    return this.connecting;
  }

  private async open(generation: number): Promise<void> {
    const stillMine = () => {
      if (generation !== this.generation) throw new Error('disconnected before the client was live');
    };
    this.setState('connecting');
    try {
      this._userId ??= userIdOfToken(await this.http.currentToken());
      // Without a cursor the client starts from now: what happens from here on arrives live or from a sync.
      this._cursor ??= (await this.http.request<{ data: SyncPage }>('GET', '/sync')).data.cursor;
      stillMine();
      this.connection = new Connection(this.http, this.options, {
        event: (name, payload, channel) => this.onLive(name, payload, channel),
        lost: () => {
          // Every channel is subscribed again once the socket is back; what was missed meanwhile is caught up.
          this.needsCatchUp = true;
          this.setState('connecting');
        },
        ready: () => this.maybeCatchUp(),
      });
      this.needsCatchUp = true;
      await this.connection.subscribe(userChannel(this._userId));
      stillMine();
      await this.whenLive();
    } catch (err) {
      if (generation === this.generation) this.disconnect();
      throw err;
    }
  }

  /** Subscribes the conversation's channel (its events then arrive live), then catches up. */
  async watch(conversationId: number): Promise<void> {
    if (!this.connection) {
      if (!this.connecting) throw new Error('connect() first');
      await this.connecting;
    }
    const name = conversationChannel(conversationId);
    const known = this.connection!.has(name);
    await this.connection!.subscribe(name);
    if (!known && this._state === 'live') await this.sync();
  }

  /** Stops the conversation's live events (its changes still come with the next sync). */
  unwatch(conversationId: number): void {
    this.connection?.unsubscribe(conversationChannel(conversationId));
  }

  /**
   * GET /sync from the cursor until has_more is false: every change missed live goes through the same handlers
   * (meta.source 'sync'), none a handler has seen already. Live events wait meanwhile. Resolves the number of
   * changes delivered.
   */
  sync(): Promise<number> {
    const run = this.syncChain.then(() => this.runSync());
    this.syncChain = run.catch(() => undefined);
    return run;
  }

  /**
   * While the connection is lost: try again now (e.g. when the browser is back online or a tab is shown again).
   * The channels stay; once they are subscribed again the client catches up, then is live.
   */
  reconnect(): void {
    this.connection?.reconnect();
  }

  /** Closes the socket; handlers stay registered, and connect() opens it again (from the same cursor). */
  disconnect(): void {
    this.generation++;
    this.connecting = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    const connection = this.connection;
    this.connection = null;
    connection?.close();
    this.setState('disconnected');
  }

  private async runSync(): Promise<number> {
    const startedAt = Date.now();
    this.syncDepth++;
    let delivered = 0;
    try {
      this._cursor ??= (await this.http.request<{ data: SyncPage }>('GET', '/sync')).data.cursor;
      for (;;) {
        let page: { data: SyncPage };
        try {
          page = await this.http.request<{ data: SyncPage }>('GET', '/sync', { query: { since: this._cursor } });
        } catch (err) {
          if (!(err instanceof ParleyError && err.status === 410)) throw err;
          this._cursor = (await this.http.request<{ data: SyncPage }>('GET', '/sync')).data.cursor;
          for (const listener of [...this.resetListeners]) listener(err);
          return delivered;
        }
        for (const change of page.data.changes) if (this.deliverSynced(change)) delivered++;
        this._cursor = page.data.cursor;
        if (!page.data.has_more) break;
      }
      this.ledger.syncDone(startedAt);
      this.checkpointLater();
      return delivered;
    } finally {
      if (--this.syncDepth === 0) this.flushBuffer();
    }
  }

  private deliverSynced(change: SyncChange): boolean {
    if (!this.ledger.acceptSynced(change.type, change.data)) return false;
    this.emitter.emit(change.type, change.data, { source: 'sync', channel: null, conversationId: change.conversation_id, at: change.at });
    return true;
  }

  private onLive(name: string, payload: unknown, channel: string): void {
    if (this._state !== 'live' || this.syncDepth > 0) {
      this.buffer.push({ name, payload, channel });
      return;
    }
    this.deliverLive(name, payload, channel);
  }

  private deliverLive(name: string, payload: unknown, channel: string): void {
    if (!this.ledger.acceptLive(name, payload)) return;
    this.emitter.emit(name, payload, { source: 'live', channel, conversationId: conversationOf(name, payload), at: null });
    if (this.ledger.waitingLive >= CHECKPOINT_AFTER && this.syncDepth === 0) void this.sync().catch(() => undefined);
  }

  private flushBuffer(): void {
    if (this._state !== 'live' && this._state !== 'syncing') return;
    const buffered = this.buffer;
    this.buffer = [];
    for (const { name, payload, channel } of buffered) this.deliverLive(name, payload, channel);
  }

  private whenLive(): Promise<void> {
    if (this._state === 'live') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const off = this.onStateChange((state) => {
        if (state === 'live') resolve();
        else if (state === 'disconnected') reject(new Error('disconnected before the client was live'));
        else return;
        off();
      });
    });
  }

  /** Once the socket is back and every channel subscribed again: sync, then live. */
  private maybeCatchUp(): void {
    if (!this.needsCatchUp || !this.connection?.ready) return;
    this.needsCatchUp = false;
    this.setState('syncing');
    this.sync().then(
      () => {
        if (this._state === 'syncing' && !this.needsCatchUp) {
          this.setState('live');
          this.flushBuffer();
        }
      },
      (err: unknown) => {
        // Not live until it has caught up: try again shortly. No answer or a 5xx is expected now and then; anything
        // else (a 401 with a token that cannot be refreshed) is said.
        if (!isNetworkError(err) && !(err instanceof ParleyError && err.status >= 500)) this.reportError(err);
        this.needsCatchUp = true;
        this.retryTimer = setTimeout(() => this.maybeCatchUp(), RETRY_SYNC_MS);
      },
    );
  }

  private checkpointLater(): void {
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    const every = this.options.syncEveryMs ?? CHECKPOINT_EVERY_MS;
    this.checkpointTimer = this.connection ? setTimeout(() => this._state === 'live' && void this.sync().catch(() => this.checkpointLater()), every) : null;
  }

  private setState(state: ConnectionState): void {
    if (this._state === state) return;
    this._state = state;
    for (const listener of [...this.stateListeners]) listener(state);
  }
}
