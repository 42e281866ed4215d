// The open conversation's header buttons: Mute, Group settings (a group) or Block / Unblock (a direct
// conversation), and the "More actions" menu of my own state of it (docs/api.md "A user's own conversation
// state"): Archive / Unarchive, Pin / Unpin conversation, Clear history. Each answers my ConversationResource;
// my other tabs follow ConversationStateChanged. And "Delete for me" of a message (DELETE /messages/{id}?for=me).
import { describeError } from './api.js';
import { groupSettingsDialog } from './dialogs.js';
import { confirmAction, h, labelledIconButton, toast } from './dom.js';
import { muteToggle } from './mute.js';
import type { ChatStore } from './store.js';
import type { Conversation, Message } from './types.js';

export function headerActions(store: ChatStore, conversation: Conversation): HTMLElement[] {
  const actions: HTMLElement[] = [muteToggle(store, conversation)];
  const partner = store.partner(conversation);
  if (conversation.type === 'group') {
    const settings = labelledIconButton('settings', 'Group settings', { className: 'secondary', id: 'group-settings' });
    settings.addEventListener('click', () => groupSettingsDialog(store, conversation.id));
    actions.push(settings);
  } else if (partner) {
    const blocked = store.hasBlocked(partner.id);
    const toggle = h('button', { type: 'button', className: blocked ? 'secondary' : 'secondary danger-text', id: 'block-toggle' }, blocked ? 'Unblock' : 'Block');
    toggle.addEventListener('click', () => void toggleBlock(store, partner.id, partner.name, blocked));
    actions.push(toggle);
  }
  return [...actions, ownStateMenu(store, conversation)];
}

function ownStateMenu(store: ChatStore, c: Conversation): HTMLElement {
  const api = store.api;
  const button = h('button', { type: 'button', className: 'secondary', id: 'conversation-menu', 'aria-label': 'More actions', title: 'More actions', 'aria-haspopup': 'menu', 'aria-expanded': 'false' }, '⋯');
  const menu = h('div', { className: 'menu', role: 'menu', hidden: true });
  const show = (open: boolean) => {
    menu.hidden = !open;
    button.setAttribute('aria-expanded', String(open));
  };
  const item = (label: string, act: () => Promise<{ data: Conversation } | null>) => {
    const choice = h('button', { type: 'button', role: 'menuitem', className: 'action' }, label);
    choice.addEventListener('click', async () => {
      show(false);
      try {
        const answer = await act();
        if (answer) store.upsertConversation(answer.data);
      } catch (err) {
        toast(describeError(err));
      }
    });
    return choice;
  };
  const toggle = (on: unknown, what: string) => {
    const path = `/conversations/${c.id}/${what}`;
    return () => (on ? api.delete<{ data: Conversation }>(path) : api.put<{ data: Conversation }>(path));
  };
  menu.append(
    item(c.archived_at ? 'Unarchive' : 'Archive', toggle(c.archived_at, 'archive')),
    item(c.pinned_at ? 'Unpin conversation' : 'Pin conversation', toggle(c.pinned_at, 'pin')),
    item('Clear history', async () =>
      (await confirmAction('Clear this conversation’s history for you? The others keep it.', 'Clear history')) ? api.post<{ data: Conversation }>(`/conversations/${c.id}/clear`) : null,
    ),
  );
  button.addEventListener('click', () => show(menu.hidden));
  const wrap = h('div', { className: 'menu-wrap' }, button, menu);
  // Closed by Escape and by leaving it.
  wrap.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !menu.hidden) {
      show(false);
      button.focus();
    }
  });
  wrap.addEventListener('focusout', (event) => {
    if (!wrap.contains(event.relatedTarget as Node | null)) show(false);
  });
  return wrap;
}

/** "Delete for me": the message goes for me alone, everywhere I read; the others keep it. */
export async function hideForMe(store: ChatStore, m: Message): Promise<void> {
  if (!(await confirmAction('Delete this message for you? The others still see it.', 'Delete for me'))) return;
  try {
    await store.api.delete(`/messages/${m.id}?for=me`);
    store.hide(m.conversation_id, m.id);
  } catch (err) {
    toast(describeError(err));
  }
}

async function toggleBlock(store: ChatStore, userId: number, name: string, blocked: boolean): Promise<void> {
  try {
    if (blocked) {
      const { data } = await store.api.delete<{ data: { messaging_blocked_user_ids: number[] } }>(`/blocks/${userId}`);
      store.applyBlocks(data.messaging_blocked_user_ids, { userId, blocked: false });
      toast(`You unblocked ${name || `User ${userId}`}.`, 'info');
    } else {
      if (!(await confirmAction(`Block ${name || `User ${userId}`}? Neither of you can send direct messages until you unblock them. Groups are not affected.`, 'Block'))) return;
      const { data } = await store.api.post<{ data: { messaging_blocked_user_ids: number[] } }>('/blocks', { user_id: userId });
      store.applyBlocks(data.messaging_blocked_user_ids, { userId, blocked: true });
      toast(`You blocked ${name || `User ${userId}`}.`, 'info');
    }
  } catch (err) {
    toast(describeError(err));
  }
}
