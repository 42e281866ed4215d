// Lists that take the inbox's place in the sidebar until "Back to inbox": "Threads" (GET /threads: the threads I
// take part in, most recent reply first, with their unread replies), each opening its conversation and thread;
// "Archived" (GET /conversations?archived=true), each opening its conversation, with Unarchive beside it.
import { describeError } from './api.js';
import { h, shortTime, toast } from './dom.js';
import type { ChatStore } from './store.js';
import type { Conversation, Paged, ThreadItem } from './types.js';

/** `inbox`: the inbox's list, hidden while a list is shown in `panel`; `nav`: the buttons that show them. */
export function sideLists(store: ChatStore, inbox: HTMLElement): { nav: HTMLElement; panel: HTMLElement } {
  const panel = h('div', { className: 'search-panel', id: 'side-panel', hidden: true });
  const back = h('button', { type: 'button', className: 'link-button' }, 'Back to inbox');
  back.addEventListener('click', () => {
    panel.hidden = true;
    inbox.hidden = false;
  });
  async function show<T>(title: string, path: string, item: (x: T) => HTMLElement, empty: string): Promise<void> {
    const list = h('ul', { className: 'search-results', 'aria-label': title });
    const status = h('p', { className: 'hint', role: 'status' }, 'Loading…');
    panel.replaceChildren(h('div', { className: 'search-head' }, h('h2', { className: 'side-title' }, title), back), status, list);
    panel.hidden = false;
    inbox.hidden = true;
    try {
      const { data } = await store.api.get<Paged<T>>(path);
      list.append(...data.map((x) => h('li', {}, item(x))));
      status.textContent = data.length > 0 ? '' : empty;
    } catch (err) {
      status.textContent = describeError(err);
    }
  }
  const view = (label: string, open: () => void) => {
    const button = h('button', { type: 'button', className: 'link-button' }, label);
    button.addEventListener('click', open);
    return button;
  };
  const thread = (t: ThreadItem) => {
    const c = store.conversation(t.root.conversation_id);
    const button = h(
      'button',
      { type: 'button', className: 'search-result' },
      h(
        'span',
        { className: 'result-head' },
        h('strong', {}, c ? store.title(c) : 'Conversation'),
        ` · ${t.reply_count} ${t.reply_count === 1 ? 'reply' : 'replies'} · ${shortTime(t.last_reply_at)} `,
        t.unread_reply_count > 0 ? h('span', { className: 'badge' }, t.unread_reply_count, h('span', { className: 'visually-hidden' }, ' unread')) : null,
      ),
      h('span', { className: 'result-body' }, `${store.displayName(t.root.sender)}: ${t.root.body ?? 'Attachment'}`),
    );
    button.addEventListener('click', () => store.open(t.root.conversation_id, undefined, t.root));
    return button;
  };
  const archived = (c: Conversation) => {
    store.upsertConversation(c, false); // known, so it opens at once; not in the inbox
    const title = store.title(c);
    const open = h('button', { type: 'button', className: 'search-result' }, h('strong', {}, title));
    open.addEventListener('click', () => store.open(c.id));
    const unarchive = h('button', { type: 'button', className: 'secondary', 'aria-label': `Unarchive ${title}` }, 'Unarchive');
    unarchive.addEventListener('click', async () => {
      try {
        const { data } = await store.api.delete<{ data: Conversation }>(`/conversations/${c.id}/archive`);
        store.upsertConversation(data);
        unarchive.closest('li')?.remove();
      } catch (err) {
        toast(describeError(err));
      }
    });
    return h('div', { className: 'archived-item' }, open, unarchive);
  };
  const nav = h(
    'nav',
    { className: 'side-views', 'aria-label': 'Views' },
    view('Threads', () => void show('Threads', '/threads?limit=50', thread, 'No threads yet: “Reply in thread” on a message starts one.')),
    view('Archived', () => void show('Archived', '/conversations?archived=true&limit=100', archived, 'No archived conversations.')),
  );
  return { nav, panel };
}
