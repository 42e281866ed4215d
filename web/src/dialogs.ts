// The modal dialogs (the "New chat" picker is in people.ts): create a group, group settings (rename, members, roles,
// remove or ban, moderation (moderation.ts), leave), blocked users, forward a message. Each updates the store from the HTTP answer: the tab's own socket
// gets no events for its own requests (X-Socket-ID).
import { describeError } from './api.js';
import type { ChatStore } from './store.js';
import { confirmAction, h, modal, toast } from './dom.js';
import { ban, groupRules } from './moderation.js';
import { peoplePicker } from './people.js';
import type { Conversation, GroupParticipantsChangedEvent, Message, Participant, Role, User } from './types.js';

/** Runs a form's action with its submit button disabled, showing the API's error in the dialog. */
function handleSubmit(form: HTMLFormElement, showError: (text: string) => void, action: () => Promise<void>): void {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const submit = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (submit) submit.disabled = true;
    showError('');
    try {
      await action();
    } catch (err) {
      showError(describeError(err));
    } finally {
      if (submit) submit.disabled = false;
    }
  });
}

export function newGroupDialog(store: ChatStore): void {
  modal('New group', (dialog, showError) => {
    const name = h('input', { id: 'group-name', name: 'name', type: 'text', required: true, maxlength: 100 });
    const members = peoplePicker(store, { id: 'group-members', label: 'Members', hint: 'Type the beginning of a name (or a user id). You can add more later.' }, showError);
    const form = h(
      'form',
      { className: 'stack' },
      h('label', { for: 'group-name' }, 'Group name'),
      name,
      members.element,
      h('div', { className: 'dialog-actions' }, h('button', { type: 'submit' }, 'Create group')),
    );
    handleSubmit(form, showError, async () => {
      const ids = members.ids();
      if (ids === null) return showError('Pick people from the list, or type user ids (whole numbers).');
      const { data } = await store.api.post<{ data: Conversation }>('/groups', { name: name.value, user_ids: ids });
      store.upsertConversation(data);
      dialog.close();
      store.open(data.id);
    });
    return [form];
  });
}

const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' };

export function groupSettingsDialog(store: ChatStore, groupId: number): void {
  modal('Group settings', (dialog, showError) => {
    const content = h('div', { className: 'stack' });
    const render = () => {
      const group = store.conversation(groupId);
      if (!group) return dialog.close();
      content.replaceChildren(...groupSettings(store, group, dialog, showError));
    };
    const off = store.subscribe((change) => {
      if (change.kind !== 'conversation' || change.id !== groupId) return;
      // Keep the focus on the same control across the re-render.
      const focusedId = (document.activeElement as HTMLElement | null)?.id;
      render();
      if (focusedId) document.getElementById(focusedId)?.focus();
    });
    dialog.addEventListener('close', off);
    render();
    return [content];
  });
}

function groupSettings(store: ChatStore, group: Conversation, dialog: HTMLDialogElement, showError: (text: string) => void): Node[] {
  const myRole = store.myRole(group);
  const manager = myRole === 'owner' || myRole === 'admin';
  const act = async (action: () => Promise<void>) => {
    showError('');
    try {
      await action();
    } catch (err) {
      showError(describeError(err));
    }
  };

  // Rename.
  const nameInput = h('input', { id: 'settings-name', type: 'text', required: true, maxlength: 100, value: group.name ?? '', disabled: !manager });
  const rename = h(
    'form',
    { className: 'stack', 'aria-labelledby': 'settings-name-heading' },
    h('h3', { id: 'settings-name-heading' }, 'Name'),
    h('div', { className: 'row' }, h('label', { for: 'settings-name', className: 'visually-hidden' }, 'Group name'), nameInput, manager ? h('button', { type: 'submit', id: 'settings-rename' }, 'Rename') : null),
    manager ? null : h('p', { className: 'hint' }, 'Only the owner and admins can rename the group.'),
  );
  handleSubmit(rename, showError, async () => {
    const { data } = await store.api.patch<{ data: Conversation }>(`/groups/${group.id}`, { name: nameInput.value });
    store.upsertConversation(data);
  });

  // Members (the preview: at most 10).
  const rows = group.participants_preview.map((p) => memberRow(store, group, p, myRole, act));
  const more = group.participant_count - group.participants_preview.length;
  const members = h(
    'section',
    { className: 'stack', 'aria-labelledby': 'settings-members-heading' },
    h('h3', { id: 'settings-members-heading' }, `Members (${group.participant_count})`),
    h('ul', { className: 'member-list' }, ...rows),
    more > 0 ? h('p', { className: 'hint' }, `and ${more} more`) : null,
  );

  // Add members.
  const picker = peoplePicker(
    store,
    { id: 'settings-add', label: 'Add members', hint: 'Type the beginning of a name (or a user id).', exclude: () => group.participants_preview.map((p) => p.id) },
    showError,
  );
  const add = h('form', { className: 'stack' }, picker.element, h('div', { className: 'dialog-actions' }, h('button', { type: 'submit', id: 'settings-add-button' }, 'Add')));
  handleSubmit(add, showError, async () => {
    const ids = picker.ids();
    if (ids === null || ids.length === 0) return showError('Pick people from the list, or type user ids (whole numbers).');
    const { data } = await store.api.post<{ data: Conversation }>(`/groups/${group.id}/participants`, { user_ids: ids });
    store.upsertConversation(data);
    ownChange(store, data, 'added', ids);
  });

  // Leave, delete.
  const leave = h('button', { type: 'button', className: 'secondary danger-text', id: 'settings-leave' }, 'Leave group');
  leave.addEventListener('click', () =>
    void act(async () => {
      const note = myRole === 'owner' ? ' Ownership passes to the longest-standing admin, or member.' : '';
      if (!(await confirmAction(`Leave “${group.name}”?${note}`, 'Leave'))) return;
      await store.api.post(`/groups/${group.id}/leave`);
      dialog.close();
      store.removeConversation(group.id, `You left “${group.name}”.`);
    }),
  );
  const remove = h('button', { type: 'button', className: 'danger', id: 'settings-delete' }, 'Delete group');
  remove.addEventListener('click', () =>
    void act(async () => {
      if (!(await confirmAction(`Delete “${group.name}” and all its messages for everyone?`, 'Delete group'))) return;
      await store.api.delete(`/groups/${group.id}`);
      dialog.close();
      store.removeConversation(group.id, `“${group.name}” was deleted.`);
    }),
  );

  return [rename, members, manager ? add : null, manager ? groupRules(store, group, act) : null, h('div', { className: 'dialog-actions' }, leave, myRole === 'owner' ? remove : null)].filter((n): n is HTMLElement => n !== null);
}

/** What this tab changed in a group, told to its views as the event the other tabs get (this one gets none). */
function ownChange(store: ChatStore, group: Conversation | undefined, change_type: GroupParticipantsChangedEvent['change_type'], target_user_ids: number[]): void {
  if (!group) return;
  const { id: conversation_id, participant_count, participants_preview } = group;
  store.ownParticipantsChange({ conversation_id, change_type, actor_user_id: store.me.id, target_user_ids, participant_count, participants_preview });
}

function memberRow(store: ChatStore, group: Conversation, p: Participant, myRole: Role, act: (action: () => Promise<void>) => Promise<void>): HTMLElement {
  const me = p.id === store.me.id;
  const name = store.displayName(p);
  const row = h('li', { className: 'member', 'data-user-id': p.id }, h('span', { className: 'member-name' }, `${name}${me ? ' (you)' : ''}`, h('span', { className: 'muted' }, ` #${p.id}`)));

  if (myRole === 'owner' && !me) {
    const select = h('select', { id: `role-${p.id}`, 'aria-label': `Role of ${store.displayName(p)}` });
    for (const role of ['member', 'admin', 'owner'] as Role[]) {
      const option = h('option', { value: role }, ROLE_LABELS[role]);
      option.selected = role === p.role;
      select.append(option);
    }
    select.addEventListener('change', () =>
      void act(async () => {
        const role = select.value as Role;
        if (role === 'owner' && !(await confirmAction(`Make ${store.displayName(p)} the owner? You become an admin.`, 'Hand over'))) {
          select.value = p.role;
          return;
        }
        await store.api.patch(`/groups/${group.id}/participants/${p.id}`, { role });
        await store.refreshConversation(group.id);
        ownChange(store, store.conversation(group.id), 'role_changed', role === 'owner' ? [p.id, store.me.id] : [p.id]);
      }),
    );
    row.append(select);
  } else {
    row.append(h('span', { className: `role role-${p.role}` }, ROLE_LABELS[p.role]));
  }

  // Banning is a removal that also keeps them out (POST /groups/{id}/bans); the same people can be removed or banned.
  const canRemove = !me && (myRole === 'owner' || (myRole === 'admin' && p.role === 'member'));
  const removal = (label: string, question: string, request: () => Promise<unknown>) => {
    const button = h('button', { type: 'button', className: 'secondary danger-text', 'aria-label': `${label} ${name}`, id: `${label.toLowerCase()}-${p.id}` }, label);
    button.addEventListener('click', () =>
      void act(async () => {
        if (!(await confirmAction(question, label))) return;
        await request();
        const left = group.participants_preview.filter((x) => x.id !== p.id);
        ownChange(store, { ...group, participant_count: group.participant_count - 1, participants_preview: left }, 'removed', [p.id]);
        await store.refreshConversation(group.id);
      }),
    );
    return button;
  };
  if (canRemove) {
    row.append(
      removal('Remove', `Remove ${name} from “${group.name}”?`, () => store.api.delete(`/groups/${group.id}/participants/${p.id}`)),
      removal('Ban', `Ban ${name} from “${group.name}”? They are removed and cannot be added back until unbanned.`, () => ban(store, group, p)),
    );
  }
  return row;
}

export function blocksDialog(store: ChatStore): void {
  modal('Blocked users', (dialog, showError) => {
    const list = h('ul', { className: 'member-list', id: 'blocked-list' });
    const render = async () => {
      try {
        const { data } = await store.api.get<{ data: User[] }>('/blocks');
        list.replaceChildren(
          ...(data.length === 0
            ? [h('li', { className: 'hint' }, 'You have not blocked anyone.')]
            : data.map((user) => {
                const unblock = h('button', { type: 'button', className: 'secondary', 'aria-label': `Unblock ${store.displayName(user)}` }, 'Unblock');
                unblock.addEventListener('click', async () => {
                  try {
                    const result = await store.api.delete<{ data: { messaging_blocked_user_ids: number[] } }>(`/blocks/${user.id}`);
                    store.applyBlocks(result.data.messaging_blocked_user_ids, { userId: user.id, blocked: false });
                  } catch (err) {
                    showError(describeError(err));
                  }
                });
                return h('li', { className: 'member' }, h('span', { className: 'member-name' }, store.displayName(user), h('span', { className: 'muted' }, ` #${user.id}`)), unblock);
              })),
        );
      } catch (err) {
        showError(describeError(err));
      }
    };
    const off = store.subscribe((change) => {
      if (change.kind === 'blocks') void render();
    });
    dialog.addEventListener('close', off);
    void render();

    const picker = peoplePicker(store, { id: 'block-user', label: 'Block someone', hint: 'Type the beginning of their name (or their user id).', single: true }, showError);
    const form = h(
      'form',
      { className: 'stack' },
      picker.element,
      h('div', { className: 'dialog-actions' }, h('button', { type: 'submit', className: 'danger' }, 'Block')),
      h('p', { className: 'hint' }, 'Neither of you can send direct messages while the block is in place. Groups are not affected.'),
    );
    handleSubmit(form, showError, async () => {
      const [userId] = picker.ids() ?? [];
      if (userId === undefined) return showError('Pick someone from the list, or type a user id.');
      const { data } = await store.api.post<{ data: { messaging_blocked_user_ids: number[] } }>('/blocks', { user_id: userId });
      store.applyBlocks(data.messaging_blocked_user_ids, { userId, blocked: true });
      picker.clear();
    });
    return [list, form];
  });
}

export function forwardDialog(store: ChatStore, message: Message, shownHere: (copies: Message[]) => void): void {
  modal('Forward message', (dialog, showError) => {
    const options = store.inbox().map((c) =>
      h('li', {}, h('label', { className: 'check' }, h('input', { type: 'checkbox', name: 'conversation', value: c.id }), store.title(c))),
    );
    const form = h(
      'form',
      { className: 'stack' },
      h('p', { className: 'muted quote' }, message.body ?? (message.attachment ? `Attachment: ${message.attachment.name}` : '')),
      h('fieldset', {}, h('legend', {}, 'Forward to'), h('ul', { className: 'check-list' }, ...options)),
      h('div', { className: 'dialog-actions' }, h('button', { type: 'submit' }, 'Forward')),
    );
    handleSubmit(form, showError, async () => {
      const ids = [...form.querySelectorAll<HTMLInputElement>('input[name="conversation"]:checked')].map((i) => Number(i.value));
      if (ids.length === 0) return showError('Pick at least one conversation.');
      const { data } = await store.api.post<{ data: Message[] }>(`/messages/${message.id}/forward`, { conversation_ids: ids });
      shownHere(data.filter((m) => m.conversation_id === message.conversation_id));
      dialog.close();
      for (const copy of data) store.noteOwnMessage(copy);
      toast(`Forwarded to ${ids.length} conversation${ids.length === 1 ? '' : 's'}.`, 'info');
    });
    return [form];
  });
}
