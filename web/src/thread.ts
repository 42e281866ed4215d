// One open conversation: its channel chat.conversation.{id}, the history (paged backwards with `before`, caught
// up with `after` after a reconnect), the header, reading, and the parts it wires together: the message list,
// the composer and the read receipts (each in its own file). It follows the store's changes of this
// conversation, of presence and of blocks.
import type { ApiError } from './api.js';
import { describeError } from './api.js';
import { Composer } from './composer.js';
import { headerActions, hideForMe } from './conversation-menu.js';
import { forwardDialog } from './dialogs.js';
import { announce, avatar, confirmAction, erased, h, lastSeen, toast } from './dom.js';
import { MessageList } from './message-list.js';
import { Pins } from './pins.js';
import { Receipts } from './receipts.js';
import { Threads } from './replies.js';
import type { ChatStore } from './store.js';
import type { Conversation, GroupParticipantsChangedEvent, Message, Paged } from './types.js';

const PAGE = 30;
const CATCH_UP_PAGE = 100;
/** Forget someone's typing if neither a renewal nor the server's false arrives. */
const TYPING_SHOW_MS = 10_000;

export class ThreadView {
  readonly element: HTMLElement;
  private readonly list: MessageList;
  private readonly composer: Composer;
  private readonly receipts: Receipts;
  private readonly threads: Threads;
  private readonly pins: Pins;
  private olderCursor: string | null = null;
  private loaded = false;
  private markLoaded!: () => void;
  /** Resolves when the first page of history is on screen. */
  private readonly whenLoaded = new Promise<void>((resolve) => (this.markLoaded = resolve));
  private destroyed = false;
  private readonly cleanups: (() => void)[] = [];
  private readonly typingUsers = new Map<number, ReturnType<typeof setTimeout>>();
  private readPending = false;
  private readAgain = false;

  private readonly header = h('header', { className: 'thread-header' });
  private readonly typingLine = h('p', { className: 'typing', id: 'typing-indicator', 'aria-live': 'polite' });

  constructor(
    private readonly store: ChatStore,
    readonly id: number,
  ) {
    this.element = h('section', { className: 'thread', 'aria-labelledby': 'thread-title', 'data-conversation-id': id });
    const shared = {
      forward: (m: Message) => forwardDialog(store, m, (copies) => copies.forEach((c) => this.list.upsert(c))),
      delete: (m: Message) => void this.deleteMessage(m),
      hide: (m: Message) => void hideForMe(store, m),
    };
    this.list = new MessageList(store, id, {
      ...shared,
      reply: (m) => this.composer.replyToMessage(m),
      edit: (m) => this.composer.edit(m),
      older: () => void this.loadOlder(),
      rendered: () => this.receipts.render(),
      thread: (m) => void this.threads.open(m),
      unread: (rootId) => this.threads.isUnread(rootId),
      pin: (m) => void this.pins.toggle(m),
    });
    this.pins = new Pins(store, id, this.list, (messageId) => void this.showMessage(messageId));
    this.threads = new Threads(store, id, this.list, this.element, shared);
    this.receipts = new Receipts(store, id, this.list);
    this.composer = new Composer(store, id, {
      lastOwnMessage: () => [...this.list.mine()].reverse().find((m) => m.body !== null),
      pending: (element) => this.list.addPending(element),
      // This tab gets no events for its own requests (X-Socket-ID): show the answer.
      sent: (message) => {
        this.list.upsert(message);
        const last = this.conversation()?.last_message;
        if (!last || last.id <= message.id) store.noteOwnMessage(message);
      },
      changed: () => this.list.scrollToBottom(),
    });
    this.element.append(this.header, this.pins.element, this.list.element, this.typingLine, this.composer.element);

    this.cleanups.push(
      store.realtime.listenToConversation(id, {
        messageSent: (m) => this.received(m),
        // Only what is on screen: an edit of a reply in a thread is no message of the conversation's list.
        messageUpdated: (m) => [this.list, this.threads.listOf(m.id)].forEach((l) => l?.has(m.id) && l.upsert(m)),
        messageDeleted: ({ id: messageId }) => this.deleted(messageId),
        read: ({ user_id, read_at }) => this.receipts.read(user_id, read_at),
        reactionsUpdated: ({ message_id, reactions }) => [this.list, this.threads.listOf(message_id)].forEach((l) => l?.setReactions(message_id, reactions)),
        threadReply: (e) => this.threads.reply(e),
        threadUpdated: (e) => this.threads.updated(e),
        threadRead: (e) => this.threads.readBy(e),
        pinned: (e) => this.pins.changed(e),
        typing: ({ user_id, is_typing }) => {
          if (user_id !== store.me.id) this.setTyping(user_id, is_typing);
        },
        participantsChanged: (e, at) => this.participantsChanged(e, at),
        refused: (status) => {
          if (status === 403) store.removeConversation(id, 'You are no longer in this conversation.');
        },
      }),
    );
    this.cleanups.push(
      store.subscribe((change) => {
        if (change.kind === 'presence') this.renderHeader();
        if (change.kind === 'participants' && change.id === id) this.participantsChanged(change.event);
        if (change.kind === 'hidden' && change.id === id) [this.list, this.threads.listOf(change.messageId)].forEach((l) => l?.drop((m) => m.id === change.messageId));
        if (change.kind === 'blocks') {
          this.renderHeader();
          this.composer.renderState();
          this.threads.renderState();
        }
        if ((change.kind === 'conversation' && change.id === id && change.conversation) || change.kind === 'inbox') {
          this.renderHeader();
          this.composer.renderState();
          this.threads.renderState();
          // History cleared (here or in another tab of mine): what was before is gone for me.
          const cleared = this.conversation()?.cleared_at;
          if (cleared) this.list.drop((m) => m.created_at <= cleared);
          if ((this.conversation()?.unread_count ?? 0) > 0) this.markRead();
        }
      }),
    );
    const onVisible = () => {
      if (document.visibilityState === 'visible' && (this.conversation()?.unread_count ?? 0) > 0) this.markRead();
    };
    document.addEventListener('visibilitychange', onVisible);
    this.cleanups.push(() => document.removeEventListener('visibilitychange', onVisible));
    // "last seen 5 min ago" stays true as time passes.
    const ticking = setInterval(() => {
      const conversation = this.conversation();
      const partner = conversation && this.store.partner(conversation);
      const subtitle = this.header.querySelector('#thread-subtitle');
      if (partner && subtitle) subtitle.textContent = this.presenceText(partner.id);
    }, 20_000);
    this.cleanups.push(() => clearInterval(ticking));
  }

  private conversation(): Conversation | undefined {
    return this.store.conversation(this.id);
  }

  // ---- loading ---------------------------------------------------------------------------------------------

  async load(): Promise<void> {
    this.renderHeader();
    this.composer.renderState();
    if (!this.conversation()) {
      // Opened by address (#/c/12) before the inbox listed it: ask for it.
      await this.store.refreshConversation(this.id);
      if (this.destroyed || !this.conversation()) return; // a 404 closed the view
    }
    this.renderHeader();
    this.composer.renderState();
    try {
      const page = await this.store.api.get<Paged<Message>>(`/conversations/${this.id}/messages?limit=${PAGE}`);
      if (this.destroyed) return;
      for (const m of page.data) this.list.upsert(m, false);
      this.olderCursor = page.meta.next_cursor;
    } catch (err) {
      if (this.destroyed) return;
      if ((err as ApiError).status === 404) return this.store.removeConversation(this.id, 'This conversation is no longer available.');
      toast(describeError(err));
    }
    await Promise.all([this.receipts.load(() => this.destroyed), this.loadNotices()]);
    if (this.destroyed) return;
    this.loaded = true;
    this.store.watch(this.id, true);
    this.list.show(this.olderCursor !== null);
    this.list.scrollToBottom();
    this.markLoaded();
    this.markRead();
    void this.threads.loadUnread();
    void this.pins.load();
    void this.store.refreshPresence((this.conversation()?.participants_preview ?? []).map((p) => p.id).filter((i) => i !== this.store.me.id)).catch(() => {});
    if (window.matchMedia('(min-width: 48rem)').matches || document.activeElement === document.body) this.composer.focus();
  }

  /** A group's notices of the last days (GET /groups/{id}/changes), drawn between the messages of their time. */
  private async loadNotices(): Promise<void> {
    if (this.conversation()?.type !== 'group') return;
    try {
      const page = await this.store.api.get<{ data: { data: GroupParticipantsChangedEvent; at: string }[] }>(`/groups/${this.id}/changes?limit=100`);
      if (this.destroyed) return;
      for (const change of page.data) this.list.addNote(this.noticeText(change.data), Date.parse(change.at));
    } catch {
      // Notices are an extra: the messages show without them.
    }
  }

  private async loadOlder(): Promise<void> {
    if (!this.olderCursor) return;
    const cursor = this.olderCursor;
    try {
      await this.list.whileLoadingOlder(async () => {
        const page = await this.store.api.get<Paged<Message>>(`/conversations/${this.id}/messages?limit=${PAGE}&before=${cursor}`);
        for (const m of page.data) this.list.upsert(m, false);
        this.olderCursor = page.meta.next_cursor;
      });
      this.list.setHasOlder(this.olderCursor !== null);
    } catch (err) {
      toast(describeError(err));
    }
  }

  /** Scrolls to a message (a search result) and marks it briefly, loading older pages until it is there. */
  async showMessage(messageId: number): Promise<void> {
    await this.whenLoaded;
    for (let pages = 0; !this.list.has(messageId) && this.olderCursor && pages < 50 && !this.destroyed; pages++) {
      const cursor = this.olderCursor;
      await this.loadOlder();
      if (this.olderCursor === cursor) break; // the page failed to load (loadOlder said why)
    }
    const element = this.list.elementOf(messageId);
    if (!element) return toast('That message is no longer in the conversation.', 'info');
    element.scrollIntoView({ block: 'center' });
    element.classList.add('found');
    element.focus();
    setTimeout(() => element.classList.remove('found'), 2_500);
  }

  /** Opens a thread (from the Threads list) once the history is on screen. */
  async openThread(root: Message): Promise<void> {
    await this.whenLoaded;
    if (!this.destroyed) await this.threads.open(this.list.get(root.id) ?? root);
  }

  /** After a reconnect: every message after the newest one on screen, page by page (each page newest first). */
  async catchUp(): Promise<void> {
    if (!this.loaded) return;
    let after = this.list.newestId();
    try {
      for (;;) {
        const page = await this.store.api.get<Paged<Message>>(`/conversations/${this.id}/messages?after=${after}&limit=${CATCH_UP_PAGE}`);
        if (this.destroyed) return;
        for (const m of [...page.data].reverse()) this.received(m, false);
        if (page.meta.next_cursor === null) break;
        after = Number(page.meta.next_cursor);
      }
    } catch (err) {
      if ((err as ApiError).status === 404) this.store.removeConversation(this.id, 'This conversation is no longer available.');
      else toast(describeError(err));
      return;
    }
    this.markRead();
  }

  destroy(): void {
    this.destroyed = true;
    this.store.watch(this.id, false);
    this.threads.close(false);
    this.composer.destroy();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    for (const timer of this.typingUsers.values()) clearTimeout(timer);
    this.list.destroy();
  }

  // ---- messages --------------------------------------------------------------------------------------------

  /** A message from the channel (or from catching up): shown, announced, and read if the page is visible. */
  private received(message: Message, live = true): void {
    const known = this.list.has(message.id);
    this.list.upsert(message);
    if (known || message.sender.id === this.store.me.id) return;
    this.setTyping(message.sender.id, false);
    if (live) announce(`${this.store.displayName(message.sender)}: ${message.body ?? (message.attachment ? `sent ${message.attachment.name}` : '')}`);
    this.markRead();
  }

  private deleted(messageId: number): void {
    this.threads.deleted(messageId);
    if (this.list.remove(messageId)) this.composer.forget(messageId);
  }

  private async deleteMessage(m: Message): Promise<void> {
    if (!(await confirmAction('Delete this message for everyone?', 'Delete'))) return;
    try {
      await this.store.api.delete(`/messages/${m.id}`);
      this.deleted(m.id);
      void this.store.refreshConversation(this.id); // the inbox's last message may have changed
      this.composer.focus();
    } catch (err) {
      toast(describeError(err));
    }
  }

  // ---- reading ---------------------------------------------------------------------------------------------

  /** POST /read when the page is visible and something is unread; the inbox badge clears from the answer. */
  private markRead(): void {
    if (!this.loaded || document.visibilityState !== 'visible') return;
    if (this.readPending) {
      this.readAgain = true; // something arrived while the last read was on its way
      return;
    }
    const conversation = this.conversation();
    const newest = this.list.newest();
    const unreadByCount = (conversation?.unread_count ?? 0) > 0;
    const unreadByTime = newest && newest.sender.id !== this.store.me.id && (!conversation?.last_read_at || conversation.last_read_at < newest.created_at);
    if (!unreadByCount && !unreadByTime) return;
    this.readPending = true;
    setTimeout(async () => {
      try {
        const { data } = await this.store.api.post<{ data: { read_at: string } }>(`/conversations/${this.id}/read`);
        this.store.patchConversation(this.id, { unread_count: 0, last_read_at: data.read_at });
      } catch (err) {
        if ((err as ApiError).status !== 404) toast(describeError(err));
      } finally {
        this.readPending = false;
        if (this.readAgain && !this.destroyed) {
          this.readAgain = false;
          void this.store.refreshConversation(this.id).then(() => this.markRead());
        }
      }
    }, 150);
  }

  // ---- others typing ---------------------------------------------------------------------------------------

  private setTyping(userId: number, typing: boolean): void {
    clearTimeout(this.typingUsers.get(userId));
    if (typing) this.typingUsers.set(userId, setTimeout(() => this.setTyping(userId, false), TYPING_SHOW_MS));
    else this.typingUsers.delete(userId);
    const names = [...this.typingUsers.keys()].map((i) => this.store.nameOf(i, this.conversation()));
    this.typingLine.textContent =
      names.length === 0 ? '' : names.length === 1 ? `${names[0]} is typing…` : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} are typing…`;
  }

  // ---- group changes ---------------------------------------------------------------------------------------

  /** What a group notice says of a change ("You added Carol", "Dave left", "Bob is now an admin"). */
  private noticeText(event: GroupParticipantsChangedEvent): string {
    const before = this.conversation();
    const names = event.target_user_ids.map((i) => this.store.nameOf(i, before ? { ...before, participants_preview: [...before.participants_preview, ...event.participants_preview] } : undefined));
    const actor = event.actor_user_id === this.store.me.id ? 'You' : this.store.nameOf(event.actor_user_id, before);
    const selfAction = event.target_user_ids.length === 1 && event.target_user_ids[0] === event.actor_user_id;
    return event.change_type === 'added'
        ? `${actor} added ${names.join(', ')}`
        : event.change_type === 'removed'
          ? selfAction
            ? `${names[0]} left`
            : `${actor} removed ${names.join(', ')}`
          : event.target_user_ids
              .map((userId) => {
                const role = event.participants_preview.find((p) => p.id === userId)?.role;
                return role ? `${this.store.nameOf(userId, before)} is now ${{ owner: 'the owner', admin: 'an admin', member: 'a member' }[role]}` : `${this.store.nameOf(userId, before)}’s role changed`;
              })
              .join('; ');
  }

  private participantsChanged(event: GroupParticipantsChangedEvent, at?: number): void {
    const text = this.noticeText(event);
    this.store.patchConversation(this.id, { participant_count: event.participant_count, participants_preview: event.participants_preview });
    // My own role changed: the Delete buttons on others' messages follow it.
    if (event.change_type === 'role_changed' && event.target_user_ids.includes(this.store.me.id)) this.list.redrawMessages();
    if (event.change_type === 'removed') {
      // A member who left or was removed no longer counts as a reader.
      this.receipts.forget(event.target_user_ids);
    }
    this.list.addNote(text, at);
    announce(text);
  }

  // ---- rendering -------------------------------------------------------------------------------------------

  private renderHeader(): void {
    const conversation = this.conversation();
    const back = h('button', { type: 'button', className: 'icon-button back', 'aria-label': 'Back to conversations' }, '‹');
    back.addEventListener('click', () => this.store.open(null));
    if (!conversation) {
      this.header.replaceChildren(back, h('h2', { id: 'thread-title' }, 'Loading…'));
      return;
    }
    const partner = this.store.partner(conversation);
    const online = partner ? (this.store.isOnline(partner.id) ?? false) : null;
    const subtitle = partner
      ? this.presenceText(partner.id)
      : `${conversation.participant_count} member${conversation.participant_count === 1 ? '' : 's'}: ${conversation.participants_preview.map((p) => (p.id === this.store.me.id ? 'you' : this.store.displayName(p))).join(', ')}${conversation.participant_count > conversation.participants_preview.length ? ', …' : ''}`;
    // Drawn again only when what it shows changed: an open "More actions" menu stays open meanwhile.
    const key = JSON.stringify([this.store.title(conversation), subtitle, online, conversation.muted, conversation.archived_at, conversation.pinned_at, partner && this.store.hasBlocked(partner.id)]);
    if (key === this.header.dataset.key) return;
    this.header.dataset.key = key;
    this.header.replaceChildren(
      back,
      avatar(this.store.title(conversation), conversation.type === 'group' ? conversation.id + 7 : (partner?.id ?? conversation.id), { online }),
      h('div', { className: 'thread-heading' }, h('h2', { id: 'thread-title', className: erased(this.store.title(conversation)) }, this.store.title(conversation)), h('p', { className: 'subtitle', id: 'thread-subtitle' }, subtitle)),
      h('div', { className: 'thread-actions' }, ...headerActions(this.store, conversation)),
    );
  }

  /** "online", "last seen 5 min ago", or "offline" when the server knows no time. */
  private presenceText(userId: number): string {
    if (this.store.isOnline(userId)) return 'online';
    const at = this.store.lastSeenAt(userId);
    return at ? lastSeen(at) : 'offline';
  }
}
