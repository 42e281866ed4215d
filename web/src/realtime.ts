// Laravel Echo over pusher-js against Parley's built-in Pusher-protocol server, on the page's own host and
// port. Private channels are authorized by POST /api/chat/v1/broadcasting/auth with the bearer token. Events are
// listened to by broadcast name with the leading dot.
import Echo from 'laravel-echo';
import Pusher from 'pusher-js';
import { API_BASE } from './api.js';
import type {
  ClientConfig,
  Conversation,
  ConversationReadEvent,
  GroupMembershipRevokedEvent,
  GroupParticipantsChangedEvent,
  Message,
  MessageDeletedEvent,
  MessageReactionsUpdatedEvent,
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
}

/** chat.conversation.{id}: one open conversation. */
export interface ConversationHandlers {
  messageSent(message: Message): void;
  messageUpdated(message: Message): void;
  messageDeleted(event: MessageDeletedEvent): void;
  read(event: ConversationReadEvent): void;
  typing(event: UserTypingEvent): void;
  participantsChanged(event: GroupParticipantsChangedEvent): void;
  reactionsUpdated(event: MessageReactionsUpdatedEvent): void;
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
  disconnect(): void;
}

/** A stand-in when the server runs without a socket server: the page still works, without live updates. */
function offlineRealtime(): Realtime {
  return {
    socketId: () => undefined,
    state: () => 'unavailable',
    listenToUser: () => {},
    listenToConversation: () => () => {},
    leaveConversation: () => {},
    onStateChange: () => {},
    disconnect: () => {},
  };
}

export function connectRealtime(config: ClientConfig, token: string): Realtime {
  if (!config.realtime) return offlineRealtime();
  const tls = config.force_tls || location.protocol === 'https:';
  const port = config.ws_port ?? (location.port ? Number(location.port) : tls ? 443 : 80);
  const echo = new Echo({
    broadcaster: 'pusher',
    Pusher,
    key: config.app_key,
    cluster: 'mt1', // pusher-js wants one even with wsHost; any value works
    wsHost: config.ws_host ?? location.hostname,
    wsPort: port,
    wssPort: port,
    forceTLS: tls,
    // WebSocket only (Parley has no sockjs/xhr fallbacks), and only the scheme the page uses: pusher-js would
    // otherwise retry a dropped ws:// connection over wss:// too.
    enabledTransports: [tls ? 'wss' : 'ws'],
    disableStats: true,
    authEndpoint: `${API_BASE}/broadcasting/auth`,
    auth: { headers: { Authorization: `Bearer ${token}` } },
  });
  const connection = echo.connector.pusher.connection;
  const listeners: ((state: ConnectionState, reconnected: boolean) => void)[] = [];
  let everConnected = false;
  connection.bind('state_change', ({ current }: { current: ConnectionState }) => {
    const reconnected = current === 'connected' && everConnected;
    if (current === 'connected') everConnected = true;
    for (const listener of listeners) listener(current, reconnected);
  });

  return {
    socketId: () => echo.socketId() || undefined,
    state: () => connection.state as ConnectionState,
    listenToUser(userId, on) {
      echo
        .private(`chat.user.${userId}`)
        .listen('.InboxUpdated', (c: Conversation) => on.inboxUpdated(c))
        .listen('.UserPresenceChanged', (e: UserPresenceChangedEvent) => on.presenceChanged(e))
        .listen('.UserBlockChanged', (e: UserBlockChangedEvent) => on.blockChanged(e))
        .listen('.GroupMembershipRevoked', (e: GroupMembershipRevokedEvent) => on.membershipRevoked(e))
        .error((error: { status?: number }) => console.warn('chat.user subscription refused', error));
    },
    listenToConversation(id, on) {
      const name = `chat.conversation.${id}`;
      echo
        .private(name)
        .listen('.MessageSent', (m: Message) => on.messageSent(m))
        .listen('.MessageUpdated', (m: Message) => on.messageUpdated(m))
        .listen('.MessageDeleted', (e: MessageDeletedEvent) => on.messageDeleted(e))
        .listen('.ConversationRead', (e: ConversationReadEvent) => on.read(e))
        .listen('.UserTyping', (e: UserTypingEvent) => on.typing(e))
        .listen('.GroupParticipantsChanged', (e: GroupParticipantsChangedEvent) => on.participantsChanged(e))
        .listen('.MessageReactionsUpdated', (e: MessageReactionsUpdatedEvent) => on.reactionsUpdated(e))
        .error((error: { status?: number }) => on.refused(error.status ?? 0));
      return () => echo.leave(name);
    },
    leaveConversation(id) {
      echo.leave(`chat.conversation.${id}`);
    },
    onStateChange(listener) {
      listeners.push(listener);
    },
    disconnect() {
      echo.disconnect();
    },
  };
}
