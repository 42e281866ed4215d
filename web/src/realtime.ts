// Live events through @parley/client (docs/client-sdk.md): it runs pusher-js against Parley's built-in server,
// subscribes chat.user.{me} and each open conversation (authorized with the bearer token), and after a
// reconnect catches up over GET /sync before it is live again, each change handed once to the same handlers
// as a live event. This module routes the events by name to the user's handlers and to the open conversation's.
import type { ConnectionState as ClientState, EventMeta, ParleyClient, ParleyError, ParleyEventName } from '@parley/client';
import type {
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

/** What the sidebar shows: `unavailable` is a connection lost (reconnecting), `syncing` catching up after it. */
export type ConnectionState = 'connecting' | 'connected' | 'syncing' | 'unavailable' | 'disconnected';

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
  state(): ConnectionState;
  /** The user's handlers; then connects (resolves once live: caught up from the inbox's cursor). */
  listenToUser(handlers: UserHandlers): Promise<void>;
  /** Subscribes to one conversation; the returned function leaves its channel. */
  listenToConversation(conversationId: number, handlers: ConversationHandlers): () => void;
  /** Stop receiving a conversation's events (after GroupMembershipRevoked). */
  leaveConversation(conversationId: number): void;
  onStateChange(listener: (state: ConnectionState) => void): void;
  /**
   * A conversation's change caught up over GET /sync goes here first (the store's own state); false keeps it
   * from the conversation's handlers (a view whose history is not loaded yet).
   */
  onCaughtUp(check: (type: string, conversationId: number, data: unknown) => boolean): void;
  disconnect(): void;
}

/** Which handler each event goes to, by broadcast name: the user's channel, and a conversation's. */
const USER_EVENTS: Partial<Record<ParleyEventName, keyof UserHandlers>> = {
  InboxUpdated: 'inboxUpdated',
  UserPresenceChanged: 'presenceChanged',
  UserBlockChanged: 'blockChanged',
  GroupMembershipRevoked: 'membershipRevoked',
  ConversationStateChanged: 'stateChanged',
  MessageHidden: 'messageHidden',
};
const CONVERSATION_EVENTS: Partial<Record<ParleyEventName, Exclude<keyof ConversationHandlers, 'refused'>>> = {
  MessageSent: 'messageSent',
  MessageUpdated: 'messageUpdated',
  MessageDeleted: 'messageDeleted',
  ConversationRead: 'read',
  UserTyping: 'typing',
  GroupParticipantsChanged: 'participantsChanged',
  MessageReactionsUpdated: 'reactionsUpdated',
  ThreadReplySent: 'threadReply',
  ThreadUpdated: 'threadUpdated',
  ThreadRead: 'threadRead',
  MessagePinned: 'pinned',
};

/**
 * Back soon after the server is: pusher-js alone lets each attempt time out over 15 s up to 60 s, so a page could
 * stay "Reconnecting…" long after a restarted server answers. The client starts a fresh attempt after each of
 * these (every second for the first 10, then after 2, 4, 8 and at most 15 s), and goes on from its cursor: what
 * happened meanwhile is caught up before it is live.
 */
export const RECONNECT_DELAYS_MS: readonly number[] = [...Array<number>(10).fill(1_000), 2_000, 4_000, 8_000, 15_000];

/** `live` is `connected` for the page (the tests and styles know it so); `connecting` once live before is a loss. */
const shown = (state: ClientState, everLive: boolean): ConnectionState =>
  state === 'live' ? 'connected' : state === 'connecting' && everLive ? 'unavailable' : state;

export function connectRealtime(chat: ParleyClient, enabled: boolean): Realtime {
  let user: UserHandlers | null = null;
  const conversations = new Map<number, ConversationHandlers>();
  let caughtUp: (type: string, conversationId: number, data: unknown) => boolean = () => true;
  const listeners: ((state: ConnectionState) => void)[] = [];
  let everLive = false;
  let stopped = false;

  const route = (type: ParleyEventName) => (data: unknown, meta: EventMeta) => {
    const toUser = USER_EVENTS[type];
    if (toUser) return user?.[toUser](data as never);
    const id = meta.conversationId;
    const method = CONVERSATION_EVENTS[type];
    if (id === null || !method || (meta.source === 'sync' && !caughtUp(type, id, data))) return;
    // `at`: when a change caught up happened (ms), for the notices of the timeline; live: now.
    conversations.get(id)?.[method](data as never, (meta.at ? Date.parse(meta.at) : undefined) as never);
  };
  for (const type of [...Object.keys(USER_EVENTS), ...Object.keys(CONVERSATION_EVENTS)] as ParleyEventName[]) chat.on(type, route(type));

  const subscribe = (id: number) =>
    chat.watch(id).catch((err: ParleyError) => {
      if (!stopped && conversations.has(id)) conversations.get(id)?.refused(err.status ?? 0);
    });

  // A lost connection tries again at once when the browser is back online or the tab is shown again (else on
  // RECONNECT_DELAYS_MS's schedule). A tab shown again may also have been frozen or cut off without noticing:
  // what it missed comes over GET /sync.
  const soon = () => chat.reconnect();
  const onVisible = () => document.visibilityState === 'visible' && (chat.state === 'live' ? void chat.sync().catch(() => {}) : soon());

  chat.onStateChange((state) => {
    if (stopped) return;
    if (state === 'live') everLive = true;
    for (const listener of listeners) listener(shown(state, everLive));
  });

  return {
    state: () => (enabled ? shown(chat.state, everLive) : 'unavailable'),
    async listenToUser(handlers) {
      user = handlers;
      if (!enabled) return; // no socket server (BROADCAST_DRIVER=log): the page works without live updates
      window.addEventListener('online', soon);
      document.addEventListener('visibilitychange', onVisible);
      await chat.connect();
    },
    listenToConversation(id, on) {
      conversations.set(id, on);
      if (enabled) void subscribe(id);
      return () => {
        if (conversations.get(id) === on) conversations.delete(id);
        chat.unwatch(id);
      };
    },
    leaveConversation(id) {
      conversations.delete(id);
      chat.unwatch(id);
    },
    onStateChange(listener) {
      listeners.push(listener);
    },
    onCaughtUp(check) {
      caughtUp = check;
    },
    disconnect() {
      stopped = true;
      window.removeEventListener('online', soon);
      document.removeEventListener('visibilitychange', onVisible);
      chat.disconnect();
    },
  };
}
