// Threads of the open conversation (docs/api.md "Threads"): the panel of one thread, beside the conversation (over
// it at phone width), with the root and its replies (GET /messages/{id}/thread answers newest first; shown oldest
// first) and a composer of its own that sends with thread_id; live from ThreadReplySent. Under each root the
// replies line follows ThreadUpdated, with a dot while replies by others are unread (GET /threads'
// unread_reply_count, then ThreadReplySent); opening a thread reads it (POST /messages/{id}/thread/read).
import { describeError } from './api.js';
import { Composer } from './composer.js';
import { h, toast } from './dom.js';
import { MessageList, type MessageActions } from './message-list.js';
import type { ChatStore } from './store.js';
import type { Message, Paged, ThreadItem, ThreadReadEvent, ThreadReplySentEvent, ThreadUpdatedEvent } from './types.js';

interface Panel {
  root: Message;
  element: HTMLElement;
  list: MessageList;
  composer: Composer;
  /** The cursor of older replies. */
  older: string | null;
}

export class Threads {
  /** Roots with replies by others not read yet. */
  private readonly unread = new Set<number>();
  private panel: Panel | null = null;

  constructor(
    private readonly store: ChatStore,
    private readonly id: number,
    /** The conversation's list, where the roots are. */
    private readonly main: MessageList,
    /** The conversation's element: the panel goes after it. */
    private readonly host: HTMLElement,
    private readonly actions: Pick<MessageActions, 'forward' | 'delete' | 'hide'>,
  ) {}

  isUnread(rootId: number): boolean {
    return this.unread.has(rootId);
  }

  /** The list of the open thread when it shows this message (a reply, or the root). */
  listOf(messageId: number): MessageList | undefined {
    return this.panel?.list.has(messageId) ? this.panel.list : undefined;
  }

  /** The threads of this conversation with unread replies (GET /threads lists those I take part in). */
  async loadUnread(): Promise<void> {
    try {
      const page = await this.store.api.get<Paged<ThreadItem>>('/threads?limit=100');
      for (const t of page.data) if (t.root.conversation_id === this.id && t.unread_reply_count > 0 && this.panel?.root.id !== t.root.id) this.mark(t.root.id, true);
    } catch {
      // The dots are an extra.
    }
  }

  private mark(rootId: number, unread: boolean): void {
    if (unread) this.unread.add(rootId);
    else this.unread.delete(rootId);
    this.main.patch(rootId, {});
  }

  /** Read up to the newest reply, when it is seen. */
  private read(rootId: number): void {
    const seen = document.visibilityState === 'visible';
    this.mark(rootId, !seen);
    if (seen) void this.store.api.post(`/messages/${rootId}/thread/read`).catch(() => {});
  }

  /** The open thread's composer follows the conversation (a block, a freeze, slow mode). */
  renderState(): void {
    this.panel?.composer.renderState();
  }

  async open(root: Message): Promise<void> {
    if (this.panel?.root.id === root.id) return this.panel.composer.focus();
    this.close();
    const list: MessageList = new MessageList(
      this.store,
      this.id,
      { ...this.actions, reply: (m) => composer.replyToMessage(m), edit: (m) => composer.edit(m), older: () => void this.load(panel), rendered: () => {} },
      'reply',
    );
    const composer: Composer = new Composer(
      this.store,
      this.id,
      {
        lastOwnMessage: () => [...list.mine()].reverse().find((m) => m.body !== null),
        pending: (element) => list.addPending(element),
        sent: (m) => {
          // This tab gets no ThreadUpdated of its own reply: the root's line counts it.
          const t = this.main.get(root.id)?.thread;
          if (!list.has(m.id)) this.main.patch(root.id, { thread: { reply_count: (t?.reply_count ?? 0) + 1, last_reply_at: m.created_at, participant_ids: t?.participant_ids ?? [] } });
          list.upsert(m);
        },
        changed: () => list.scrollToBottom(),
      },
      root.id,
    );
    const close = h('button', { type: 'button', className: 'icon-button', 'aria-label': 'Close thread' }, '×');
    close.addEventListener('click', () => this.close());
    const element = h(
      'aside',
      { className: 'thread-panel', 'aria-labelledby': 'thread-panel-title' },
      h('header', { className: 'thread-header' }, h('h2', { id: 'thread-panel-title', className: 'thread-heading' }, 'Thread'), close),
      list.element,
      composer.element,
    );
    const panel: Panel = (this.panel = { root, element, list, composer, older: null });
    composer.renderState();
    list.upsert(root, false);
    this.host.after(element);
    if (!(await this.load(panel, true))) return;
    list.show(panel.older !== null);
    list.scrollToBottom();
    composer.focus();
    this.read(root.id);
  }

  /** The first page of replies, or (`first` false) the next older one. */
  private async load(panel: Panel, first = false): Promise<boolean> {
    const get = async () => {
      const page = await this.store.api.get<Paged<Message>>(`/messages/${panel.root.id}/thread?limit=50${panel.older ? `&before=${panel.older}` : ''}`);
      for (const m of page.data) panel.list.upsert(m, false);
      panel.older = page.meta.next_cursor;
    };
    try {
      if (first) await get();
      else await panel.list.whileLoadingOlder(get);
      panel.list.setHasOlder(panel.older !== null);
      return this.panel === panel;
    } catch (err) {
      toast(describeError(err));
      return false;
    }
  }

  reply({ thread_id, message }: ThreadReplySentEvent): void {
    const mine = message.sender.id === this.store.me.id;
    if (this.panel?.root.id === thread_id) {
      this.panel.list.upsert(message);
      if (!mine) this.read(thread_id);
    } else if (!mine) this.mark(thread_id, true);
  }

  updated(e: ThreadUpdatedEvent): void {
    const thread = { reply_count: e.reply_count, last_reply_at: e.last_reply_at, participant_ids: e.participant_ids };
    this.main.patch(e.thread_id, { thread });
    this.panel?.list.patch(e.thread_id, { thread });
  }

  /** A message deleted: out of the open thread; a reply deleted here (no ThreadUpdated comes to this tab) counted off. */
  deleted(messageId: number): void {
    const panel = this.panel;
    const t = panel && this.main.get(panel.root.id)?.thread;
    if (panel?.list.remove(messageId) && t && messageId !== panel.root.id) this.main.patch(panel.root.id, { thread: { ...t, reply_count: t.reply_count - 1 } });
  }

  /** I read it in another tab. */
  readBy(e: ThreadReadEvent): void {
    if (e.user_id === this.store.me.id && this.unread.has(e.thread_id)) this.mark(e.thread_id, false);
  }

  /** `focus`: back to the conversation's composer (not when the conversation itself closes). */
  close(focus = true): void {
    const panel = this.panel;
    if (!panel) return;
    this.panel = null;
    panel.composer.destroy();
    panel.list.destroy();
    panel.element.remove();
    if (focus) document.getElementById('composer-input')?.focus();
  }
}
