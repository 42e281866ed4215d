// Reactions under a message: one button per emoji with its count (pressed when I reacted; a click toggles my
// reaction), and a small picker of common emoji. PUT/DELETE /messages/{id}/reactions/{emoji} answer the
// message's whole summary, which replaces what is shown; MessageReactionsUpdated brings other people's changes.
// "More reactions" opens a searchable list of common emoji (emoji.ts).
import { describeError } from './api.js';
import type { Api } from './api.js';
import { h, toast } from './dom.js';
import { findEmoji } from './emoji.js';
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

/**
 * The "React" action: a button that opens a row of common emoji and "More reactions", a box that searches a
 * longer list by name; choosing one adds (or withdraws) mine.
 */
export function reactionPicker(context: ReactionContext, messageId: number, reactions: () => Reaction[], label: string): HTMLElement {
  const row = h('div', { className: 'reaction-picker', role: 'group', 'aria-label': 'Pick a reaction', hidden: true });
  const open = h('button', { type: 'button', className: 'action', 'aria-label': `React to message from ${label}`, 'aria-expanded': 'false' }, 'React');
  const close = (focus: boolean) => {
    row.hidden = true;
    row.classList.remove('expanded');
    open.setAttribute('aria-expanded', 'false');
    if (focus) open.focus();
  };
  const pick = (emoji: string) => {
    close(false);
    const mine = reactions().some((r) => r.emoji === emoji && r.user_ids.includes(context.me));
    void toggle(context, messageId, emoji, mine);
  };
  for (const emoji of PICKER_EMOJI) {
    const choice = h('button', { type: 'button', className: 'reaction-choice', 'aria-label': `React with ${emoji}` }, emoji);
    choice.addEventListener('click', () => pick(emoji));
    row.append(choice);
  }
  const more = h('button', { type: 'button', className: 'reaction-choice more', 'aria-label': 'More reactions', title: 'More reactions', 'aria-expanded': 'false' }, '+');
  let panel: HTMLElement | null = null;
  more.addEventListener('click', () => {
    panel ??= emojiPanel(pick);
    if (!panel.isConnected) row.append(panel);
    const expanded = row.classList.toggle('expanded');
    more.setAttribute('aria-expanded', String(expanded));
    if (expanded) {
      panel.scrollIntoView({ block: 'nearest' });
      panel.querySelector('input')?.focus();
    }
  });
  row.append(more);
  open.addEventListener('click', () => {
    if (!row.hidden) return close(false);
    row.hidden = false;
    open.setAttribute('aria-expanded', 'true');
    row.querySelector<HTMLButtonElement>('button')?.focus();
  });
  row.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') close(true);
  });
  return h('span', { className: 'react-action' }, open, row);
}

/** The search box and the emoji it finds (all of them while it is empty); Enter picks the first. */
function emojiPanel(pick: (emoji: string) => void): HTMLElement {
  const input = h('input', { type: 'search', className: 'emoji-search', 'aria-label': 'Search emoji', placeholder: 'Search emoji', autocomplete: 'off' });
  const grid = h('div', { className: 'emoji-grid', role: 'group', 'aria-label': 'Emoji' });
  const render = () => {
    const found = findEmoji(input.value);
    grid.replaceChildren(
      ...(found.length === 0
        ? [h('p', { className: 'hint' }, 'No emoji found.')]
        : found.map((e) => {
            const button = h('button', { type: 'button', className: 'reaction-choice', 'aria-label': e.name, title: e.name }, e.emoji);
            button.addEventListener('click', () => pick(e.emoji));
            return button;
          })),
    );
  };
  input.addEventListener('input', render);
  input.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter') return;
    e.preventDefault();
    grid.querySelector<HTMLButtonElement>('button')?.click();
  });
  render();
  return h('div', { className: 'emoji-panel' }, input, grid);
}
