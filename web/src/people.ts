// Finding people by name with GET /users?query= (word beginnings, case and accents ignored), as you type: the
// "New chat" dialog, where choosing one starts (or reopens) the direct conversation with POST /conversations, and
// the picker of New group, Add members and Block (`peoplePicker`), where the chosen show as removable chips.
import { describeError } from './api.js';
import type { ChatStore } from './store.js';
import { avatar, h, modal, parseIds } from './dom.js';
import type { Conversation, Paged, User } from './types.js';

const SEARCH_DELAY_MS = 200;

export interface PeoplePicker {
  /** The label, the box, the chosen and the people found. */
  element: HTMLElement;
  /** The chosen people's ids and any ids typed into the box; null when the box holds text that is not ids. */
  ids(): number[] | null;
  clear(): void;
}

/**
 * A box that finds people by name as you type; a click (or Enter) on one adds them to the chosen, shown as chips
 * with a button each to take them off. A user id (or several, separated by commas or spaces) typed into the box
 * counts too. `single`: choosing replaces the one chosen. `exclude`: ids not offered (me always).
 */
export function peoplePicker(
  store: ChatStore,
  options: { id: string; label: string; hint: string; single?: boolean; exclude?: () => number[] },
  showError: (text: string) => void,
): PeoplePicker {
  const { id } = options;
  const chosen = new Map<number, User>();
  const input = h('input', { id, type: 'text', autocomplete: 'off', 'aria-describedby': `${id}-help`, 'aria-controls': `${id}-results` });
  const chips = h('ul', { className: 'picked', 'aria-label': 'Chosen' });
  const results = h('ul', { className: 'people-results', id: `${id}-results`, 'aria-label': 'People found', 'aria-live': 'polite' });
  const renderChips = () =>
    chips.replaceChildren(
      ...[...chosen.values()].map((user) => {
        const name = store.displayName(user);
        const drop = h('button', { type: 'button', className: 'link-button', 'aria-label': `Take ${name} off` }, '×');
        drop.addEventListener('click', () => {
          chosen.delete(user.id);
          renderChips();
          input.focus();
        });
        return h('li', { className: 'chip' }, avatar(name, user.id), h('span', {}, name), drop);
      }),
    );
  const choose = (user: User) => {
    if (options.single) chosen.clear();
    chosen.set(user.id, user);
    renderChips();
    input.value = '';
    results.replaceChildren();
    input.focus();
  };
  const search = findPeople(store, results, showError, choose, () => [...chosen.keys(), ...(options.exclude?.() ?? [])]);
  bindSearch(input, results, search);
  return {
    element: h(
      'div',
      { className: 'stack' },
      h('label', { for: id }, options.label),
      chips,
      input,
      h('p', { className: 'hint', id: `${id}-help` }, options.hint),
      results,
    ),
    ids() {
      const typed = parseIds(input.value);
      if (typed === null) return null;
      const ids = [...chosen.keys(), ...typed];
      return options.single ? ids.slice(-1) : [...new Set(ids)];
    },
    clear() {
      chosen.clear();
      renderChips();
      input.value = '';
      results.replaceChildren();
    },
  };
}

/** The search behind a results list: each person found is a button that calls `pick`. */
function findPeople(
  store: ChatStore,
  results: HTMLElement,
  showError: (text: string) => void,
  pick: (user: User) => void,
  exclude: () => number[] = () => [],
): (query: string) => Promise<void> {
  let asked = 0;
  return async (query) => {
    const ask = ++asked;
    showError('');
    if (query.trim() === '' || parseIds(query) !== null) return void results.replaceChildren();
    try {
      const page = await store.api.get<Paged<User>>(`/users?query=${encodeURIComponent(query)}&limit=10`);
      if (ask !== asked) return; // a later search is on its way
      const left = new Set([store.me.id, ...exclude()]);
      const people = page.data.filter((u) => !left.has(u.id));
      results.replaceChildren(
        ...(people.length === 0
          ? [h('li', { className: 'hint' }, 'No one found.')]
          : people.map((user) => {
              const button = h('button', { type: 'button', className: 'person' }, avatar(store.displayName(user), user.id), h('span', {}, store.displayName(user)));
              button.addEventListener('click', () => pick(user));
              return h('li', {}, button);
            })),
      );
    } catch (err) {
      if (ask === asked) {
        results.replaceChildren();
        showError(describeError(err));
      }
    }
  };
}

/** Searches 200 ms after the last key; Enter picks the first person found (and does not submit the form then). */
function bindSearch(input: HTMLInputElement, results: HTMLElement, search: (query: string) => Promise<void>): void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void search(input.value), SEARCH_DELAY_MS);
  });
  input.addEventListener('keydown', (e) => {
    const first = results.querySelector<HTMLButtonElement>('button.person');
    if (e.key !== 'Enter' || !first) return;
    e.preventDefault();
    first.click();
  });
}

export function newDirectDialog(store: ChatStore): void {
  modal('New chat', (dialog, showError) => {
    const input = h('input', { id: 'people-query', name: 'query', type: 'text', autocomplete: 'off', 'aria-describedby': 'people-help', 'aria-controls': 'people-results' });
    const results = h('ul', { className: 'people-results', id: 'people-results', 'aria-label': 'People found', 'aria-live': 'polite' });
    bindSearch(input, results, findPeople(store, results, showError, (user) => void start(user)));

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

    return [
      h('div', { className: 'stack' }, h('label', { for: 'people-query' }, 'Find a person'), input, h('p', { className: 'hint', id: 'people-help' }, 'Type the beginning of their name.'), results),
    ];
  });
}
