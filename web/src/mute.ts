// Muting a conversation (PUT /conversations/{id}/mute {until: null}, DELETE to unmute): it silences
// notifications only, so the inbox just marks it. The answer is my ConversationResource, with `muted`.
import { describeError } from './api.js';
import type { ChatStore } from './store.js';
import { h, icon, labelledIconButton, toast } from './dom.js';
import type { Conversation } from './types.js';

/** The header's Mute / Unmute button for the open conversation. */
export function muteToggle(store: ChatStore, conversation: Conversation): HTMLElement {
  const muted = conversation.muted ?? false;
  const button = labelledIconButton(muted ? 'muted' : 'bell', muted ? 'Unmute' : 'Mute', { className: 'secondary', id: 'mute-toggle', 'aria-pressed': String(muted) });
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const path = `/conversations/${conversation.id}/mute`;
      const { data } = muted ? await store.api.delete<{ data: Conversation }>(path) : await store.api.put<{ data: Conversation }>(path, { until: null });
      store.upsertConversation(data);
      toast(data.muted ? 'Muted: no notifications from this conversation.' : 'Unmuted.', 'info');
    } catch (err) {
      toast(describeError(err));
      button.disabled = false;
    }
  });
  return button;
}

/** The inbox's mark on a muted conversation. */
export function mutedMark(): HTMLElement {
  return h('span', { className: 'muted-mark', title: 'Muted' }, icon('muted'), h('span', { className: 'visually-hidden' }, ' (muted)'));
}
