// Moderation (docs/api.md "Moderation"): reporting someone's message (POST /messages/{id}/report), and a group's
// rules for its owner and admins in the group settings: slow mode, Freeze / Unfreeze (PATCH /groups/{id}) and the
// banned people with Unban (GET and DELETE /groups/{id}/bans). Banning itself sits beside Remove (dialogs.ts).
import { ApiError, describeError } from './api.js';
import { h, modal, toast } from './dom.js';
import type { ChatStore } from './store.js';
import type { Conversation, Message, User } from './types.js';

/** Messages reported from this page ("Reported" on their toolbar). */
const reported = new Set<number>();

export const wasReported = (id: number) => reported.has(id);

/** The report dialog: a reason and an optional note. `done` runs once the message counts as reported. */
export function reportDialog(store: ChatStore, m: Message, done: () => void): void {
  modal(`Report message from ${store.displayName(m.sender)}`, (dialog, showError) => {
    const reason = h('select', { id: 'report-reason' });
    for (const [value, label] of [['spam', 'Spam'], ['abuse', 'Abuse or harassment'], ['other', 'Something else']]) reason.append(h('option', { value }, label));
    const note = h('textarea', { id: 'report-note', rows: 2, maxlength: 1000 });
    const form = h(
      'form',
      { className: 'stack' },
      h('label', { for: 'report-reason' }, 'Reason'),
      reason,
      h('label', { for: 'report-note' }, 'Note (optional)'),
      note,
      h('div', { className: 'dialog-actions' }, h('button', { type: 'submit', className: 'danger' }, 'Report')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await store.api.post(`/messages/${m.id}/report`, { reason: reason.value, ...(note.value.trim() ? { note: note.value.trim() } : {}) });
        toast('Reported. Thank you.', 'info');
      } catch (err) {
        if ((err as ApiError).code !== 'already_reported') return showError(describeError(err));
        toast('You already reported this message.', 'info');
      }
      reported.add(m.id);
      done();
      dialog.close();
    });
    return [form];
  });
}

/** Names of the people banned from this page: the bans list has ids only, and they are in no preview any more. */
const bannedNames = new Map<number, string>();

/** POST /groups/{id}/bans: removed, and kept out until unbanned. */
export function ban(store: ChatStore, group: Conversation, user: User): Promise<unknown> {
  bannedNames.set(user.id, store.displayName(user));
  return store.api.post(`/groups/${group.id}/bans`, { user_id: user.id });
}

const SLOW_MODES: [number, string][] = [[0, 'Off'], [10, '10 s'], [30, '30 s'], [60, '1 min'], [300, '5 min'], [900, '15 min'], [3600, '1 h']];

/** "1 min" for 60 (a value set through the API may be any number of seconds). */
export const slowModeLabel = (seconds: number) => SLOW_MODES.find(([s]) => s === seconds)?.[1] ?? `${seconds} s`;

/** The group settings' "Moderation" section (owner and admins): slow mode, Freeze / Unfreeze, the banned people. */
export function groupRules(store: ChatStore, group: Conversation, act: (action: () => Promise<void>) => Promise<void>): HTMLElement {
  const path = `/groups/${group.id}`;
  const update = (changes: Partial<Conversation>) =>
    act(async () => store.upsertConversation((await store.api.patch<{ data: Conversation }>(path, changes)).data));
  const slow = h('select', { id: 'settings-slow-mode' });
  for (const [seconds, label] of SLOW_MODES) slow.append(h('option', { value: seconds, selected: seconds === group.slow_mode_s }, label));
  slow.addEventListener('change', () => void update({ slow_mode_s: Number(slow.value) }));
  const freeze = h('button', { type: 'button', className: 'secondary', id: 'settings-freeze' }, group.frozen ? 'Unfreeze' : 'Freeze');
  freeze.addEventListener('click', () => void update({ frozen: !group.frozen }));

  const banned = h('ul', { className: 'member-list', id: 'banned-list' });
  const listBans = async () => {
    const { data } = await store.api.get<{ data: { user_id: number }[] }>(`${path}/bans`);
    banned.replaceChildren(
      ...(data.length ? [] : [h('li', { className: 'hint' }, 'Nobody is banned.')]),
      ...data.map(({ user_id }) => {
        const name = bannedNames.get(user_id) ?? store.nameOf(user_id);
        const unban = h('button', { type: 'button', className: 'secondary', 'aria-label': `Unban ${name}` }, 'Unban');
        unban.addEventListener('click', () =>
          void act(async () => {
            await store.api.delete(`${path}/bans/${user_id}`);
            await listBans();
          }),
        );
        return h('li', { className: 'member' }, h('span', { className: 'member-name' }, name, h('span', { className: 'muted' }, ` #${user_id}`)), unban);
      }),
    );
  };
  void act(listBans);
  return h(
    'section',
    { className: 'stack', 'aria-labelledby': 'settings-rules-heading' },
    h('h3', { id: 'settings-rules-heading' }, 'Moderation'),
    h('div', { className: 'row' }, h('label', { for: 'settings-slow-mode' }, 'Slow mode'), slow, freeze),
    h('p', { className: 'hint' }, group.frozen ? 'Frozen: only owners and admins can send.' : 'Slow mode: members send once per this long.'),
    h('h4', {}, 'Banned'),
    banned,
  );
}
