// Mentions. In the composer, "@" and the beginning of a name offer the conversation's participants (the
// preview's up to 10); ↑/↓ move, Enter or Tab choose, Escape closes. Choosing inserts "@Name " and remembers
// the user, and a send carries `mentioned_user_ids` for the chosen names still in the text. In messages,
// "@Name" of each mentioned user is highlighted (history items carry `mentioned_user_ids`).
import { h } from './dom.js';
import type { User } from './types.js';

const QUERY = /(^|\s)@([\p{L}\p{N}_.-]*)$/u;

export class MentionAutocomplete {
  readonly list = h('ul', { className: 'mention-list', id: 'mention-list', role: 'listbox', 'aria-label': 'People to mention', hidden: true });
  private options: User[] = [];
  private active = 0;
  private chosen = new Map<number, string>();

  constructor(
    private readonly input: HTMLTextAreaElement,
    /** The people who can be mentioned (not me), with their display names. */
    private readonly people: () => { user: User; name: string }[],
  ) {
    input.setAttribute('aria-controls', 'mention-list');
    input.setAttribute('aria-autocomplete', 'list');
    input.addEventListener('input', () => this.update());
    input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    // Registered before the composer's own keydown: while the list is open, Enter and Tab choose.
    input.addEventListener('keydown', (event) => {
      if (this.list.hidden) return;
      if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
        this.active = (this.active + (event.key === 'ArrowDown' ? 1 : this.options.length - 1)) % this.options.length;
        this.render();
      } else if (event.key === 'Enter' || event.key === 'Tab') {
        this.choose(this.options[this.active]);
      } else if (event.key === 'Escape') {
        this.close();
      } else return;
      event.preventDefault();
      event.stopImmediatePropagation();
    });
  }

  /** The users whose "@Name" is still in the text. */
  mentionedIds(text: string): number[] {
    return [...this.chosen].filter(([, name]) => text.includes(`@${name}`)).map(([id]) => id);
  }

  reset(): void {
    this.chosen.clear();
    this.close();
  }

  private update(): void {
    const before = this.input.value.slice(0, this.input.selectionStart ?? this.input.value.length);
    const match = QUERY.exec(before);
    if (!match) return this.close();
    const query = match[2].toLocaleLowerCase();
    this.options = this.people()
      .filter(({ name }) => name.toLocaleLowerCase().split(/\s+/).some((word) => word.startsWith(query)))
      .map(({ user }) => user);
    this.active = 0;
    if (this.options.length === 0) return this.close();
    this.render();
  }

  private nameOf(user: User): string {
    return this.people().find((p) => p.user.id === user.id)?.name ?? user.name;
  }

  private render(): void {
    this.list.hidden = false;
    this.list.replaceChildren(
      ...this.options.map((user, i) => {
        const option = h('li', { role: 'option', id: `mention-option-${user.id}`, 'aria-selected': String(i === this.active), className: 'mention-option' }, this.nameOf(user));
        option.addEventListener('mousedown', (event) => {
          event.preventDefault(); // keep the focus in the composer
          this.choose(user);
        });
        return option;
      }),
    );
    this.input.setAttribute('aria-activedescendant', `mention-option-${this.options[this.active].id}`);
  }

  private choose(user: User): void {
    const caret = this.input.selectionStart ?? this.input.value.length;
    const before = this.input.value.slice(0, caret).replace(/@[\p{L}\p{N}_.-]*$/u, '');
    const name = this.nameOf(user);
    const inserted = `${before}@${name} `;
    this.input.value = inserted + this.input.value.slice(caret);
    this.input.setSelectionRange(inserted.length, inserted.length);
    this.chosen.set(user.id, name);
    this.close();
    this.input.dispatchEvent(new Event('input', { bubbles: true }));
  }

  private close(): void {
    this.list.hidden = true;
    this.input.removeAttribute('aria-activedescendant');
  }
}

/** A message body with "@Name" of each mentioned user in a highlighted span (mine stronger). */
export function withMentions(body: string, mentioned: { id: number; name: string }[], me: number): Node[] {
  const names = mentioned.filter((m) => m.name !== '').sort((a, b) => b.name.length - a.name.length);
  if (names.length === 0) return [document.createTextNode(body)];
  const out: Node[] = [];
  let at = 0;
  for (let i = body.indexOf('@'); i !== -1; i = body.indexOf('@', i + 1)) {
    if (i < at) continue;
    const who = names.find((m) => body.startsWith(m.name, i + 1));
    if (!who) continue;
    if (i > at) out.push(document.createTextNode(body.slice(at, i)));
    out.push(h('span', { className: who.id === me ? 'mention mention-me' : 'mention' }, `@${who.name}`));
    at = i + 1 + who.name.length;
  }
  if (at < body.length) out.push(document.createTextNode(body.slice(at)));
  return out;
}
