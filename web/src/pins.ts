// Pinned messages of the open conversation (docs/api.md "Pinned messages"): the bar under the header with their
// count and the latest pinned (GET /conversations/{id}/pins, most recently pinned first), their list on a click,
// and Pin / Unpin on a message (PUT or DELETE /messages/{id}/pin: a group's owner and admins, either person of a
// direct conversation; the server answers 403 to others). Others' pins come as MessagePinned.
import { describeError } from './api.js';
import { h, modal, shortTime, toast } from './dom.js';
import { truncate, type MessageList } from './message-list.js';
import type { ChatStore } from './store.js';
import type { Message, MessagePinnedEvent, Paged } from './types.js';

export class Pins {
  readonly element = h('button', { type: 'button', className: 'pin-bar', id: 'pin-bar', hidden: true });
  private pins: Message[] = [];
  private loads = 0;

  constructor(
    private readonly store: ChatStore,
    private readonly id: number,
    private readonly list: MessageList,
    /** Scrolls the conversation to a message. */
    show: (messageId: number) => void,
  ) {
    this.element.addEventListener('click', () =>
      modal('Pinned messages', (dialog) => [
        h(
          'ul',
          { className: 'search-results' },
          ...this.pins.map((m) => {
            const button = h(
              'button',
              { type: 'button', className: 'search-result' },
              h('span', { className: 'result-head' }, h('strong', {}, store.displayName(m.sender)), ` · ${shortTime(m.created_at)}`),
              h('span', { className: 'result-body' }, m.body ?? 'Attachment'),
            );
            button.addEventListener('click', () => {
              dialog.close();
              show(m.id);
            });
            return h('li', {}, button);
          }),
        ),
      ]),
    );
  }

  async load(): Promise<void> {
    const load = ++this.loads;
    try {
      const { data } = await this.store.api.get<Paged<Message>>(`/conversations/${this.id}/pins?limit=50`);
      if (load !== this.loads) return; // a newer one is on its way
      this.pins = data;
      const latest = data[0];
      this.element.hidden = !latest;
      this.element.replaceChildren(
        h('strong', {}, `${data.length} pinned`),
        latest ? ` · ${this.store.displayName(latest.sender)}: ${truncate(latest.body ?? 'Attachment', 80)}` : '',
      );
    } catch {
      // The bar is an extra: the messages show without it.
    }
  }

  /** MessagePinned, or this tab's own answer. */
  changed(e: Pick<MessagePinnedEvent, 'message_id' | 'pinned_at' | 'pinned_by'>): void {
    this.list.patch(e.message_id, { pinned_at: e.pinned_at, pinned_by: e.pinned_by });
    void this.load();
  }

  async toggle(m: Message): Promise<void> {
    const path = `/messages/${m.id}/pin`;
    const api = this.store.api;
    try {
      const { data } = m.pinned_at ? await api.delete<{ data: MessagePinnedEvent }>(path) : await api.put<{ data: MessagePinnedEvent }>(path);
      this.changed(data);
    } catch (err) {
      toast(describeError(err));
    }
  }
}
