// The signed-in chat's shell: the sidebar (me, connection state, the inbox) and the pane of the open
// conversation. It makes the store, feeds it from the user channel chat.user.{me}, keeps #/c/{id} and the store's
// open conversation in step, and mounts a ThreadView for it. Views talk to the store, never to this shell.
import { ParleyClient } from '@parley/client';
import { createApi } from './api.js';
import { blocksDialog, newGroupDialog } from './dialogs.js';
import { newDirectDialog } from './people.js';
import { InboxView } from './inbox.js';
import { announce, avatar, h, toast } from './dom.js';
import { connectRealtime, RECONNECT_DELAYS_MS, type ConnectionState } from './realtime.js';
import type { Session } from './session.js';
import { ChatStore, type Change } from './store.js';
import { ThreadView } from './thread.js';
import type { ClientConfig, GroupMembershipRevokedEvent } from './types.js';
import { disablePush, listenForNotificationClicks, pushButton } from './push.js';

const HEARTBEAT_MS = 30_000;

const CONNECTION_LABELS: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  connected: 'Live',
  syncing: 'Catching up…',
  unavailable: 'Reconnecting…',
  disconnected: 'Disconnected',
};

export class ChatApp {
  private readonly store: ChatStore;
  private readonly inbox: InboxView;
  private thread: ThreadView | null = null;
  private readonly cleanups: (() => void)[] = [];
  private stopped = false;
  /** @parley/client: every API call and the socket go through it. */
  private readonly chat: ParleyClient;
  /** The socket was lost since it was last live: presence is asked again once it is back. */
  private wasLost = false;

  private readonly threadPane = h('main', { className: 'thread-pane', id: 'main', tabindex: -1 });
  private readonly status = h('span', { className: 'connection', role: 'status' });
  private readonly meLabel = h('span', { className: 'me-name' });

  constructor(
    private readonly root: HTMLElement,
    config: ClientConfig,
    session: Session,
    private readonly signOut: (notice?: string) => void,
  ) {
    this.chat = new ParleyClient({
      baseUrl: location.origin,
      token: session.token,
      userId: session.userId,
      appKey: config.app_key,
      wsHost: config.ws_host ?? undefined,
      wsPort: config.ws_port ?? undefined,
      forceTLS: config.force_tls || location.protocol === 'https:',
      reconnectDelaysMs: RECONNECT_DELAYS_MS,
      excludeOwnSocket: true, // X-Socket-ID: this tab gets no events for its own requests
    });
    const realtime = connectRealtime(this.chat, config.realtime);
    const api = createApi(this.chat, (err) => this.stop(err.message, false));
    this.store = new ChatStore(api, realtime, { id: session.userId, name: session.name ?? `User ${session.userId}`, avatar_url: null });
    this.inbox = new InboxView(this.store);
  }

  // ---- lifecycle -------------------------------------------------------------------------------------------

  async start(): Promise<void> {
    const store = this.store;
    this.renderShell();
    this.cleanups.push(store.subscribe((change) => this.changed(change)));
    await store.loadInbox(); // a bad token ends here: the 401 signs out
    if (this.stopped) return;
    this.renderMe();
    this.showPlaceholder();

    void store.realtime.listenToUser({
      inboxUpdated: (c) => store.upsertConversation(c),
      presenceChanged: ({ user_id, is_online }) => store.setOnline(user_id, is_online),
      blockChanged: (e) =>
        store.applyBlocks(e.messaging_blocked_user_ids, e.blocker_id === store.me.id ? { userId: e.blocked_user_id, blocked: e.blocked } : undefined),
      membershipRevoked: (e) => this.membershipRevoked(e),
      stateChanged: (e) => store.applyState(e),
      messageHidden: (e) => store.hide(e.conversation_id, e.message_id),
    }).catch(() => {}); // signed out before it was live
    store.realtime.onStateChange((state) => {
      this.renderStatus(state);
      // Back after a loss (the client caught up over /sync before it said so): presence is not in the feed.
      if (state === 'unavailable') this.wasLost = true;
      if (state === 'connected' && this.wasLost) {
        this.wasLost = false;
        void this.refreshPresence();
      }
    });
    // Offline longer than the server keeps changes (410 cursor_expired): what is shown is loaded again.
    this.cleanups.push(this.chat.onReset(() => void this.reload()));
    this.renderStatus(store.realtime.state());

    void store.loadBlocks();
    this.startPresence();
    this.cleanups.push(listenForNotificationClicks());

    const onHash = () => this.route();
    window.addEventListener('hashchange', onHash);
    this.cleanups.push(() => window.removeEventListener('hashchange', onHash));
    this.route();
  }

  /** Signs out: the offline signal (not with a rejected token), the socket closed, back to the sign-in screen. */
  stop(notice?: string, goodbye = true): void {
    if (this.stopped) return;
    this.stopped = true;
    this.thread?.destroy();
    this.thread = null;
    this.inbox.destroy();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    if (goodbye) {
      void disablePush(this.chat).catch(() => {});
      this.store.api.goodbye();
    }
    this.store.realtime.disconnect();
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    this.signOut(notice);
  }

  /** Heartbeat every 30 s while the page is open; the offline signal when it goes away. */
  private startPresence(): void {
    const api = this.store.api;
    const beat = () => void api.post('/presence/heartbeat').catch(() => {});
    beat();
    const timer = setInterval(beat, HEARTBEAT_MS);
    const onHide = () => api.goodbye(); // fetch with keepalive: it outlives the page
    const onShow = (event: PageTransitionEvent) => {
      if (event.persisted) beat(); // back from the back/forward cache
    };
    window.addEventListener('pagehide', onHide);
    window.addEventListener('pageshow', onShow);
    this.cleanups.push(() => {
      clearInterval(timer);
      window.removeEventListener('pagehide', onHide);
      window.removeEventListener('pageshow', onShow);
    });
  }

  /** The change feed could not fill a gap: the inbox and the open conversation's history loaded again. */
  private async reload(): Promise<void> {
    await this.store.loadInbox(true);
    await this.thread?.catchUp();
  }

  private async refreshPresence(): Promise<void> {
    const store = this.store;
    const partners = store.inbox().map((c) => store.partner(c)?.id).filter((id): id is number => id !== undefined);
    await store.refreshPresence(partners);
  }

  // ---- the open conversation: #/c/{id} and the store's open id, kept in step -------------------------------

  /** The address changed (a link, the browser's back button): open what it names. */
  private route(): void {
    const match = /^#\/c\/(\d+)$/.exec(location.hash);
    if (!match && location.hash !== '') return; // some other anchor: not a navigation
    this.store.open(match ? Number(match[1]) : null);
    if (!match && !this.thread) this.showPlaceholder();
  }

  private changed(change: Change): void {
    if (change.kind !== 'open') return;
    const previous = this.thread;
    if (change.id !== (previous?.id ?? null)) {
      previous?.destroy();
      this.thread = null;
      if (change.id !== null) {
        const thread = (this.thread = new ThreadView(this.store, change.id));
        this.threadPane.replaceChildren(thread.element);
        // A conversation this tab was not watching: its members, roles and entry caught up before it shows.
        void this.store
          .sync()
          .catch(() => {})
          .then(() => {
            if (this.thread === thread) void thread.load();
          });
      }
    }
    if (change.messageId !== undefined) void this.thread?.showMessage(change.messageId);
    if (change.thread) void this.thread?.openThread(change.thread);
    const hash = change.id === null ? '' : `#/c/${change.id}`;
    if (location.hash !== hash) {
      if (change.notice !== undefined) history.replaceState(null, '', location.pathname + location.search);
      else if (hash) location.hash = hash; // a history entry: the browser's back button returns to the inbox
      else history.pushState(null, '', location.pathname + location.search);
    }
    if (change.id === null) {
      this.showPlaceholder(change.notice);
      // At phone width a notice keeps the conversation's screen (with a way back); otherwise the inbox shows.
      this.root.classList.toggle('show-thread', change.notice !== undefined);
      if (previous && change.notice === undefined) this.inbox.focus(previous.id);
    } else {
      this.root.classList.add('show-thread');
    }
  }

  private showPlaceholder(notice?: string): void {
    const back = h('button', { type: 'button', className: 'secondary back-to-inbox' }, 'Back to conversations');
    back.addEventListener('click', () => {
      this.root.classList.remove('show-thread');
      this.showPlaceholder();
    });
    this.threadPane.replaceChildren(
      h(
        'div',
        { className: 'empty-state thread-empty' },
        notice
          ? h('p', { className: 'notice', role: 'status', id: 'thread-notice' }, notice)
          : h('p', { className: 'empty-title' }, this.store.inbox().length > 0 ? 'Pick a conversation' : 'Welcome to Parley'),
        notice ? back : h('p', {}, 'Messages appear here. Everything updates live, without reloading.'),
      ),
    );
  }

  private membershipRevoked(event: GroupMembershipRevokedEvent): void {
    // Already gone (the live event, then the same change caught up over /sync): said once.
    if (!this.store.conversation(event.conversation_id)) return;
    const name = this.store.conversation(event.conversation_id)?.name ?? 'the group';
    const notice =
      event.reason === 'removed' ? `You were removed from “${name}”.` : event.reason === 'left' ? `You left “${name}”.` : `“${name}” was deleted.`;
    const wasOpen = this.store.openConversationId() === event.conversation_id;
    this.store.removeConversation(event.conversation_id, notice);
    if (!wasOpen) toast(notice, 'info');
    announce(notice);
  }

  // ---- rendering -------------------------------------------------------------------------------------------

  private renderShell(): void {
    const newChat = h('button', { type: 'button', id: 'new-chat' }, 'New chat');
    const newGroup = h('button', { type: 'button', id: 'new-group', className: 'secondary' }, 'New group');
    const blocked = h('button', { type: 'button', id: 'blocked-users', className: 'secondary' }, 'Blocked');
    const signOut = h('button', { type: 'button', id: 'sign-out', className: 'link-button' }, 'Sign out');
    newChat.addEventListener('click', () => newDirectDialog(this.store));
    newGroup.addEventListener('click', () => newGroupDialog(this.store));
    blocked.addEventListener('click', () => blocksDialog(this.store));
    signOut.addEventListener('click', () => this.stop());

    const skip = h('a', { className: 'skip-link', href: '#main' }, 'Skip to the conversation');
    skip.addEventListener('click', (event) => {
      event.preventDefault(); // the hash is the open conversation: move the focus instead
      (document.getElementById('composer-input') ?? this.threadPane).focus();
    });
    this.root.className = 'chat';
    this.root.replaceChildren(
      skip,
      h(
        'aside',
        { className: 'sidebar', 'aria-label': 'Conversations' },
        h(
          'header',
          { className: 'sidebar-header' },
          h('div', { className: 'brand' }, h('span', { className: 'logo', 'aria-hidden': 'true' }, 'P'), h('span', {}, 'Parley'), this.inbox.views),
          h('div', { className: 'me' }, this.meLabel, this.status, pushButton(this.chat), signOut),
        ),
        h('nav', { className: 'sidebar-actions', 'aria-label': 'Start' }, newChat, newGroup, blocked),
        ...this.inbox.elements,
      ),
      this.threadPane,
    );
    this.renderMe();
    this.showPlaceholder();
  }

  private renderMe(): void {
    const me = this.store.me;
    this.meLabel.replaceChildren(avatar(me.name, me.id), h('span', {}, me.name, h('span', { className: 'muted' }, ` #${me.id}`)));
  }

  private renderStatus(state: ConnectionState): void {
    this.status.textContent = CONNECTION_LABELS[state] ?? state;
    this.status.dataset.state = state;
  }
}
