// The message list of one conversation: the messages on screen in id order (history, live events, the server's
// answers to this tab), placeholders for deleted ones, group notices, the messages still being sent at the end,
// and each message's toolbar. What the toolbar's actions do is the thread's business (MessageActions).
import { AttachmentFiles } from './attachments.js';
import { avatar, dayLabel, erased, h, icon, longTime, shortTime, withLinks } from './dom.js';
import { withMentions } from './mentions.js';
import { reportDialog, wasReported } from './moderation.js';
import { reactionPicker, renderReactions, type ReactionContext } from './reactions.js';
import type { ChatStore } from './store.js';
import type { Message, Reaction } from './types.js';

export interface MessageActions {
  reply(message: Message): void;
  edit(message: Message): void;
  forward(message: Message): void;
  delete(message: Message): void;
  /** "Load older messages" was pressed. */
  older(): void;
  /** The list's content changed: what hangs off messages (receipts) is placed again. */
  rendered(): void;
  /** The conversation's list only: "Reply in thread" and the replies line under a root; its unread dot. */
  thread?(message: Message): void;
  unread?(rootId: number): boolean;
  pin?(message: Message): void;
  hide?(message: Message): void;
}

export class MessageList {
  /** The scrolling region: the "older" button, the empty note and the list. */
  readonly element = h('div', { className: 'message-scroll', tabindex: 0, 'aria-label': 'Message history', role: 'region' });
  readonly list = h('ol', { className: 'message-list', 'aria-label': 'Messages' });
  private readonly olderButton = h('button', { type: 'button', className: 'secondary load-older', hidden: true }, 'Load older messages');
  private readonly emptyNote = h('p', { className: 'empty-note', hidden: true }, 'No messages yet. Say hello!');
  private readonly messages = new Map<number, Message>();
  /** Message ids, ascending: the order on screen. */
  private ids: number[] = [];
  /** Messages deleted while the thread is open: shown as placeholders, never edited or replied to. */
  private readonly deletedIds = new Set<number>();
  private readonly files: AttachmentFiles;
  private readonly reactionContext: ReactionContext;
  /** Group notices ("Alice added Carol"), by time: each is drawn between the messages of its time. */
  private notes: { at: number; text: string }[] = [];
  /** Until the first page of history is in, messages are only collected (one render then). */
  private shown = false;

  constructor(
    private readonly store: ChatStore,
    private readonly conversationId: number,
    private readonly actions: MessageActions,
    /** Element ids: `message-list` and `message-41`, or a thread's `reply-list` and `reply-41`. */
    private readonly key = 'message',
  ) {
    this.list.id = `${key}-list`;
    this.files = new AttachmentFiles(store.api);
    this.element.append(this.olderButton, this.emptyNote, this.list);
    this.olderButton.addEventListener('click', () => actions.older());
    this.reactionContext = {
      api: store.api,
      me: store.me.id,
      nameOf: (userId) => store.nameOf(userId, store.conversation(conversationId)),
      changed: (messageId, reactions) => this.setReactions(messageId, reactions),
    };
  }

  // ---- reading ---------------------------------------------------------------------------------------------

  has(messageId: number): boolean {
    return this.messages.has(messageId);
  }

  newestId(): number {
    return this.ids.length > 0 ? this.ids[this.ids.length - 1] : 0;
  }

  newest(): Message | undefined {
    return this.messages.get(this.newestId());
  }

  /** My messages still in the conversation, oldest first. */
  mine(): Message[] {
    return this.ids.map((i) => this.messages.get(i)!).filter((m) => m.sender.id === this.store.me.id && !this.deletedIds.has(m.id));
  }

  /** The message's element on screen. */
  elementOf(messageId: number): HTMLElement | null {
    return this.list.querySelector<HTMLElement>(`#${this.key}-${messageId}`);
  }

  // ---- changing --------------------------------------------------------------------------------------------

  /** Shows the whole list once the first page is in; from then on every change renders at once. */
  show(hasOlder: boolean): void {
    this.shown = true;
    this.setHasOlder(hasOlder);
    this.render();
  }

  setHasOlder(hasOlder: boolean): void {
    this.olderButton.hidden = !hasOlder;
  }

  async whileLoadingOlder(load: () => Promise<void>): Promise<void> {
    this.olderButton.disabled = true;
    const before = this.element.scrollHeight - this.element.scrollTop;
    try {
      await load();
      this.render();
      this.element.scrollTop = this.element.scrollHeight - before; // keep the reader's place
    } finally {
      this.olderButton.disabled = false;
    }
  }

  /** A message from history, an event or an answer; `render` false while a page is taken in. */
  upsert(message: Message, render = true): void {
    if (message.conversation_id !== this.conversationId || this.deletedIds.has(message.id)) return;
    const previous = this.messages.get(message.id);
    // MessageSent carries no edited_at, and events no reactions, mentions, thread or pin; keep what we know.
    const keep = <K extends keyof Message>(key: K) => (message[key] === undefined ? previous?.[key] : message[key]);
    this.messages.set(message.id, {
      ...message,
      edited_at: message.edited_at ?? previous?.edited_at ?? null,
      reactions: message.reactions ?? previous?.reactions ?? [],
      mentioned_user_ids: message.mentioned_user_ids ?? previous?.mentioned_user_ids,
      thread: keep('thread'),
      pinned_at: keep('pinned_at'),
      pinned_by: keep('pinned_by'),
    });
    if (!previous) this.ids.splice(this.insertionIndex(message.id), 0, message.id);
    // An edit: the replies quoting it quote the new text.
    for (const m of this.messages.values()) {
      if (m.reply_to?.id === message.id && !m.reply_to.deleted && m.reply_to.body !== message.body) this.upsert({ ...m, reply_to: { ...m.reply_to, body: message.body } }, render);
    }
    if (!render || !this.shown) return;
    const nearBottom = this.element.scrollHeight - this.element.scrollTop - this.element.clientHeight < 120;
    const element = this.renderMessage(this.messages.get(message.id)!);
    const existing = this.elementOf(message.id);
    if (existing) {
      if (existing.classList.contains('continued')) element.classList.add('continued');
      existing.replaceWith(element);
    } else {
      const index = this.ids.indexOf(message.id);
      if (index + 1 < this.ids.length) return this.render(); // in the middle (rare): dividers and runs drawn again
      // The newest message goes before messages still being sent, which stay at the end.
      const last = index > 0 ? this.messages.get(this.ids[index - 1]) : undefined;
      const lastElement = last ? this.elementOf(last.id) : null;
      if (!last || dayLabel(last.created_at) !== dayLabel(message.created_at)) {
        this.list.insertBefore(h('li', { className: 'day-divider' }, h('span', {}, dayLabel(message.created_at))), this.list.querySelector('.message.pending'));
      } else if (
        lastElement &&
        lastElement.nextElementSibling === this.list.querySelector('.message.pending') &&
        last.sender.id === message.sender.id &&
        Date.parse(message.created_at) - Date.parse(last.created_at) < 5 * 60_000
      ) {
        element.classList.add('continued');
      }
      this.list.insertBefore(element, this.list.querySelector('.message.pending'));
    }
    this.emptyNote.hidden = true;
    this.actions.rendered();
    if (!previous && (nearBottom || message.sender.id === this.store.me.id)) this.scrollToBottom();
  }

  /** Every message drawn again where it is: what I may do with them changed (my role in the group). */
  redrawMessages(): void {
    if (!this.shown) return;
    for (const [id, message] of this.messages) {
      if (!this.deletedIds.has(id)) this.elementOf(id)?.replaceWith(this.renderMessage(message));
    }
    this.actions.rendered();
  }

  setReactions(messageId: number, reactions: Reaction[]): void {
    this.patch(messageId, { reactions });
  }

  get(messageId: number): Message | undefined {
    return this.messages.get(messageId);
  }

  /** A message on screen changed in part (its thread, its pin), or is drawn again as it is (`{}`). */
  patch(messageId: number, changes: Partial<Message>): void {
    const message = this.messages.get(messageId);
    if (message) this.upsert({ ...message, ...changes });
  }

  /** Messages gone for me alone (deleted for me, a cleared history): off the screen, without a placeholder. */
  drop(gone: (m: Message) => boolean): void {
    const count = this.ids.length;
    this.ids = this.ids.filter((i) => !gone(this.messages.get(i)!) || (this.messages.delete(i), false));
    if (this.ids.length !== count && this.shown) this.render();
  }

  /** A deleted message leaves a placeholder where it was (until the history is loaded again, which no longer
   * has it); replies to it show it as deleted. False when it was not on screen. */
  remove(messageId: number): boolean {
    // Replies quote it as deleted, also when the message itself is not on screen (an older page).
    for (const m of this.messages.values()) {
      if (m.reply_to?.id === messageId && !m.reply_to.deleted) this.upsert({ ...m, reply_to: { ...m.reply_to, body: null, deleted: true } });
    }
    const message = this.messages.get(messageId);
    if (!message || this.deletedIds.has(messageId)) return false;
    this.deletedIds.add(messageId);
    this.elementOf(messageId)?.replaceWith(this.renderDeleted(message));
    this.actions.rendered();
    return true;
  }

  /** A message being sent: at the end, until the answer takes its place. */
  addPending(element: HTMLElement): void {
    this.list.append(element);
    this.emptyNote.hidden = true;
    this.scrollToBottom();
  }

  /**
   * A group notice ("Alice added Carol") at its time `at` (ms): live ones at the end, ones loaded after a reload
   * (GET /groups/{id}/changes) between the messages of their time. The same text within a minute is one notice
   * (a change heard live while it was also being loaded).
   */
  addNote(text: string, at = Date.now()): void {
    if (this.notes.some((n) => n.text === text && Math.abs(n.at - at) < 60_000)) return;
    const index = this.notes.findIndex((n) => n.at > at);
    this.notes.splice(index === -1 ? this.notes.length : index, 0, { at, text });
    if (!this.shown) return;
    this.render();
    this.scrollToBottom();
  }

  scrollToBottom(): void {
    this.element.scrollTop = this.element.scrollHeight;
  }

  /** Something at the end grew (an image loaded): follow it if the reader was at the bottom already. */
  private keepBottomInView(): void {
    if (this.element.scrollHeight - this.element.scrollTop - this.element.clientHeight < 400) this.scrollToBottom();
  }

  destroy(): void {
    this.files.revokeAll();
  }

  // ---- rendering -------------------------------------------------------------------------------------------

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

  /**
   * Everything again, keeping the messages still being sent: the messages in order with the notices of their
   * time between them (while older messages are still to load, only notices since the oldest one shown).
   */
  private render(): void {
    const pending = [...this.list.querySelectorAll('.message.pending')];
    const oldest = this.ids.length > 0 ? Date.parse(this.messages.get(this.ids[0])!.created_at) : -Infinity;
    const notes = this.olderButton.hidden ? [...this.notes] : this.notes.filter((n) => n.at >= oldest);
    const items: HTMLElement[] = [];
    let day = '';
    let previous: Message | undefined;
    for (const id of this.ids) {
      const message = this.messages.get(id)!;
      const at = Date.parse(message.created_at);
      // A divider where the day changes ("Today", "Yesterday", "Friday, 20 November").
      const label = dayLabel(message.created_at);
      if (label !== day) {
        items.push(h('li', { className: 'day-divider' }, h('span', {}, label)));
        day = label;
        previous = undefined;
      }
      while (notes.length > 0 && notes[0].at < at) {
        items.push(this.renderNote(notes.shift()!.text));
        previous = undefined;
      }
      const element = this.deletedIds.has(id) ? this.renderDeleted(message) : this.renderMessage(message);
      // A run of one sender's messages within five minutes: one name and one avatar, closer together.
      if (previous && previous.sender.id === message.sender.id && at - Date.parse(previous.created_at) < 5 * 60_000) element.classList.add('continued');
      items.push(element);
      previous = message;
    }
    for (const note of notes) items.push(this.renderNote(note.text));
    this.list.replaceChildren(...items, ...pending);
    this.emptyNote.hidden = this.ids.length > 0;
    this.actions.rendered();
  }

  private renderNote(text: string): HTMLElement {
    return h('li', { className: 'system-note' }, text);
  }

  private renderDeleted(m: Message): HTMLElement {
    const mine = m.sender.id === this.store.me.id;
    const who = mine ? 'You' : this.store.displayName(m.sender);
    return h(
      'li',
      { id: `${this.key}-${m.id}`, className: mine ? 'message mine deleted' : 'message deleted', 'data-id': m.id },
      h('p', { className: 'bubble deleted-note' }, `${who} deleted this message`),
    );
  }

  private renderMessage(m: Message): HTMLElement {
    const store = this.store;
    const conversation = store.conversation(this.conversationId);
    const mine = m.sender.id === store.me.id;
    const myRole = store.myRole(conversation);
    const canDelete = mine || (conversation?.type === 'group' && myRole !== 'member');
    const canPin = conversation?.type === 'direct' || myRole !== 'member';
    const { thread, pin, hide } = this.actions;

    const bubble = h('div', { className: 'bubble' });
    const group = !mine && conversation?.type === 'group';
    if (group) bubble.append(h('p', { className: `sender${erased(m.sender.name)}` }, store.displayName(m.sender)));
    if (m.forwarded_from) bubble.append(h('p', { className: 'forwarded' }, icon('forward'), `Forwarded from ${store.displayName(m.forwarded_from.sender)}`));
    if (m.reply_to) {
      const quote = h(
        'button',
        { type: 'button', className: 'reply-quote', 'aria-label': `In reply to ${store.displayName(m.reply_to.sender)}: ${m.reply_to.deleted ? 'deleted message' : (m.reply_to.body ?? 'attachment')}` },
        h('strong', {}, store.displayName(m.reply_to.sender)),
        h('span', {}, m.reply_to.deleted ? 'Deleted message' : truncate(m.reply_to.body ?? 'Attachment', 120)),
      );
      const target = m.reply_to.id;
      quote.addEventListener('click', () => {
        const original = this.elementOf(target);
        original?.scrollIntoView({ block: 'center', behavior: 'smooth' });
        original?.focus();
      });
      bubble.append(quote);
    }
    if (m.attachment) bubble.append(this.files.render(m.attachment, () => this.keepBottomInView()));
    if (m.body) {
      // Events carry no mentioned_user_ids (history items do): then any participant's "@Name" counts.
      const ids = m.mentioned_user_ids ?? (conversation?.participants_preview ?? []).map((p) => p.id);
      const mentioned = ids.map((id) => ({ id, name: store.nameOf(id, conversation) }));
      const parts = withMentions(m.body, mentioned, store.me.id).flatMap((node) => (node.nodeType === Node.TEXT_NODE ? withLinks(node.textContent ?? '') : [node]));
      bubble.append(h('p', { className: 'body' }, ...parts));
    }
    const reactions = renderReactions(this.reactionContext, m.id, m.reactions ?? []);
    bubble.append(
      h(
        'p',
        { className: 'meta' },
        h('time', { datetime: m.created_at, title: longTime(m.created_at) }, shortTime(m.created_at)),
        m.edited_at ? h('span', { className: 'edited', title: longTime(m.edited_at) }, ' · edited') : null,
        m.pinned_at ? h('span', { className: 'pinned-mark' }, ' · pinned') : null,
      ),
    );
    // Under a root with replies: "2 replies · last reply 14:05", a dot while replies by others are unread. (With
    // replies, last_reply_at is set: null only in a thread whose replies are all gone.)
    const t = m.thread;
    const replies =
      t && t.reply_count > 0 && thread
        ? h(
            'button',
            { type: 'button', className: 'thread-line' },
            `${t.reply_count} ${t.reply_count === 1 ? 'reply' : 'replies'} · last reply ${shortTime(t.last_reply_at!)}`,
            this.actions.unread?.(m.id) ? h('span', { className: 'unread-dot', title: 'New replies' }, h('span', { className: 'visually-hidden' }, ' (new replies)')) : null,
          )
        : null;
    replies?.addEventListener('click', () => thread!(m));

    const action = (label: string, handler: () => void, className = '') => {
      const button = h('button', { type: 'button', className: `action ${className}`, 'aria-label': `${label} message from ${store.displayName(m.sender)}` }, label);
      button.addEventListener('click', handler);
      return button;
    };
    const actions = h(
      'div',
      { className: 'actions' },
      action('Reply', () => this.actions.reply(m)),
      thread ? action('Reply in thread', () => thread(m)) : null,
      reactionPicker(this.reactionContext, m.id, () => this.messages.get(m.id)?.reactions ?? [], store.displayName(m.sender)),
      action('Forward', () => this.actions.forward(m)),
      mine ? null : action(wasReported(m.id) ? 'Reported' : 'Report', () => reportDialog(store, m, () => this.redrawMessages())),
      pin && canPin ? action(m.pinned_at ? 'Unpin' : 'Pin', () => pin(m)) : null,
      mine ? action('Edit', () => this.actions.edit(m)) : null,
      canDelete ? action('Delete', () => this.actions.delete(m), 'danger-text') : null,
      hide ? action('Delete for me', () => hide(m), 'danger-text') : null,
    );
    // In a group, others' messages have the sender's avatar beside them (the first of a run only, by CSS).
    const face = group ? avatar(store.displayName(m.sender), m.sender.id) : null;
    face?.classList.add('message-avatar');
    return h('li', { id: `${this.key}-${m.id}`, className: mine ? 'message mine' : group ? 'message with-avatar' : 'message', 'data-id': m.id, tabindex: -1 }, face, bubble, reactions, replies, actions);
  }
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
