// The open conversation's header buttons: Mute, and Group settings (a group) or Block / Unblock (a direct
// conversation).
import { describeError } from './api.js';
import { groupSettingsDialog } from './dialogs.js';
import { confirmAction, h, labelledIconButton, toast } from './dom.js';
import { muteToggle } from './mute.js';
import type { ChatStore } from './store.js';
import type { Conversation } from './types.js';

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
  return actions;
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
