// One open conversation: its channel chat.conversation.{id}, the history (paged backwards with `before`, caught up
// with `after` after a reconnect), the composer (send, reply, edit, attachments, typing) and read receipts.
import type { ApiError } from './api.js';
import { describeError } from './api.js';
import type { ChatApp } from './app.js';
import { forwardDialog, groupSettingsDialog } from './dialogs.js';
import { AttachmentFiles, filePreview } from './attachments.js';
import { MentionAutocomplete, withMentions } from './mentions.js';
import { muteToggle } from './mute.js';
import { SendQueue } from './sending.js';
import { reactionPicker, renderReactions, type ReactionContext } from './reactions.js';
import { announce, avatar, confirmAction, h, icon, labelledIconButton, longTime, shortTime, toast } from './dom.js';
import type { Conversation, GroupParticipantsChangedEvent, Message, Paged, Reaction, ReadPosition } from './types.js';

const PAGE = 30;
const CATCH_UP_PAGE = 100;
/** Renew "typing" well within the server's 8 s; stop after this long without a keystroke. */
const TYPING_RENEW_MS = 3_000;
const TYPING_IDLE_MS = 5_000;
/** Forget someone's typing if neither a renewal nor the server's false arrives. */
const TYPING_SHOW_MS = 10_000;

export class ThreadView {
  readonly element: HTMLElement;
  private readonly messages = new Map<number, Message>();
  /** Message ids, ascending: the order on screen. */
  private ids: number[] = [];
  private olderCursor: string | null = null;
  private loaded = false;
  private markLoaded!: () => void;
  /** Resolves when the first page of history is on screen. */
  private readonly whenLoaded = new Promise<void>((resolve) => (this.markLoaded = resolve));
  private destroyed = false;
  private readonly leaveChannel: () => void;
  /** How far each other participant read: the message id from GET /reads (so receipts survive a reload), and
   * the time of their latest ConversationRead (the event carries no message id). */
  private readonly readBy = new Map<number, { messageId: number; at: string | null }>();
  private readonly reactionContext: ReactionContext;
  private readonly typingUsers = new Map<number, ReturnType<typeof setTimeout>>();
  private readonly files: AttachmentFiles;
  /** Messages deleted while the thread is open: shown as placeholders, never edited or replied to. */
  private readonly deletedIds = new Set<number>();
  /** The picked file's preview in the composer banner, kept while the file stays picked. */
  private filePreview: (ReturnType<typeof filePreview> & { file: File }) | null = null;
  private readonly unsubscribe: (() => void)[] = [];

  // Composer state.
  private replyTo: Message | null = null;
  private editing: Message | null = null;
  private file: File | null = null;
  private readonly sendQueue: SendQueue;
  private readonly mentions: MentionAutocomplete;
  /** Typing signals go one after another, so a late "true" can never follow the "false" of a send. */
  private typingChain: Promise<unknown> = Promise.resolve();
  private typingSentAt = 0;
  private typingIdle: ReturnType<typeof setTimeout> | undefined;
  private readPending = false;
  private readAgain = false;

  // Elements.
  private readonly header = h('header', { className: 'thread-header' });
  private readonly list = h('ol', { className: 'message-list', id: 'message-list', 'aria-label': 'Messages' });
  private readonly olderButton = h('button', { type: 'button', className: 'secondary load-older', hidden: true }, 'Load older messages');
  private readonly scroller = h('div', { className: 'message-scroll', tabindex: 0, 'aria-label': 'Message history', role: 'region' });
  private readonly emptyNote = h('p', { className: 'empty-note', hidden: true }, 'No messages yet. Say hello!');
  private readonly typingLine = h('p', { className: 'typing', id: 'typing-indicator', 'aria-live': 'polite' });
  private readonly banner = h('div', { className: 'composer-banner', hidden: true });
  private readonly input = h('textarea', {
    id: 'composer-input',
    name: 'body',
    rows: 1,
    placeholder: 'Write a message…',
    'aria-describedby': 'composer-help',
    autocomplete: 'off',
  });
  private readonly fileInput = h('input', { type: 'file', id: 'composer-file', className: 'visually-hidden' });
  private readonly sendButton = h('button', { type: 'submit', className: 'send' }, 'Send');
  private readonly blockedNote = h('p', { className: 'blocked-note', role: 'status', hidden: true });
  private readonly form = h('form', { className: 'composer', 'aria-label': 'Send a message' });

  constructor(
    private readonly app: ChatApp,
    readonly id: number,
  ) {
    this.element = h('section', { className: 'thread', 'aria-labelledby': 'thread-title', 'data-conversation-id': id });
    this.files = new AttachmentFiles(app.api);
    this.scroller.append(this.olderButton, this.emptyNote, this.list);
    // Before the composer's own keydown handler: while the list is open, Enter chooses a person.
    this.mentions = new MentionAutocomplete(this.input, () =>
      (this.conversation()?.participants_preview ?? []).filter((p) => p.id !== app.me.id).map((p) => ({ user: p, name: app.displayName(p) })),
    );
    this.buildComposer();
    this.element.append(this.header, this.scroller, this.typingLine, this.form);
    this.olderButton.addEventListener('click', () => void this.loadOlder());
    this.sendQueue = new SendQueue(app.api, id, {
      sent: (message, pending) => {
        pending.remove();
        // This tab gets no MessageSent for its own send (X-Socket-ID): show the answer.
        this.upsert(message);
        this.app.noteOwnMessage(message);
      },
      changed: () => this.scrollToBottom(),
    });
    this.reactionContext = {
      api: app.api,
      me: app.me.id,
      nameOf: (userId) => app.nameOf(userId, this.conversation()),
      changed: (messageId, reactions) => this.setReactions(messageId, reactions),
    };

    this.leaveChannel = app.realtime.listenToConversation(id, {
      messageSent: (m) => this.received(m),
      messageUpdated: (m) => this.upsert(m),
      messageDeleted: ({ id: messageId }) => this.remove(messageId),
      read: ({ user_id, read_at }) => {
        if (user_id === app.me.id) return;
        this.readBy.set(user_id, { messageId: this.readBy.get(user_id)?.messageId ?? 0, at: read_at });
        this.renderReceipts();
      },
      reactionsUpdated: ({ message_id, reactions }) => this.setReactions(message_id, reactions),
      typing: ({ user_id, is_typing }) => {
        if (user_id !== app.me.id) this.setTyping(user_id, is_typing);
      },
      participantsChanged: (e) => this.participantsChanged(e),
      refused: (status) => {
        if (status === 403) app.removeConversation(id, 'You are no longer in this conversation.');
      },
    });
    this.unsubscribe.push(
      app.onConversationChange((conversation, changedId) => {
        if (changedId !== id || !conversation) return;
        this.renderHeader();
        this.renderComposerState();
        if (conversation.unread_count > 0) this.markRead();
      }),
    );
    const onVisible = () => {
      if (document.visibilityState === 'visible' && (this.conversation()?.unread_count ?? 0) > 0) this.markRead();
    };
    document.addEventListener('visibilitychange', onVisible);
    this.unsubscribe.push(() => document.removeEventListener('visibilitychange', onVisible));
  }

  private conversation(): Conversation | undefined {
    return this.app.conversations.get(this.id);
  }

  // ---- loading ---------------------------------------------------------------------------------------------

  async load(): Promise<void> {
    this.renderHeader();
    this.renderComposerState();
    if (!this.conversation()) {
      // Opened by address (#/c/12) before the inbox listed it: ask for it.
      await this.app.refreshConversation(this.id);
      if (this.destroyed) return;
      if (!this.conversation()) return; // refreshConversation closed the view (404)
    }
    this.renderHeader();
    this.renderComposerState();
    try {
      const page = await this.app.api.get<Paged<Message>>(`/conversations/${this.id}/messages?limit=${PAGE}`);
      if (this.destroyed) return;
      for (const m of page.data) this.upsert(m, false);
      this.olderCursor = page.meta.next_cursor;
    } catch (err) {
      if (this.destroyed) return;
      if ((err as ApiError).status === 404) return this.app.removeConversation(this.id, 'This conversation is no longer available.');
      toast(describeError(err));
    }
    await this.loadReads();
    if (this.destroyed) return;
    this.loaded = true;
    this.renderList();
    this.scrollToBottom();
    this.markLoaded();
    this.markRead();
    this.void(this.app.refreshPresence((this.conversation()?.participants_preview ?? []).map((p) => p.id).filter((i) => i !== this.app.me.id)));
    if (window.matchMedia('(min-width: 48rem)').matches || document.activeElement === document.body) this.input.focus();
  }

  private async loadOlder(): Promise<void> {
    if (!this.olderCursor) return;
    this.olderButton.disabled = true;
    const before = this.scroller.scrollHeight - this.scroller.scrollTop;
    try {
      const page = await this.app.api.get<Paged<Message>>(`/conversations/${this.id}/messages?limit=${PAGE}&before=${this.olderCursor}`);
      for (const m of page.data) this.upsert(m, false);
      this.olderCursor = page.meta.next_cursor;
      this.renderList();
      this.scroller.scrollTop = this.scroller.scrollHeight - before; // keep the reader's place
    } catch (err) {
      toast(describeError(err));
    } finally {
      this.olderButton.disabled = false;
    }
  }

  /** Scrolls to a message (a search result) and marks it briefly, loading older pages until it is there. */
  async showMessage(messageId: number): Promise<void> {
    await this.whenLoaded;
    for (let pages = 0; !this.messages.has(messageId) && this.olderCursor && pages < 50 && !this.destroyed; pages++) {
      const cursor = this.olderCursor;
      await this.loadOlder();
      if (this.olderCursor === cursor) break; // the page failed to load (loadOlder said why)
    }
    const element = this.list.querySelector<HTMLElement>(`#message-${messageId}`);
    if (!element) return toast('That message is no longer in the conversation.', 'info');
    element.scrollIntoView({ block: 'center' });
    element.classList.add('found');
    element.focus();
    setTimeout(() => element.classList.remove('found'), 2_500);
  }

  /** GET /reads, page by page: every participant's read position, for "Seen by" after a reload. */
  private async loadReads(): Promise<void> {
    try {
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '' : `&cursor=${cursor}`;
        const page: Paged<ReadPosition> = await this.app.api.get<Paged<ReadPosition>>(`/conversations/${this.id}/reads?limit=1000${query}`);
        if (this.destroyed) return;
        for (const r of page.data) {
          if (r.user_id === this.app.me.id) continue;
          const known = this.readBy.get(r.user_id);
          // A ConversationRead may have arrived while the page was on its way: keep the later time.
          const at = known?.at && (!r.last_read_at || known.at > r.last_read_at) ? known.at : r.last_read_at;
          this.readBy.set(r.user_id, { messageId: Math.max(r.last_read_message_id, known?.messageId ?? 0), at });
        }
        cursor = page.meta.next_cursor;
      } while (cursor !== null);
    } catch (err) {
      if ((err as ApiError).status !== 404) toast(describeError(err));
    }
  }

  /** After a reconnect: every message after the newest one on screen, page by page (each page newest first). */
  async catchUp(): Promise<void> {
    if (!this.loaded) return;
    let after = this.ids.length > 0 ? this.ids[this.ids.length - 1] : 0;
    try {
      for (;;) {
        const page = await this.app.api.get<Paged<Message>>(`/conversations/${this.id}/messages?after=${after}&limit=${CATCH_UP_PAGE}`);
        if (this.destroyed) return;
        for (const m of [...page.data].reverse()) this.received(m, false);
        if (page.meta.next_cursor === null) break;
        after = Number(page.meta.next_cursor);
      }
    } catch (err) {
      if ((err as ApiError).status === 404) this.app.removeConversation(this.id, 'This conversation is no longer available.');
      else toast(describeError(err));
      return;
    }
    this.markRead();
  }

  destroy(): void {
    this.destroyed = true;
    this.stopTyping();
    this.leaveChannel();
    for (const off of this.unsubscribe.splice(0)) off();
    for (const timer of this.typingUsers.values()) clearTimeout(timer);
    this.files.revokeAll();
    this.filePreview?.dispose();
  }

  private void(promise: Promise<unknown>): void {
    promise.catch(() => {});
  }

  // ---- messages --------------------------------------------------------------------------------------------

  /** A message from the channel (or from catching up): shown, announced, and read if the page is visible. */
  private received(message: Message, live = true): void {
    const known = this.messages.has(message.id);
    this.upsert(message);
    if (known || message.sender.id === this.app.me.id) return;
    this.setTyping(message.sender.id, false);
    if (live) announce(`${this.app.displayName(message.sender)}: ${message.body ?? (message.attachment ? `sent ${message.attachment.name}` : '')}`);
    this.markRead();
  }

  private upsert(message: Message, render = true): void {
    if (message.conversation_id !== this.id || this.deletedIds.has(message.id)) return;
    const previous = this.messages.get(message.id);
    // MessageSent carries no edited_at, and events no reactions or mentions; keep what we know.
    this.messages.set(message.id, {
      ...message,
      edited_at: message.edited_at ?? previous?.edited_at ?? null,
      reactions: message.reactions ?? previous?.reactions ?? [],
      mentioned_user_ids: message.mentioned_user_ids ?? previous?.mentioned_user_ids,
    });
    if (!previous) this.ids.splice(this.insertionIndex(message.id), 0, message.id);
    if (!render || !this.loaded) return;
    const nearBottom = this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 120;
    const element = this.renderMessage(this.messages.get(message.id)!);
    const existing = this.list.querySelector(`#message-${message.id}`);
    if (existing) existing.replaceWith(element);
    else {
      const index = this.ids.indexOf(message.id);
      // The newest message goes before messages still being sent, which stay at the end.
      const next = index + 1 < this.ids.length ? this.list.querySelector(`#message-${this.ids[index + 1]}`) : this.list.querySelector('.message.pending');
      this.list.insertBefore(element, next);
    }
    this.emptyNote.hidden = true;
    this.renderReceipts();
    if (!previous && (nearBottom || message.sender.id === this.app.me.id)) this.scrollToBottom();
  }

  private setReactions(messageId: number, reactions: Reaction[]): void {
    const message = this.messages.get(messageId);
    if (message) this.upsert({ ...message, reactions });
  }

  /** A deleted message leaves a placeholder where it was (until the history is loaded again, which no longer has it). */
  private remove(messageId: number): void {
    const message = this.messages.get(messageId);
    if (!message || this.deletedIds.has(messageId)) return;
    this.deletedIds.add(messageId);
    this.list.querySelector(`#message-${messageId}`)?.replaceWith(this.renderDeleted(message));
    // Replies to it now show it as deleted.
    for (const m of this.messages.values()) {
      if (m.reply_to?.id === messageId) this.upsert({ ...m, reply_to: { ...m.reply_to, body: null, deleted: true } });
    }
    if (this.replyTo?.id === messageId || this.editing?.id === messageId) this.resetComposer();
    this.renderReceipts();
  }

  private renderDeleted(m: Message): HTMLElement {
    const mine = m.sender.id === this.app.me.id;
    const who = mine ? 'You' : this.app.displayName(m.sender);
    return h(
      'li',
      { id: `message-${m.id}`, className: mine ? 'message mine deleted' : 'message deleted', 'data-id': m.id },
      h('p', { className: 'bubble deleted-note' }, `${who} deleted this message`),
    );
  }

  private insertionIndex(id: number): number {
    let low = 0;
    let high = this.ids.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.ids[mid] < id) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  private scrollToBottom(): void {
    this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  /** Something at the end grew (an image loaded): follow it if the reader was at the bottom already. */
  private keepBottomInView(): void {
    if (this.scroller.scrollHeight - this.scroller.scrollTop - this.scroller.clientHeight < 400) this.scrollToBottom();
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
    const newest = this.ids.length > 0 ? this.messages.get(this.ids[this.ids.length - 1]) : undefined;
    const unreadByCount = (conversation?.unread_count ?? 0) > 0;
    const unreadByTime = newest && newest.sender.id !== this.app.me.id && (!conversation?.last_read_at || conversation.last_read_at < newest.created_at);
    if (!unreadByCount && !unreadByTime) return;
    this.readPending = true;
    setTimeout(async () => {
      try {
        const { data } = await this.app.api.post<{ data: { read_at: string } }>(`/conversations/${this.id}/read`);
        this.app.patchConversation(this.id, { unread_count: 0, last_read_at: data.read_at });
      } catch (err) {
        if ((err as ApiError).status !== 404) toast(describeError(err));
      } finally {
        this.readPending = false;
        if (this.readAgain && !this.destroyed) {
          this.readAgain = false;
          void this.app.refreshConversation(this.id).then(() => this.markRead());
        }
      }
    }, 150);
  }

  private renderReceipts(): void {
    for (const receipt of this.list.querySelectorAll('.receipt')) receipt.remove();
    const conversation = this.conversation();
    const mine = this.ids.map((i) => this.messages.get(i)!).filter((m) => m.sender.id === this.app.me.id);
    const readers = new Map<number, string[]>();
    for (const [userId, read] of this.readBy) {
      const seen = [...mine].reverse().find((m) => m.id <= read.messageId || (read.at !== null && m.created_at <= read.at));
      if (seen) readers.set(seen.id, [...(readers.get(seen.id) ?? []), this.app.nameOf(userId, conversation)]);
    }
    for (const [messageId, names] of readers) {
      const text = conversation?.type === 'direct' ? 'Seen' : `Seen by ${names.join(', ')}`;
      this.list.querySelector(`#message-${messageId}`)?.append(h('p', { className: 'receipt' }, text));
    }
  }

  // ---- typing ----------------------------------------------------------------------------------------------

  private setTyping(userId: number, typing: boolean): void {
    clearTimeout(this.typingUsers.get(userId));
    if (typing) this.typingUsers.set(userId, setTimeout(() => this.setTyping(userId, false), TYPING_SHOW_MS));
    else this.typingUsers.delete(userId);
    const names = [...this.typingUsers.keys()].map((i) => this.app.nameOf(i, this.conversation()));
    this.typingLine.textContent =
      names.length === 0 ? '' : names.length === 1 ? `${names[0]} is typing…` : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]} are typing…`;
  }

  private typed(): void {
    if (this.editing) return;
    if (this.input.value.trim() === '') return this.stopTyping();
    const now = Date.now();
    if (now - this.typingSentAt > TYPING_RENEW_MS) {
      this.typingSentAt = now;
      this.postTyping(true);
    }
    clearTimeout(this.typingIdle);
    this.typingIdle = setTimeout(() => this.stopTyping(), TYPING_IDLE_MS);
  }

  private stopTyping(): void {
    clearTimeout(this.typingIdle);
    if (!this.typingSentAt) return;
    this.typingSentAt = 0;
    this.postTyping(false);
  }

  private postTyping(isTyping: boolean): void {
    this.typingChain = this.typingChain.then(() => this.app.api.post(`/conversations/${this.id}/typing`, { is_typing: isTyping })).catch(() => {});
  }

  // ---- the composer ----------------------------------------------------------------------------------------

  private buildComposer(): void {
    const attach = h('label', { for: 'composer-file', className: 'attach', title: 'Attach a file' }, icon('paperclip'), h('span', { className: 'visually-hidden' }, 'Attach a file'));
    this.form.append(
      this.mentions.list,
      this.banner,
      this.blockedNote,
      h(
        'div',
        { className: 'composer-row' },
        this.fileInput,
        attach,
        h('label', { for: 'composer-input', className: 'visually-hidden' }, 'Message'),
        this.input,
        this.sendButton,
      ),
      h('p', { id: 'composer-help', className: 'visually-hidden' }, 'Enter sends, Shift+Enter adds a new line, Escape cancels a reply or an edit.'),
    );
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.form.requestSubmit();
      } else if (event.key === 'Escape' && (this.replyTo || this.editing || this.file)) {
        event.preventDefault();
        this.resetComposer();
      } else if (event.key === 'ArrowUp' && this.input.value === '' && !this.editing) {
        // As in most chat apps: Up in an empty composer edits your last message.
        const last = [...this.ids].reverse().map((i) => this.messages.get(i)!).find((m) => m.sender.id === this.app.me.id && !this.deletedIds.has(m.id) && m.body !== null);
        if (last) {
          event.preventDefault();
          this.startEditing(last);
        }
      }
    });
    this.input.addEventListener('input', () => {
      this.autosize();
      this.typed();
    });
    this.input.addEventListener('blur', () => this.stopTyping());
    this.fileInput.addEventListener('change', () => {
      this.file = this.fileInput.files?.[0] ?? null;
      this.renderBanner();
      this.input.focus();
    });
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
  }

  private autosize(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 160)}px`;
  }

  /** Send: the message goes to the send queue and the composer is cleared and free for the next one at once. */
  private async submit(): Promise<void> {
    if (this.sendButton.disabled) return; // blocked, or an edit being saved
    const text = this.input.value.replace(/\s+$/, '');
    if (this.editing) return this.saveEdit(text);
    if (text.trim() === '' && !this.file) return;
    const pending = this.sendQueue.send(text.trim() === '' ? null : text, this.file, this.replyTo?.id ?? null, this.mentions.mentionedIds(text));
    this.mentions.reset();
    this.list.append(pending);
    this.emptyNote.hidden = true;
    this.scrollToBottom();
    this.stopTyping();
    this.input.value = '';
    this.autosize();
    this.resetComposer();
    this.input.focus();
  }

  private async saveEdit(text: string): Promise<void> {
    const message = this.editing!;
    if (text === (message.body ?? '')) return this.resetComposer();
    this.sendButton.disabled = true;
    try {
      const { data } = await this.app.api.patch<{ data: Message }>(`/messages/${message.id}`, { body: text });
      this.upsert(data);
      if (this.conversation()?.last_message?.id === data.id) this.app.noteOwnMessage(data);
      this.input.value = '';
      this.autosize();
      this.resetComposer();
    } catch (err) {
      toast(describeError(err));
    } finally {
      this.sendButton.disabled = false;
      this.input.focus();
    }
  }

  private resetComposer(): void {
    const wasEditing = this.editing !== null;
    this.replyTo = null;
    this.editing = null;
    this.file = null;
    this.fileInput.value = '';
    this.filePreview?.dispose();
    this.filePreview = null;
    if (wasEditing) {
      this.input.value = '';
      this.autosize();
    }
    this.sendButton.textContent = 'Send';
    this.renderBanner();
  }

  /** The picked file's preview, made once per file (an image preview holds an object URL until it is dropped). */
  private previewOf(file: File): HTMLElement {
    if (this.filePreview?.file !== file) {
      this.filePreview?.dispose();
      this.filePreview = { file, ...filePreview(file) };
    }
    return this.filePreview.element;
  }

  private renderBanner(): void {
    const cancel = h('button', { type: 'button', className: 'icon-button', 'aria-label': 'Cancel' }, '×');
    cancel.addEventListener('click', () => {
      this.resetComposer();
      this.input.focus();
    });
    const parts: Node[] = [];
    if (this.editing) parts.push(h('span', {}, h('strong', {}, 'Editing message')));
    else if (this.replyTo) {
      parts.push(h('span', {}, 'Replying to ', h('strong', {}, this.app.displayName(this.replyTo.sender)), ': ', h('span', { className: 'muted' }, excerpt(this.replyTo))));
    }
    if (this.file) parts.push(this.previewOf(this.file));
    this.banner.hidden = parts.length === 0;
    this.banner.replaceChildren(...parts, ...(parts.length > 0 ? [cancel] : []));
    this.sendButton.textContent = this.editing ? 'Save' : 'Send';
  }

  /** A direct conversation with a block either way cannot be written to. */
  renderComposerState(): void {
    const partner = this.conversation() ? this.app.partner(this.conversation()!) : null;
    const blocked = partner !== null && this.app.messagingBlocked.has(partner.id);
    this.blockedNote.hidden = !blocked;
    this.blockedNote.textContent = !blocked
      ? ''
      : this.app.blockedByMe.has(partner.id)
        ? `You blocked ${this.app.displayName(partner)}. Unblock them to send messages.`
        : `You can’t message ${this.app.displayName(partner)}.`;
    this.input.disabled = blocked;
    this.sendButton.disabled = blocked;
    this.fileInput.disabled = blocked;
  }

  // ---- group changes ---------------------------------------------------------------------------------------

  private participantsChanged(event: GroupParticipantsChangedEvent): void {
    const before = this.conversation();
    const names = event.target_user_ids.map((i) => this.app.nameOf(i, before ? { ...before, participants_preview: [...before.participants_preview, ...event.participants_preview] } : undefined));
    const actor = event.actor_user_id === this.app.me.id ? 'You' : this.app.nameOf(event.actor_user_id, before);
    const selfAction = event.target_user_ids.length === 1 && event.target_user_ids[0] === event.actor_user_id;
    const text =
      event.change_type === 'added'
        ? `${actor} added ${names.join(', ')}`
        : event.change_type === 'removed'
          ? selfAction
            ? `${names[0]} left`
            : `${actor} removed ${names.join(', ')}`
          : event.target_user_ids
              .map((userId) => {
                const role = event.participants_preview.find((p) => p.id === userId)?.role;
                return role ? `${this.app.nameOf(userId, before)} is now ${{ owner: 'the owner', admin: 'an admin', member: 'a member' }[role]}` : `${this.app.nameOf(userId, before)}’s role changed`;
              })
              .join('; ');
    this.app.patchConversation(this.id, { participant_count: event.participant_count, participants_preview: event.participants_preview });
    if (event.change_type === 'removed') {
      // A member who left or was removed no longer counts as a reader.
      for (const userId of event.target_user_ids) this.readBy.delete(userId);
      this.renderReceipts();
    }
    this.list.append(h('li', { className: 'system-note' }, text));
    announce(text);
    this.scrollToBottom();
  }

  // ---- rendering -------------------------------------------------------------------------------------------

  renderHeader(): void {
    const conversation = this.conversation();
    const back = h('button', { type: 'button', className: 'icon-button back', 'aria-label': 'Back to conversations' }, '‹');
    back.addEventListener('click', () => this.app.back());
    if (!conversation) {
      this.header.replaceChildren(back, h('h2', { id: 'thread-title' }, 'Loading…'));
      return;
    }
    const partner = this.app.partner(conversation);
    const online = partner ? (this.app.online.get(partner.id) ?? false) : null;
    const subtitle = partner
      ? online
        ? 'Online'
        : 'Offline'
      : `${conversation.participant_count} member${conversation.participant_count === 1 ? '' : 's'}: ${conversation.participants_preview.map((p) => (p.id === this.app.me.id ? 'you' : this.app.displayName(p))).join(', ')}${conversation.participant_count > conversation.participants_preview.length ? ', …' : ''}`;
    const actions: HTMLElement[] = [muteToggle(this.app, conversation)];
    if (conversation.type === 'group') {
      const settings = labelledIconButton('settings', 'Group settings', { className: 'secondary', id: 'group-settings' });
      settings.addEventListener('click', () => groupSettingsDialog(this.app, this.id));
      actions.push(settings);
    } else if (partner) {
      const blocked = this.app.blockedByMe.has(partner.id);
      const toggle = h('button', { type: 'button', className: blocked ? 'secondary' : 'secondary danger-text', id: 'block-toggle' }, blocked ? 'Unblock' : 'Block');
      toggle.addEventListener('click', () => void this.toggleBlock(partner.id, partner.name, blocked));
      actions.push(toggle);
    }
    this.header.replaceChildren(
      back,
      avatar(this.app.title(conversation), conversation.type === 'group' ? conversation.id + 7 : (partner?.id ?? conversation.id), { online }),
      h('div', { className: 'thread-heading' }, h('h2', { id: 'thread-title' }, this.app.title(conversation)), h('p', { className: 'subtitle', id: 'thread-subtitle' }, subtitle)),
      h('div', { className: 'thread-actions' }, ...actions),
    );
  }

  private async toggleBlock(userId: number, name: string, blocked: boolean): Promise<void> {
    try {
      if (blocked) {
        const { data } = await this.app.api.delete<{ data: { messaging_blocked_user_ids: number[] } }>(`/blocks/${userId}`);
        this.app.applyBlocks(data.messaging_blocked_user_ids, userId, false);
        toast(`You unblocked ${name || `User ${userId}`}.`, 'info');
      } else {
        if (!(await confirmAction(`Block ${name || `User ${userId}`}? Neither of you can send direct messages until you unblock them. Groups are not affected.`, 'Block'))) return;
        const { data } = await this.app.api.post<{ data: { messaging_blocked_user_ids: number[] } }>('/blocks', { user_id: userId });
        this.app.applyBlocks(data.messaging_blocked_user_ids, userId, true);
        toast(`You blocked ${name || `User ${userId}`}.`, 'info');
      }
    } catch (err) {
      toast(describeError(err));
    }
  }

  private renderList(): void {
    const pending = [...this.list.querySelectorAll('.message.pending')];
    this.list.replaceChildren(...this.ids.map((i) => (this.deletedIds.has(i) ? this.renderDeleted(this.messages.get(i)!) : this.renderMessage(this.messages.get(i)!))), ...pending);
    this.olderButton.hidden = this.olderCursor === null;
    this.emptyNote.hidden = this.ids.length > 0;
    this.renderReceipts();
  }

  private renderMessage(m: Message): HTMLElement {
    const conversation = this.conversation();
    const mine = m.sender.id === this.app.me.id;
    const myRole = conversation?.participants_preview.find((p) => p.id === this.app.me.id)?.role ?? 'member';
    const canDelete = mine || (conversation?.type === 'group' && myRole !== 'member');

    const bubble = h('div', { className: 'bubble' });
    if (!mine && conversation?.type === 'group') bubble.append(h('p', { className: 'sender' }, this.app.displayName(m.sender)));
    if (m.forwarded_from) bubble.append(h('p', { className: 'forwarded' }, icon('forward'), `Forwarded from ${this.app.displayName(m.forwarded_from.sender)}`));
    if (m.reply_to) {
      const quote = h(
        'button',
        { type: 'button', className: 'reply-quote', 'aria-label': `In reply to ${this.app.displayName(m.reply_to.sender)}: ${m.reply_to.deleted ? 'deleted message' : (m.reply_to.body ?? 'attachment')}` },
        h('strong', {}, this.app.displayName(m.reply_to.sender)),
        h('span', {}, m.reply_to.deleted ? 'Deleted message' : truncate(m.reply_to.body ?? 'Attachment', 120)),
      );
      const target = m.reply_to.id;
      quote.addEventListener('click', () => {
        const original = this.list.querySelector<HTMLElement>(`#message-${target}`);
        original?.scrollIntoView({ block: 'center', behavior: 'smooth' });
        original?.focus();
      });
      bubble.append(quote);
    }
    if (m.attachment) bubble.append(this.files.render(m.attachment, () => this.keepBottomInView()));
    if (m.body) {
      // Events carry no mentioned_user_ids (history items do): then any participant's "@Name" counts.
      const ids = m.mentioned_user_ids ?? (conversation?.participants_preview ?? []).map((p) => p.id);
      const mentioned = ids.map((id) => ({ id, name: this.app.nameOf(id, conversation) }));
      bubble.append(h('p', { className: 'body' }, ...withMentions(m.body, mentioned, this.app.me.id)));
    }
    const reactions = renderReactions(this.reactionContext, m.id, m.reactions ?? []);
    bubble.append(
      h(
        'p',
        { className: 'meta' },
        h('time', { datetime: m.created_at, title: longTime(m.created_at) }, shortTime(m.created_at)),
        m.edited_at ? h('span', { className: 'edited', title: longTime(m.edited_at) }, ' · edited') : null,
      ),
    );

    const action = (label: string, handler: () => void, className = '') => {
      const button = h('button', { type: 'button', className: `action ${className}`, 'aria-label': `${label} message from ${this.app.displayName(m.sender)}` }, label);
      button.addEventListener('click', handler);
      return button;
    };
    const actions = h(
      'div',
      { className: 'actions' },
      action('Reply', () => {
        this.editing = null;
        this.replyTo = m;
        this.renderBanner();
        this.input.focus();
      }),
      reactionPicker(this.reactionContext, m.id, () => this.messages.get(m.id)?.reactions ?? [], this.app.displayName(m.sender)),
      action('Forward', () => forwardDialog(this.app, m, (copies) => copies.forEach((c) => this.upsert(c)))),
      mine ? action('Edit', () => this.startEditing(m)) : null,
      canDelete ? action('Delete', () => void this.deleteMessage(m), 'danger-text') : null,
    );
    return h('li', { id: `message-${m.id}`, className: mine ? 'message mine' : 'message', 'data-id': m.id, tabindex: -1 }, bubble, reactions, actions);
  }

  private startEditing(m: Message): void {
    this.replyTo = null;
    this.editing = m;
    this.input.value = m.body ?? '';
    this.autosize();
    this.renderBanner();
    this.input.focus();
  }

  private async deleteMessage(m: Message): Promise<void> {
    if (!(await confirmAction('Delete this message for everyone?', 'Delete'))) return;
    try {
      await this.app.api.delete(`/messages/${m.id}`);
      this.remove(m.id);
      void this.app.refreshConversation(this.id); // the inbox's last message may have changed
      this.input.focus();
    } catch (err) {
      toast(describeError(err));
    }
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function excerpt(m: Message): string {
  return truncate(m.body ?? (m.attachment ? `Attachment: ${m.attachment.name}` : ''), 80);
}
