// Read receipts of one conversation: "Seen" (direct) or "Seen by Bob, Carol" (group) under the newest of my
// messages each other participant has read. Positions come from GET /reads on opening (so they survive a
// reload), then from ConversationRead events, which carry a time but no message id.
import { describeError, type ApiError } from './api.js';
import { h, toast } from './dom.js';
import type { MessageList } from './message-list.js';
import type { ChatStore } from './store.js';
import type { Paged, ReadPosition } from './types.js';

export class Receipts {
  /** How far each other participant read: a message id (GET /reads) and the time of their latest read. */
  private readonly readBy = new Map<number, { messageId: number; at: string | null }>();

  constructor(
    private readonly store: ChatStore,
    private readonly conversationId: number,
    private readonly list: MessageList,
  ) {}

  /** GET /reads, page by page: every participant's read position. */
  async load(isDestroyed: () => boolean): Promise<void> {
    try {
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '' : `&cursor=${cursor}`;
        const page: Paged<ReadPosition> = await this.store.api.get<Paged<ReadPosition>>(`/conversations/${this.conversationId}/reads?limit=1000${query}`);
        if (isDestroyed()) return;
        for (const r of page.data) {
          if (r.user_id === this.store.me.id) continue;
          const known = this.readBy.get(r.user_id);
          // A position without a time was set when they joined the group: not a read (docs/api.md, reads).
          if (r.last_read_at === null) continue;
          // A ConversationRead may have arrived while the page was on its way: keep the later time.
          const at = known?.at && known.at > r.last_read_at ? known.at : r.last_read_at;
          this.readBy.set(r.user_id, { messageId: Math.max(r.last_read_message_id, known?.messageId ?? 0), at });
        }
        cursor = page.meta.next_cursor;
      } while (cursor !== null);
    } catch (err) {
      if ((err as ApiError).status !== 404) toast(describeError(err));
    }
  }

  /** A ConversationRead from someone else. */
  read(userId: number, at: string): void {
    if (userId === this.store.me.id) return;
    this.readBy.set(userId, { messageId: this.readBy.get(userId)?.messageId ?? 0, at });
    this.render();
  }

  /** Members who left or were removed no longer count as readers. */
  forget(userIds: number[]): void {
    for (const userId of userIds) this.readBy.delete(userId);
    this.render();
  }

  render(): void {
    for (const receipt of this.list.list.querySelectorAll('.receipt')) receipt.remove();
    const conversation = this.store.conversation(this.conversationId);
    const mine = this.list.mine().reverse();
    const readers = new Map<number, string[]>();
    for (const [userId, read] of this.readBy) {
      const seen = mine.find((m) => m.id <= read.messageId || (read.at !== null && m.created_at <= read.at));
      if (seen) readers.set(seen.id, [...(readers.get(seen.id) ?? []), this.store.nameOf(userId, conversation)]);
    }
    for (const [messageId, names] of readers) {
      const text = conversation?.type === 'direct' ? 'Seen' : `Seen by ${names.join(', ')}`;
      this.list.elementOf(messageId)?.append(h('p', { className: 'receipt' }, text));
    }
  }
}
