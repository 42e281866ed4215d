// pusher-js against Parley's built-in Pusher-protocol server, on the page's own host and port. Private channels
// (`private-chat.user.{id}`, `private-chat.conversation.{id}`) are authorized by POST
// /api/chat/v1/broadcasting/auth with the bearer token. Events are bound by their broadcast name (`MessageSent`).
// No Laravel Echo: all it would add here is the `private-` prefix and the leading dot, for 2.7 KB gzipped of the
// bundle's 50 KB budget (README's Echo example works against Parley just the same).
import Pusher from 'pusher-js';
import { API_BASE } from './api.js';
import type {
  ClientConfig,
  Conversation,
  ConversationReadEvent,
  ConversationStateChangedEvent,
  GroupMembershipRevokedEvent,
  GroupParticipantsChangedEvent,
  Message,
  MessageDeletedEvent,
  MessageHiddenEvent,
  MessagePinnedEvent,
  MessageReactionsUpdatedEvent,
  ThreadReadEvent,
  ThreadReplySentEvent,
  ThreadUpdatedEvent,
  UserBlockChangedEvent,
  UserPresenceChangedEvent,
  UserTypingEvent,
} from './types.js';

export type ConnectionState = 'connecting' | 'connected' | 'unavailable' | 'failed' | 'disconnected' | 'offline';

/** chat.user.{me}: the inbox, presence, blocks and lost memberships. */
export interface UserHandlers {
  inboxUpdated(conversation: Conversation): void;
  presenceChanged(event: UserPresenceChangedEvent): void;
  blockChanged(event: UserBlockChangedEvent): void;
  membershipRevoked(event: GroupMembershipRevokedEvent): void;
  /** v1.2: my own state of a conversation (mute, archive, pin, clear), and a message I deleted for me alone. */
  stateChanged(event: ConversationStateChangedEvent): void;
  messageHidden(event: MessageHiddenEvent): void;
}

/** chat.conversation.{id}: one open conversation. */
export interface ConversationHandlers {
  messageSent(message: Message): void;
  messageUpdated(message: Message): void;
  messageDeleted(event: MessageDeletedEvent): void;
  read(event: ConversationReadEvent): void;
  typing(event: UserTypingEvent): void;
  /** `at`: when it happened (ms), for a change caught up over /sync; live: now. */
  participantsChanged(event: GroupParticipantsChangedEvent, at?: number): void;
  reactionsUpdated(event: MessageReactionsUpdatedEvent): void;
  /** v1.2: a reply in a thread (never MessageSent), the thread's counts after it, someone read a thread. */
  threadReply(event: ThreadReplySentEvent): void;
  threadUpdated(event: ThreadUpdatedEvent): void;
  threadRead(event: ThreadReadEvent): void;
  /** v1.2: a message pinned or unpinned. */
  pinned(event: MessagePinnedEvent): void;
  refused(status: number): void;
}

export interface Realtime {
  /** For X-Socket-ID; undefined while not connected. */
  socketId(): string | undefined;
  state(): ConnectionState;
  listenToUser(userId: number, handlers: UserHandlers): void;
  /** Subscribes to one conversation; the returned function leaves its channel. */
  listenToConversation(conversationId: number, handlers: ConversationHandlers): () => void;
  /** Stop receiving a conversation's events (after GroupMembershipRevoked). */
  leaveConversation(conversationId: number): void;
  /** Every state change; `reconnected` is true when the socket is back after having been connected before. */
  onStateChange(listener: (state: ConnectionState, reconnected: boolean) => void): void;
  /**
   * The user's channel is subscribed again after a reconnect (pusher-js subscribes its channels again only
   * after the connection is back): from here on nothing is missed, so this is when to catch up.
   */
  onResubscribed(listener: () => void): void;
  /**
   * A change caught up over GET /sync, handed to the same handlers as the live event (the user's, or the
   * conversation's while it is listened to), with when it happened (ms). False when nobody listens for it.
   */
  deliver(type: string, conversationId: number | null, data: unknown, at?: number): boolean;
  disconnect(): void;
}

/** How each event reaches its handler, by broadcast name: the user's channel, and a conversation's. */
const USER_EVENTS: Record<string, ((on: UserHandlers, data: unknown) => void) | undefined> = {
  InboxUpdated: (on, data) => on.inboxUpdated(data as Conversation),
  UserPresenceChanged: (on, data) => on.presenceChanged(data as UserPresenceChangedEvent),
  UserBlockChanged: (on, data) => on.blockChanged(data as UserBlockChangedEvent),
  GroupMembershipRevoked: (on, data) => on.membershipRevoked(data as GroupMembershipRevokedEvent),
  ConversationStateChanged: (on, data) => on.stateChanged(data as ConversationStateChangedEvent),
  MessageHidden: (on, data) => on.messageHidden(data as MessageHiddenEvent),
};
const CONVERSATION_EVENTS: Record<string, ((on: ConversationHandlers, data: unknown, at?: number) => void) | undefined> = {
  MessageSent: (on, data) => on.messageSent(data as Message),
  MessageUpdated: (on, data) => on.messageUpdated(data as Message),
  MessageDeleted: (on, data) => on.messageDeleted(data as MessageDeletedEvent),
  ConversationRead: (on, data) => on.read(data as ConversationReadEvent),
  UserTyping: (on, data) => on.typing(data as UserTypingEvent),
  GroupParticipantsChanged: (on, data, at) => on.participantsChanged(data as GroupParticipantsChangedEvent, at),
  MessageReactionsUpdated: (on, data) => on.reactionsUpdated(data as MessageReactionsUpdatedEvent),
  ThreadReplySent: (on, data) => on.threadReply(data as ThreadReplySentEvent),
  ThreadUpdated: (on, data) => on.threadUpdated(data as ThreadUpdatedEvent),
  ThreadRead: (on, data) => on.threadRead(data as ThreadReadEvent),
  MessagePinned: (on, data) => on.pinned(data as MessagePinnedEvent),
};

/** Whether an event is one of a conversation's channel (its handlers are the open conversation's). */
export const isConversationEvent = (type: string): boolean => CONVERSATION_EVENTS[type] !== undefined;

/** The handlers listening now, by channel: live events and changes caught up over /sync go through them. */
class Listeners {
  user: UserHandlers | null = null;
  readonly conversations = new Map<number, ConversationHandlers>();

  /** False when nobody listens for it, or it is an event this client does not know (a later API version). */
  deliver(type: string, conversationId: number | null, data: unknown, at?: number): boolean {
    const toUser = USER_EVENTS[type];
    if (toUser) return this.user ? (toUser(this.user, data), true) : false;
    const toConversation = CONVERSATION_EVENTS[type];
    const on = conversationId === null ? undefined : this.conversations.get(conversationId);
    return toConversation && on ? (toConversation(on, data, at), true) : false;
  }
}

/** A stand-in when the server runs without a socket server: the page still works, without live updates. */
function offlineRealtime(): Realtime {
  const listeners = new Listeners();
  return {
    socketId: () => undefined,
    state: () => 'unavailable',
    listenToUser: (_userId, on) => void (listeners.user = on),
    listenToConversation: (id, on) => {
      listeners.conversations.set(id, on);
      return () => listeners.conversations.delete(id);
    },
    leaveConversation: (id) => void listeners.conversations.delete(id),
    onStateChange: () => {},
    onResubscribed: () => {},
    deliver: (type, conversationId, data, at) => listeners.deliver(type, conversationId, data, at),
    disconnect: () => {},
  };
}

export function connectRealtime(config: ClientConfig, token: string): Realtime {
  if (!config.realtime) return offlineRealtime();
  const tls = config.force_tls || location.protocol === 'https:';
  const port = config.ws_port ?? (location.port ? Number(location.port) : tls ? 443 : 80);
  const pusher = new Pusher(config.app_key, {
    cluster: 'mt1', // pusher-js wants one even with wsHost; any value works
    wsHost: config.ws_host ?? location.hostname,
    wsPort: port,
    wssPort: port,
    forceTLS: tls,
    // WebSocket only (Parley has no sockjs/xhr fallbacks), and only the scheme the page uses: pusher-js would
    // otherwise retry a dropped ws:// connection over wss:// too.
    enabledTransports: [tls ? 'wss' : 'ws'],
    disableStats: true,
    channelAuthorization: { endpoint: `${API_BASE}/broadcasting/auth`, transport: 'ajax', headers: { Authorization: `Bearer ${token}` } },
  });
  /** A private channel's events by broadcast name; a refused subscription's HTTP status to `refused`. */
  const subscribe = (name: string, types: string[], deliver: (type: string, data: unknown) => void, refused: (status: number) => void) => {
    const channel = pusher.subscribe(`private-${name}`);
    for (const type of types) channel.bind(type, (data: unknown) => deliver(type, data));
    channel.bind('pusher:subscription_error', (error: { status?: number }) => refused(error.status ?? 0));
    return channel;
  };
  const leave = (name: string) => {
    // Its handlers go with it: subscribing again (the conversation opened again) binds fresh ones.
    pusher.channel(`private-${name}`)?.unbind_all();
    pusher.unsubscribe(`private-${name}`);
  };
  const connection = pusher.connection;
  const handlers = new Listeners();
  const resubscribed: (() => void)[] = [];
  const listeners: ((state: ConnectionState, reconnected: boolean) => void)[] = [];
  let everConnected = false;
  let reported: ConnectionState | null = null;
  const report = (state: ConnectionState, reconnected: boolean) => {
    reported = state;
    for (const listener of listeners) listener(state, reconnected);
  };

  // Back soon after the server is: once a connection was lost, pusher-js waits 1 s and then lets each attempt time
  // out with growing limits (15 s up to 60 s), so a page could stay "Reconnecting…" long after a restarted server
  // answers again. Instead a fresh attempt starts every second for the first 10 attempts, then after 2, 4, 8 and
  // at most 15 s; and at once when the browser is back online or the tab is shown again.
  let forcing = false;
  let stopped = false;
  let attempts = 0;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  const lost = () => everConnected && !stopped && connection.state !== 'connected';
  const retryLater = () => {
    clearTimeout(retryTimer);
    const delay = attempts < 10 ? 1_000 : Math.min(15_000, 1_000 * 2 ** (attempts - 9));
    retryTimer = setTimeout(retryNow, delay);
  };
  function retryNow(): void {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    if (!lost()) return;
    attempts += 1;
    forcing = true; // the 'disconnected' in between is ours, not news
    try {
      pusher.disconnect();
      pusher.connect();
    } finally {
      forcing = false;
    }
    const state = connection.state as ConnectionState;
    if (state !== reported) report(state, false);
    retryLater();
  }
  const soon = () => {
    if (!lost()) return;
    attempts = 0;
    retryNow();
  };
  const onVisible = () => document.visibilityState === 'visible' && soon();
  window.addEventListener('online', soon);
  document.addEventListener('visibilitychange', onVisible);

  connection.bind('state_change', ({ current }: { current: ConnectionState }) => {
    if (forcing) return;
    const reconnected = current === 'connected' && everConnected;
    if (current === 'connected') {
      everConnected = true;
      attempts = 0;
      clearTimeout(retryTimer);
      retryTimer = undefined;
    } else if (lost() && retryTimer === undefined) {
      retryLater();
    }
    report(current, reconnected);
  });

  return {
    socketId: () => connection.socket_id || undefined,
    state: () => connection.state as ConnectionState,
    listenToUser(userId, on) {
      handlers.user = on;
      let subscribedBefore = false;
      const channel = subscribe(`chat.user.${userId}`, Object.keys(USER_EVENTS), (type, data) => handlers.deliver(type, null, data), (status) =>
        console.warn('chat.user subscription refused', status),
      );
      channel.bind('pusher:subscription_succeeded', () => {
        if (subscribedBefore) for (const listener of resubscribed) listener();
        subscribedBefore = true;
      });
    },
    listenToConversation(id, on) {
      const name = `chat.conversation.${id}`;
      handlers.conversations.set(id, on);
      subscribe(name, Object.keys(CONVERSATION_EVENTS), (type, data) => handlers.deliver(type, id, data), on.refused);
      return () => {
        if (handlers.conversations.get(id) === on) handlers.conversations.delete(id);
        leave(name);
      };
    },
    leaveConversation(id) {
      handlers.conversations.delete(id);
      leave(`chat.conversation.${id}`);
    },
    deliver: (type, conversationId, data, at) => handlers.deliver(type, conversationId, data, at),
    onStateChange(listener) {
      listeners.push(listener);
    },
    onResubscribed(listener) {
      resubscribed.push(listener);
    },
    disconnect() {
      stopped = true;
      clearTimeout(retryTimer);
      window.removeEventListener('online', soon);
      document.removeEventListener('visibilitychange', onVisible);
      pusher.disconnect();
    },
  };
}
