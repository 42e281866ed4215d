// The "New chat" picker: people found by name with GET /users?query= (word beginnings, case and accents
// ignored), as you type; choosing one starts (or reopens) the direct conversation with POST /conversations.
import { describeError } from './api.js';
import type { ChatStore } from './store.js';
import { avatar, h, modal } from './dom.js';
import type { Conversation, Paged, User } from './types.js';

const SEARCH_DELAY_MS = 200;

export function newDirectDialog(store: ChatStore): void {
  modal('New chat', (dialog, showError) => {
    const input = h('input', { id: 'people-query', name: 'query', type: 'text', autocomplete: 'off', 'aria-describedby': 'people-help', 'aria-controls': 'people-results' });
    const results = h('ul', { className: 'people-results', id: 'people-results', 'aria-label': 'People found', 'aria-live': 'polite' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    let asked = 0;

    async function search(query: string): Promise<void> {
      const ask = ++asked;
      showError('');
      if (query.trim() === '') return void results.replaceChildren();
      try {
        const page = await store.api.get<Paged<User>>(`/users?query=${encodeURIComponent(query)}&limit=10`);
        if (ask !== asked) return; // a later search is on its way
        const people = page.data.filter((u) => u.id !== store.me.id);
        results.replaceChildren(
          ...(people.length === 0
            ? [h('li', { className: 'hint' }, 'No one found.')]
            : people.map((user) => {
                const pick = h('button', { type: 'button', className: 'person' }, avatar(store.displayName(user), user.id), h('span', {}, store.displayName(user)));
                pick.addEventListener('click', () => void start(user));
                return h('li', {}, pick);
              })),
        );
      } catch (err) {
        if (ask === asked) {
          results.replaceChildren();
          showError(describeError(err));
        }
      }
    }

    async function start(user: User): Promise<void> {
      try {
        const { data } = await store.api.post<{ data: Conversation }>('/conversations', { user_id: user.id });
        store.upsertConversation(data);
        dialog.close();
        store.open(data.id);
      } catch (err) {
        showError(describeError(err));
      }
    }

    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => void search(input.value), SEARCH_DELAY_MS);
    });
    // Enter picks the first person found.
    input.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      results.querySelector<HTMLButtonElement>('button.person')?.click();
    });
    return [
      h('div', { className: 'stack' }, h('label', { for: 'people-query' }, 'Find a person'), input, h('p', { className: 'hint', id: 'people-help' }, 'Type the beginning of their name.'), results),
    ];
  });
}
