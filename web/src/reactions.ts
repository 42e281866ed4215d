// Reactions under a message: one button per emoji with its count (pressed when I reacted; a click toggles my
// reaction), and a small picker of common emoji. PUT/DELETE /messages/{id}/reactions/{emoji} answer the
// message's whole summary, which replaces what is shown; MessageReactionsUpdated brings other people's changes.
import { describeError } from './api.js';
import type { Api } from './api.js';
import { h, toast } from './dom.js';
import type { Reaction } from './types.js';

export const PICKER_EMOJI = ['👍', '❤️', '😂', '🎉', '😮', '😢'];

export interface ReactionContext {
  api: Api;
  me: number;
  /** A person's name, for the counts' labels. */
  nameOf(userId: number): string;
  /** Called with the summary the server answered. */
  changed(messageId: number, reactions: Reaction[]): void;
}

async function toggle(context: ReactionContext, messageId: number, emoji: string, mine: boolean): Promise<void> {
  const path = `/messages/${messageId}/reactions/${encodeURIComponent(emoji)}`;
  try {
    const { data } = mine
      ? await context.api.delete<{ data: { reactions: Reaction[] } }>(path)
      : await context.api.put<{ data: { reactions: Reaction[] } }>(path);
    context.changed(messageId, data.reactions);
  } catch (err) {
    toast(describeError(err));
  }
}

/** The counts under a message (nothing when it has no reactions). */
export function renderReactions(context: ReactionContext, messageId: number, reactions: Reaction[]): HTMLElement | null {
  if (reactions.length === 0) return null;
  return h(
    'div',
    { className: 'reactions', role: 'group', 'aria-label': 'Reactions' },
    ...reactions.map((r) => {
      const mine = r.user_ids.includes(context.me);
      const who = r.user_ids.map((i) => (i === context.me ? 'you' : context.nameOf(i))).join(', ');
      const button = h(
        'button',
        { type: 'button', className: 'reaction', 'aria-pressed': String(mine), title: who, 'aria-label': `${r.emoji} ${r.count}${mine ? ', including you' : ''}`, 'data-emoji': r.emoji },
        h('span', { 'aria-hidden': 'true' }, r.emoji),
        h('span', { className: 'reaction-count' }, r.count),
      );
      button.addEventListener('click', () => void toggle(context, messageId, r.emoji, mine));
      return button;
    }),
  );
}

/** The "React" action: a button that opens a row of common emoji; choosing one adds (or withdraws) mine. */
export function reactionPicker(context: ReactionContext, messageId: number, reactions: () => Reaction[], label: string): HTMLElement {
  const row = h('div', { className: 'reaction-picker', role: 'group', 'aria-label': 'Pick a reaction', hidden: true });
  for (const emoji of PICKER_EMOJI) {
    const choice = h('button', { type: 'button', className: 'reaction-choice', 'aria-label': `React with ${emoji}` }, emoji);
    choice.addEventListener('click', () => {
      row.hidden = true;
      const mine = reactions().some((r) => r.emoji === emoji && r.user_ids.includes(context.me));
      void toggle(context, messageId, emoji, mine);
    });
    row.append(choice);
  }
  const open = h('button', { type: 'button', className: 'action', 'aria-label': `React to message from ${label}`, 'aria-expanded': 'false' }, 'React');
  open.addEventListener('click', () => {
    row.hidden = !row.hidden;
    open.setAttribute('aria-expanded', String(!row.hidden));
    if (!row.hidden) row.querySelector<HTMLButtonElement>('button')?.focus();
  });
  row.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      row.hidden = true;
      open.setAttribute('aria-expanded', 'false');
      open.focus();
    }
  });
  return h('span', { className: 'react-action' }, open, row);
}
