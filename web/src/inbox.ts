// The inbox: the conversations not archived, pinned ones first and then newest activity first, with the last
// message, unread and "@" badges, online dot, muted and pin marks; "Load more conversations" for the next page; the message search above it, whose results
// take its place while shown. It re-renders from the store's change events.
import { avatar, erased, h, icon, shortTime } from './dom.js';
import { sideLists } from './lists.js';
import { mutedMark } from './mute.js';
import { SearchPanel } from './search.js';
import type { ChatStore } from './store.js';
import type { Conversation } from './types.js';

export class InboxView {
  private readonly list = h('ul', { className: 'inbox-list', id: 'inbox-list', 'aria-labelledby': 'inbox-heading' });
  private readonly empty = h(
    'div',
    { className: 'empty-state', id: 'inbox-empty', hidden: true },
    h('p', { className: 'empty-title' }, 'No conversations yet'),
    h('p', {}, 'Start one with “New chat” above: find someone by name and say hello. “New group” brings several people together.'),
  );
  private readonly loadMore = h('button', { type: 'button', className: 'secondary load-more', hidden: true }, 'Load more conversations');
  private readonly scroll = h('div', { className: 'inbox-scroll' });
  private readonly search: SearchPanel;
  /** The search box, its results, and the list: the sidebar's lower part, in order. */
  readonly elements: HTMLElement[];
  /** The buttons of the lists shown in the inbox's place ("Threads"), for the sidebar's header. */
  readonly views: HTMLElement;
  private readonly cleanups: (() => void)[] = [];

  constructor(private readonly store: ChatStore) {
    this.loadMore.addEventListener('click', async () => {
      this.loadMore.disabled = true;
      await store.loadInbox();
      this.loadMore.disabled = false;
    });
    this.scroll.replaceChildren(this.list, this.empty, this.loadMore);
    this.search = new SearchPanel(store, this.scroll);
    const lists = sideLists(store, this.scroll);
    this.views = lists.nav;
    this.elements = [this.search.element, h('h2', { id: 'inbox-heading', className: 'visually-hidden' }, 'Conversations'), this.search.panel, lists.panel, this.scroll];
    this.cleanups.push(
      store.subscribe((change) => {
        if (change.kind !== 'blocks') this.render();
      }),
    );
    // The open conversation's badge stays hidden while the tab is visible (it is being read), not after.
    const onVisibility = () => this.render();
    document.addEventListener('visibilitychange', onVisibility);
    this.cleanups.push(() => document.removeEventListener('visibilitychange', onVisibility));
  }

  destroy(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }

  /** Moves the focus to a conversation's entry (back from it at phone width). */
  focus(conversationId: number): void {
    (this.list.querySelector(`[data-id="${conversationId}"]`) as HTMLElement | null)?.focus();
  }

  private render(): void {
    const state = this.store.inboxState();
    if (!state.loaded) return;
    const openId = this.store.openConversationId();
    const focusedId = (document.activeElement as HTMLElement | null)?.closest?.('.inbox-list') ? (document.activeElement as HTMLElement).dataset.id : undefined;
    const conversations = this.store.inbox();
    this.list.replaceChildren(...conversations.map((c) => this.item(c, c.id === openId)));
    this.empty.hidden = conversations.length > 0;
    this.loadMore.hidden = !state.more;
    if (focusedId) this.focus(Number(focusedId));
  }

  private item(c: Conversation, current: boolean): HTMLElement {
    const store = this.store;
    const partner = store.partner(c);
    const online = partner ? (store.isOnline(partner.id) ?? false) : null;
    const last = c.last_message;
    let preview = c.type === 'group' ? `${c.participant_count} members` : 'No messages yet';
    if (last) {
      const who = last.sender.id === store.me.id ? 'You: ' : c.type === 'group' ? `${store.displayName(last.sender)}: ` : '';
      const what = last.body ?? (last.attachment ? `Attachment: ${last.attachment.name}` : '');
      preview = who + what;
    }
    // The open conversation is being marked read: no badge flashing up meanwhile.
    const quiet = current && document.visibilityState === 'visible';
    const mentions = c.unread_mention_count ?? 0;
    const mentionText = `${mentions} unread mention${mentions === 1 ? '' : 's'}`;
    const button = h(
      'button',
      { type: 'button', className: c.muted ? 'conversation-item muted-conversation' : 'conversation-item', 'data-id': c.id, 'aria-current': current ? 'true' : null },
      avatar(store.title(c), c.type === 'group' ? c.id + 7 : (partner?.id ?? c.id), { online }),
      h(
        'span',
        { className: 'item-main' },
        h(
          'span',
          { className: `item-title${erased(store.title(c))}` },
          store.title(c),
          online ? h('span', { className: 'visually-hidden' }, ' (online)') : null,
          c.muted ? mutedMark() : null,
          c.pinned_at ? h('span', { className: 'muted-mark pin-mark', title: 'Pinned' }, icon('pin'), h('span', { className: 'visually-hidden' }, ' (pinned)')) : null,
        ),
        h('span', { className: 'item-preview' }, preview),
      ),
      h(
        'span',
        { className: 'item-meta' },
        h('time', { datetime: last?.created_at ?? c.created_at }, shortTime(last?.created_at ?? c.created_at)),
        mentions > 0 && !quiet ? h('span', { className: 'badge mention-badge', title: mentionText }, '@', h('span', { className: 'visually-hidden' }, ` ${mentionText}`)) : null,
        c.unread_count > 0 && !quiet ? h('span', { className: 'badge' }, String(c.unread_count), h('span', { className: 'visually-hidden' }, ' unread')) : null,
      ),
    );
    button.addEventListener('click', () => store.open(c.id));
    return h('li', {}, button);
  }
}
