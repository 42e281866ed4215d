// Message search: a box above the inbox (GET /search/messages?q=, newest first, word beginnings, case and
// accents ignored). Results replace the inbox list until the search is closed; the matched words are marked from
// the answer's `highlight` ranges (UTF-16 indices), built as text nodes and <mark> elements, never as HTML.
// Choosing a result opens its conversation scrolled to the message.
import { describeError } from './api.js';
import type { ChatStore } from './store.js';
import { h, shortTime } from './dom.js';
import type { Message, Paged } from './types.js';

interface SearchHit extends Message {
  highlight: { start: number; end: number }[];
}

/** The body with its matches in <mark>. */
export function highlighted(body: string, ranges: { start: number; end: number }[]): Node[] {
  const out: Node[] = [];
  let at = 0;
  for (const { start, end } of ranges) {
    if (start > at) out.push(document.createTextNode(body.slice(at, start)));
    out.push(h('mark', {}, body.slice(start, end)));
    at = end;
  }
  if (at < body.length) out.push(document.createTextNode(body.slice(at)));
  return out;
}

export class SearchPanel {
  readonly element: HTMLElement;
  private readonly input = h('input', { id: 'search-query', name: 'q', type: 'text', autocomplete: 'off', placeholder: 'Search messages', maxlength: 999 });
  private readonly results = h('ol', { className: 'search-results', id: 'search-results', 'aria-label': 'Search results' });
  private readonly status = h('p', { className: 'hint search-status', role: 'status' });
  private readonly more = h('button', { type: 'button', className: 'secondary', hidden: true }, 'More results');
  /** The results, to be placed next to the inbox list (which they replace while shown). */
  readonly panel = h('div', { className: 'search-panel', hidden: true });
  private cursor: string | null = null;
  private query = '';

  constructor(
    private readonly store: ChatStore,
    /** The inbox list, hidden while results are shown. */
    private readonly inbox: HTMLElement,
  ) {
    const close = h('button', { type: 'button', className: 'link-button' }, 'Close search');
    close.addEventListener('click', () => this.close());
    const form = h(
      'form',
      { className: 'search-form', role: 'search' },
      h('label', { for: 'search-query', className: 'visually-hidden' }, 'Search messages'),
      this.input,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.search(this.input.value.trim(), true);
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && !this.panel.hidden) {
        event.preventDefault();
        this.close();
      }
    });
    this.more.addEventListener('click', () => void this.search(this.query, false));
    this.panel.append(h('div', { className: 'search-head' }, this.status, close), this.results, this.more);
    this.element = h('div', { className: 'search' }, form);
  }

  private async search(query: string, fresh: boolean): Promise<void> {
    if (query === '') return this.close();
    if (fresh) {
      this.query = query;
      this.cursor = null;
      this.results.replaceChildren();
    }
    this.panel.hidden = false;
    this.inbox.hidden = true;
    this.status.textContent = 'Searching…';
    try {
      const page = await this.store.api.get<Paged<SearchHit>>(
        `/search/messages?q=${encodeURIComponent(query)}&limit=20${this.cursor ? `&cursor=${encodeURIComponent(this.cursor)}` : ''}`,
      );
      if (query !== this.query) return; // a newer search replaced this one
      this.cursor = page.meta.next_cursor;
      this.results.append(...page.data.map((hit) => this.result(hit)));
      const count = this.results.childElementCount;
      this.status.textContent = count === 0 ? `No messages found for “${query}”.` : `${count}${this.cursor ? '+' : ''} message${count === 1 ? '' : 's'} found for “${query}”.`;
      this.more.hidden = this.cursor === null;
    } catch (err) {
      this.status.textContent = describeError(err);
    }
  }

  private result(hit: SearchHit): HTMLElement {
    const conversation = this.store.conversation(hit.conversation_id);
    const where = conversation ? this.store.title(conversation) : `Conversation ${hit.conversation_id}`;
    const button = h(
      'button',
      { type: 'button', className: 'search-result', 'data-message-id': hit.id },
      h('span', { className: 'result-head' }, h('strong', {}, where), ' · ', this.store.displayName(hit.sender), ' · ', h('time', { datetime: hit.created_at }, shortTime(hit.created_at))),
      h('span', { className: 'result-body' }, ...highlighted(hit.body ?? '', hit.highlight)),
    );
    button.addEventListener('click', () => this.store.open(hit.conversation_id, hit.id));
    return h('li', {}, button);
  }

  private close(): void {
    this.query = '';
    this.input.value = '';
    this.panel.hidden = true;
    this.inbox.hidden = false;
    this.results.replaceChildren();
  }
}
