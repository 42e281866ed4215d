// The signed-in chat: the inbox on the left (the whole screen at phone width), the open conversation on the right.
// It owns the shared state (conversations, presence, blocks) and the user channel chat.user.{me}; ThreadView
// owns one open conversation and its channel.
import { createApi, describeError, type Api, type ApiError } from './api.js';
import { blocksDialog, newGroupDialog } from './dialogs.js';
import { mutedMark } from './mute.js';
import { newDirectDialog } from './people.js';
import { SearchPanel } from './search.js';
import { announce, avatar, h, shortTime, toast } from './dom.js';
import { connectRealtime, type ConnectionState, type Realtime } from './realtime.js';
import type { Session } from './session.js';
import { ThreadView } from './thread.js';
import type { ClientConfig, Conversation, GroupMembershipRevokedEvent, Message, Paged, Presence, User } from './types.js';
import { disablePush, listenForNotificationClicks, pushButton } from './push.js';

const HEARTBEAT_MS = 30_000;
const INBOX_PAGE = 30;

const CONNECTION_LABELS: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  connected: 'Live',
  unavailable: 'Reconnecting…',
  failed: 'No live updates (WebSocket unsupported)',
  disconnected: 'Disconnected',
  offline: 'Offline',
};

export class ChatApp {
  readonly api: Api;
  readonly realtime: Realtime;
  readonly me: User;
  readonly conversations = new Map<number, Conversation>();
  /** Latest activity per conversation (ms): the inbox order, newest first. */
  private readonly activity = new Map<number, number>();
  private inboxCursor: string | null = null;
  private inboxLoaded = false;
  readonly online = new Map<number, boolean>();
  /** Users I blocked. */
  readonly blockedByMe = new Set<number>();
  /** Everyone I cannot message directly, blocked either way. */
  messagingBlocked = new Set<number>();
  private thread: ThreadView | null = null;
  private readonly conversationListeners = new Set<(conversation: Conversation | null, id: number) => void>();
  private readonly blockListeners = new Set<() => void>();
  private readonly cleanups: (() => void)[] = [];
  private stopped = false;
  /** For the push subscription's removal at sign-out (web/src/push.ts). */
  private readonly pushToken: string;

  // The page's fixed parts.
  private readonly inboxList = h('ul', { className: 'inbox-list', id: 'inbox-list', 'aria-labelledby': 'inbox-heading' });
  private readonly inboxEmpty = h(
    'div',
    { className: 'empty-state', id: 'inbox-empty', hidden: true },
    h('p', { className: 'empty-title' }, 'No conversations yet'),
    h('p', {}, 'Start a chat with someone’s user id, or create a group.'),
  );
  private readonly loadMore = h('button', { type: 'button', className: 'secondary load-more', hidden: true }, 'Load more conversations');
  private readonly inboxScroll = h('div', { className: 'inbox-scroll' });
  private readonly threadPane = h('main', { className: 'thread-pane', id: 'main', tabindex: -1 });
  private readonly status = h('span', { className: 'connection', role: 'status' });
  private readonly meLabel = h('span', { className: 'me-name' });

  constructor(
    private readonly root: HTMLElement,
    readonly config: ClientConfig,
    session: Session,
    private readonly signOut: (notice?: string) => void,
  ) {
    this.pushToken = session.token;
    this.me = { id: session.userId, name: session.name ?? `User ${session.userId}`, avatar_url: null };
    this.realtime = connectRealtime(config, session.token);
    this.api = createApi(session.token, () => this.realtime.socketId(), (err: ApiError) => this.stop(err.message, false));
  }

  // ---- lifecycle -------------------------------------------------------------------------------------------

  async start(): Promise<void> {
    this.renderShell();
    await this.loadInbox(); // a bad token ends here: the 401 signs out
    if (this.stopped) return;
    this.renderMe();

    this.realtime.listenToUser(this.me.id, {
      inboxUpdated: (c) => this.upsertConversation(c),
      presenceChanged: ({ user_id, is_online }) => this.setOnline(user_id, is_online),
      blockChanged: (e) => {
        this.messagingBlocked = new Set(e.messaging_blocked_user_ids);
        if (e.blocker_id === this.me.id) {
          if (e.blocked) this.blockedByMe.add(e.blocked_user_id);
          else this.blockedByMe.delete(e.blocked_user_id);
        }
        this.blocksChanged();
      },
      membershipRevoked: (e) => this.membershipRevoked(e),
    });
    this.realtime.onStateChange((state, reconnected) => {
      this.renderStatus(state);
      if (reconnected) void this.catchUp();
    });
    this.renderStatus(this.realtime.state());

    void this.loadBlocks();
    void this.refreshPresence(this.directPartners());
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
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    if (goodbye) {
      void disablePush(this.pushToken).catch(() => {});
      this.api.goodbye();
    }
    this.realtime.disconnect();
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    this.signOut(notice);
  }

  /** Heartbeat every 30 s while the page is open; the offline signal when it goes away. */
  private startPresence(): void {
    const beat = () => void this.api.post('/presence/heartbeat').catch(() => {});
    beat();
    const timer = setInterval(beat, HEARTBEAT_MS);
    const onHide = () => this.api.goodbye(); // fetch with keepalive: it outlives the page
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

  /** After a reconnect: what the socket missed, over HTTP (events are at-most-once). */
  private async catchUp(): Promise<void> {
    try {
      await this.loadInbox(true);
      await this.thread?.catchUp();
      await Promise.all([this.refreshPresence(this.directPartners()), this.loadBlocks()]);
    } catch (err) {
      toast(`Catching up failed: ${describeError(err)}`);
    }
  }

  // ---- navigation: #/c/{id} is the open conversation -------------------------------------------------------

  navigate(conversationId: number | null): void {
    const hash = conversationId === null ? '' : `#/c/${conversationId}`;
    if (location.hash !== hash) {
      if (hash) location.hash = hash; // a history entry: the browser's back button returns to the inbox
      else history.pushState(null, '', location.pathname + location.search);
    }
    this.route();
  }

  private route(): void {
    const match = /^#\/c\/(\d+)$/.exec(location.hash);
    if (!match && location.hash !== '') return; // some other anchor: not a navigation
    const id = match ? Number(match[1]) : null;
    if (id === (this.thread?.id ?? null)) return;
    this.thread?.destroy();
    this.thread = null;
    if (id === null) {
      this.showPlaceholder();
    } else {
      this.thread = new ThreadView(this, id);
      this.threadPane.replaceChildren(this.thread.element);
      void this.thread.load();
    }
    this.root.classList.toggle('show-thread', id !== null);
    this.renderInbox();
  }

  /** Opens a conversation at one message (a search result). */
  openMessage(conversationId: number, messageId: number): void {
    this.navigate(conversationId);
    void this.thread?.showMessage(messageId);
  }

  /** Back to the inbox (on phones the inbox and the conversation are separate screens). */
  back(): void {
    const id = this.thread?.id;
    this.navigate(null);
    if (id !== undefined) (this.inboxList.querySelector(`[data-id="${id}"]`) as HTMLElement | null)?.focus();
  }

  /** The conversation pane after the conversation went away (removed, left, deleted, not found). */
  closeThread(notice: string): void {
    this.thread?.destroy();
    this.thread = null;
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
    this.showPlaceholder(notice);
    this.root.classList.add('show-thread');
    this.renderInbox();
  }

  private showPlaceholder(notice?: string): void {
    const back = h('button', { type: 'button', className: 'secondary back-to-inbox' }, 'Back to conversations');
    back.addEventListener('click', () => this.navigate(null));
    this.threadPane.replaceChildren(
      h(
        'div',
        { className: 'empty-state thread-empty' },
        notice
          ? h('p', { className: 'notice', role: 'status', id: 'thread-notice' }, notice)
          : h('p', { className: 'empty-title' }, this.conversations.size > 0 ? 'Pick a conversation' : 'Welcome to Parley'),
        notice ? back : h('p', {}, 'Messages appear here. Everything updates live, without reloading.'),
      ),
    );
  }

  // ---- the inbox -------------------------------------------------------------------------------------------

  private async loadInbox(reset = false): Promise<void> {
    const cursor = !reset && this.inboxCursor ? `&cursor=${encodeURIComponent(this.inboxCursor)}` : '';
    let page: Paged<Conversation>;
    try {
      page = await this.api.get<Paged<Conversation>>(`/conversations?limit=${INBOX_PAGE}${cursor}`);
    } catch (err) {
      if ((err as ApiError).status !== 401) toast(describeError(err));
      return;
    }
    for (const conversation of page.data) this.upsertConversation(conversation, false);
    if (!reset || !this.inboxLoaded) this.inboxCursor = page.meta.next_cursor;
    this.inboxLoaded = true;
    this.renderInbox();
  }

  upsertConversation(incoming: Conversation, render = true): void {
    const previous = this.conversations.get(incoming.id);
    const isNew = !previous;
    // InboxUpdated carries only the v1 keys: keep the HTTP-only ones (mute, mention count) we know.
    const conversation: Conversation = {
      ...incoming,
      muted: incoming.muted ?? previous?.muted ?? false,
      muted_until: incoming.muted_until !== undefined ? incoming.muted_until : (previous?.muted_until ?? null),
      unread_mention_count: incoming.unread_mention_count ?? (incoming.unread_count === 0 ? 0 : (previous?.unread_mention_count ?? 0)),
    };
    // A new unread message that names me (InboxUpdated has no mention count): ask for the conversation's count.
    const last = incoming.last_message;
    if (
      incoming.unread_mention_count === undefined &&
      previous &&
      incoming.unread_count > previous.unread_count &&
      last?.sender.id !== this.me.id &&
      last?.body?.includes(`@${this.displayName(this.me)}`)
    ) {
      void this.refreshConversation(incoming.id);
    }
    this.conversations.set(conversation.id, conversation);
    this.touch(conversation);
    if (isNew && this.inboxLoaded) {
      const partner = this.partner(conversation);
      if (partner && !this.online.has(partner.id)) void this.refreshPresence([partner.id]);
    }
    for (const listener of this.conversationListeners) listener(conversation, conversation.id);
    if (render) this.renderInbox();
  }

  /** Changes one conversation locally (this tab gets no events for its own requests). */
  patchConversation(id: number, changes: Partial<Conversation>): void {
    const current = this.conversations.get(id);
    if (current) this.upsertConversation({ ...current, ...changes });
  }

  /** Re-reads one conversation after a change whose events skipped this tab; gone (404) means removed. */
  async refreshConversation(id: number): Promise<void> {
    try {
      const { data } = await this.api.get<{ data: Conversation }>(`/conversations/${id}`);
      this.upsertConversation(data);
    } catch (err) {
      if ((err as ApiError).status === 404) this.removeConversation(id);
      else toast(describeError(err));
    }
  }

  removeConversation(id: number, notice?: string): void {
    this.conversations.delete(id);
    this.activity.delete(id);
    this.realtime.leaveConversation(id);
    for (const listener of this.conversationListeners) listener(null, id);
    if (this.thread?.id === id) this.closeThread(notice ?? 'This conversation is no longer available.');
    else this.renderInbox();
  }

  /** A message this tab sent: the inbox entry moves up with it. */
  noteOwnMessage(message: Message): void {
    this.patchConversation(message.conversation_id, { last_message: message, updated_at: message.created_at });
  }

  onConversationChange(listener: (conversation: Conversation | null, id: number) => void): () => void {
    this.conversationListeners.add(listener);
    return () => this.conversationListeners.delete(listener);
  }

  private touch(conversation: Conversation): void {
    const times = [conversation.created_at, conversation.last_message?.created_at].filter(Boolean).map((t) => Date.parse(t as string));
    this.activity.set(conversation.id, Math.max(this.activity.get(conversation.id) ?? 0, ...times));
  }

  private sortedConversations(): Conversation[] {
    return [...this.conversations.values()].sort((a, b) => (this.activity.get(b.id) ?? 0) - (this.activity.get(a.id) ?? 0) || b.id - a.id);
  }

  /** Every conversation, newest activity first (for the forward dialog). */
  inbox(): Conversation[] {
    return this.sortedConversations();
  }

  private membershipRevoked(event: GroupMembershipRevokedEvent): void {
    const name = this.conversations.get(event.conversation_id)?.name ?? 'the group';
    const notice =
      event.reason === 'removed' ? `You were removed from “${name}”.` : event.reason === 'left' ? `You left “${name}”.` : `“${name}” was deleted.`;
    const wasOpen = this.thread?.id === event.conversation_id;
    this.removeConversation(event.conversation_id, notice);
    if (!wasOpen) toast(notice, 'info');
    announce(notice);
  }

  // ---- people ----------------------------------------------------------------------------------------------

  /** The other person of a direct conversation. */
  partner(conversation: Conversation): User | null {
    if (conversation.type !== 'direct') return null;
    return conversation.participants_preview.find((p) => p.id !== this.me.id) ?? null;
  }

  displayName(user: { id: number; name: string }): string {
    return user.name.trim() || `User ${user.id}`;
  }

  title(conversation: Conversation): string {
    if (conversation.type === 'group') return conversation.name ?? 'Group';
    const partner = this.partner(conversation);
    return partner ? this.displayName(partner) : 'Direct conversation';
  }

  /** A participant's name by id, from what the previews show. */
  nameOf(userId: number, conversation?: Conversation): string {
    if (userId === this.me.id) return this.me.name;
    const sources = conversation ? [conversation, ...this.conversations.values()] : [...this.conversations.values()];
    for (const c of sources) {
      const found = c.participants_preview.find((p) => p.id === userId);
      if (found) return this.displayName(found);
    }
    return `User ${userId}`;
  }

  private directPartners(): number[] {
    return [...this.conversations.values()].map((c) => this.partner(c)?.id).filter((id): id is number => id !== undefined);
  }

  async refreshPresence(userIds: number[]): Promise<void> {
    const ids = [...new Set(userIds)];
    for (let i = 0; i < ids.length; i += 100) {
      try {
        const { data } = await this.api.get<{ data: Presence[] }>(`/presence?user_ids=${ids.slice(i, i + 100).join(',')}`);
        for (const p of data) this.online.set(p.user_id, p.is_online);
      } catch {
        /* someone no longer shares a conversation (403): their dot stays as it was */
      }
    }
    this.renderInbox();
    this.thread?.renderHeader();
  }

  private setOnline(userId: number, online: boolean): void {
    this.online.set(userId, online);
    this.renderInbox();
    this.thread?.renderHeader();
  }

  async loadBlocks(): Promise<void> {
    try {
      const result = await this.api.get<{ data: User[]; messaging_blocked_user_ids: number[] }>('/blocks');
      this.blockedByMe.clear();
      for (const user of result.data) this.blockedByMe.add(user.id);
      this.messagingBlocked = new Set(result.messaging_blocked_user_ids);
      this.blocksChanged();
    } catch {
      /* shown where it matters: a send answers 403 blocked */
    }
  }

  /** After POST /blocks or DELETE /blocks/{id} from this tab. */
  applyBlocks(messagingBlocked: number[], userId: number, blocked: boolean): void {
    this.messagingBlocked = new Set(messagingBlocked);
    if (blocked) this.blockedByMe.add(userId);
    else this.blockedByMe.delete(userId);
    this.blocksChanged();
  }

  onBlocksChange(listener: () => void): () => void {
    this.blockListeners.add(listener);
    return () => this.blockListeners.delete(listener);
  }

  private blocksChanged(): void {
    for (const listener of this.blockListeners) listener();
    this.thread?.renderHeader();
    this.thread?.renderComposerState();
  }

  // ---- rendering -------------------------------------------------------------------------------------------

  private renderShell(): void {
    const newChat = h('button', { type: 'button', id: 'new-chat' }, 'New chat');
    const newGroup = h('button', { type: 'button', id: 'new-group', className: 'secondary' }, 'New group');
    const blocked = h('button', { type: 'button', id: 'blocked-users', className: 'secondary' }, 'Blocked');
    const signOut = h('button', { type: 'button', id: 'sign-out', className: 'link-button' }, 'Sign out');
    newChat.addEventListener('click', () => newDirectDialog(this));
    newGroup.addEventListener('click', () => newGroupDialog(this));
    blocked.addEventListener('click', () => blocksDialog(this));
    signOut.addEventListener('click', () => this.stop());
    this.loadMore.addEventListener('click', async () => {
      this.loadMore.disabled = true;
      await this.loadInbox();
      this.loadMore.disabled = false;
    });

    const skip = h('a', { className: 'skip-link', href: '#main' }, 'Skip to the conversation');
    skip.addEventListener('click', (event) => {
      event.preventDefault(); // the hash is the open conversation: move the focus instead
      (document.getElementById('composer-input') ?? this.threadPane).focus();
    });
    this.inboxScroll.replaceChildren(this.inboxList, this.inboxEmpty, this.loadMore);
    const search = new SearchPanel(this, this.inboxScroll);
    this.root.className = 'chat';
    this.root.replaceChildren(
      skip,
      h(
        'aside',
        { className: 'sidebar', 'aria-label': 'Conversations' },
        h(
          'header',
          { className: 'sidebar-header' },
          h('div', { className: 'brand' }, h('span', { className: 'logo', 'aria-hidden': 'true' }, 'P'), h('span', {}, 'Parley')),
          h('div', { className: 'me' }, this.meLabel, this.status, pushButton(this.pushToken), signOut),
        ),
        h('nav', { className: 'sidebar-actions', 'aria-label': 'Start' }, newChat, newGroup, blocked),
        search.element,
        h('h2', { id: 'inbox-heading', className: 'visually-hidden' }, 'Conversations'),
        search.panel,
        this.inboxScroll,
      ),
      this.threadPane,
    );
    this.renderMe();
    this.showPlaceholder();
  }

  private renderMe(): void {
    if (this.me.name === `User ${this.me.id}`) {
      // The token had no name: take it from a conversation preview.
      for (const c of this.conversations.values()) {
        const found = c.participants_preview.find((p) => p.id === this.me.id && p.name.trim());
        if (found) this.me.name = found.name;
      }
    }
    this.meLabel.replaceChildren(avatar(this.me.name, this.me.id), h('span', {}, this.me.name, h('span', { className: 'muted' }, ` #${this.me.id}`)));
  }

  private renderStatus(state: ConnectionState): void {
    this.status.textContent = CONNECTION_LABELS[state] ?? state;
    this.status.dataset.state = state;
  }

  renderInbox(): void {
    if (!this.inboxLoaded) return;
    const openId = this.thread?.id ?? null;
    const focusedId = (document.activeElement as HTMLElement | null)?.closest?.('.inbox-list')
      ? (document.activeElement as HTMLElement).dataset.id
      : undefined;
    const items = this.sortedConversations().map((c) => this.inboxItem(c, c.id === openId));
    this.inboxList.replaceChildren(...items);
    this.inboxEmpty.hidden = this.conversations.size > 0;
    this.loadMore.hidden = this.inboxCursor === null;
    if (focusedId) (this.inboxList.querySelector(`[data-id="${focusedId}"]`) as HTMLElement | null)?.focus();
  }

  private inboxItem(c: Conversation, current: boolean): HTMLElement {
    const partner = this.partner(c);
    const online = partner ? (this.online.get(partner.id) ?? false) : null;
    const last = c.last_message;
    let preview = c.type === 'group' ? `${c.participant_count} members` : 'No messages yet';
    if (last) {
      const who = last.sender.id === this.me.id ? 'You: ' : c.type === 'group' ? `${this.displayName(last.sender)}: ` : '';
      const what = last.body ?? (last.attachment ? `Attachment: ${last.attachment.name}` : '');
      preview = who + what;
    }
    const button = h(
      'button',
      { type: 'button', className: 'conversation-item', 'data-id': c.id, 'aria-current': current ? 'true' : null },
      avatar(this.title(c), c.type === 'group' ? c.id + 7 : (partner?.id ?? c.id), { online }),
      h(
        'span',
        { className: 'item-main' },
        h('span', { className: 'item-title' }, this.title(c), online ? h('span', { className: 'visually-hidden' }, ' (online)') : null, c.muted ? mutedMark() : null),
        h('span', { className: 'item-preview' }, preview),
      ),
      h(
        'span',
        { className: 'item-meta' },
        h('time', { datetime: last?.created_at ?? c.created_at }, shortTime(last?.created_at ?? c.created_at)),
        // The open conversation is being marked read: no badge flashing up meanwhile.
        (c.unread_mention_count ?? 0) > 0 && !(current && document.visibilityState === 'visible')
          ? h('span', { className: 'badge mention-badge', title: `${c.unread_mention_count} unread mention${c.unread_mention_count === 1 ? '' : 's'}` }, '@', h('span', { className: 'visually-hidden' }, ` ${c.unread_mention_count} unread mention${c.unread_mention_count === 1 ? '' : 's'}`))
          : null,
        c.unread_count > 0 && !(current && document.visibilityState === 'visible') ? h('span', { className: 'badge' }, String(c.unread_count), h('span', { className: 'visually-hidden' }, ' unread')) : null,
      ),
    );
    button.addEventListener('click', () => this.navigate(c.id));
    return h('li', {}, button);
  }
}
