// The composer of one conversation: the text box (Enter sends, Shift+Enter a new line, Escape cancels, Up in an
// empty box edits my last message), replying, editing, a picked file with its preview, the "@" list, the
// typing signal, and the note saying why I cannot send: a block, a frozen group, slow mode's countdown, or the
// server's refusal of a send (a blocked word, a banned account). Sends go to the send queue at once, so the box
// is free for the next message while the first is on its way.
import { ApiError, describeError } from './api.js';
import { filePreview } from './attachments.js';
import { announce, h, icon, toast } from './dom.js';
import { MentionAutocomplete } from './mentions.js';
import { slowModeLabel } from './moderation.js';
import { truncate } from './message-list.js';
import { SendQueue } from './sending.js';
import type { ChatStore } from './store.js';
import type { Message } from './types.js';

/** Renew "typing" well within the server's 8 s; stop after this long without a keystroke. */
const TYPING_RENEW_MS = 3_000;
const TYPING_IDLE_MS = 5_000;

/** What a refused send means, by the server's code (slow mode and frozen have their own lines). */
const REFUSALS: Record<string, string> = {
  blocked_word: 'Not sent: the message contains a word this chat does not allow. Reword it and send again.',
  user_banned: 'Not sent: your account is banned from this chat service.',
};

export interface ComposerHooks {
  /** My newest message that can still be edited (for Up). */
  lastOwnMessage(): Message | undefined;
  /** A message handed to the send queue: its "Sending…" element goes to the end of the list. */
  pending(element: HTMLElement): void;
  /** The server's answer to a send or an edit. */
  sent(message: Message): void;
  /** A pending message changed (failed, retried): keep the list scrolled. */
  changed(): void;
}

export class Composer {
  readonly element = h('form', { className: 'composer', 'aria-label': 'Send a message' });
  private readonly banner = h('div', { className: 'composer-banner', hidden: true });
  private readonly input = h('textarea', { name: 'body', rows: 1, autocomplete: 'off' });
  private readonly fileInput = h('input', { type: 'file', className: 'visually-hidden' });
  /** Element ids: `composer-input`…, or a thread's `thread-input`…. */
  private readonly key: string;
  private readonly sendButton = h('button', { type: 'submit', className: 'send' }, 'Send');
  private readonly blockedNote = h('p', { className: 'blocked-note', role: 'status', hidden: true });
  private readonly mentions: MentionAutocomplete;
  private readonly sendQueue: SendQueue;

  private replyTo: Message | null = null;
  private editing: Message | null = null;
  private file: File | null = null;
  /** Slow mode: no send before this time (ms), and the countdown's timer. */
  private waitUntil = 0;
  private ticker: ReturnType<typeof setInterval> | undefined;
  /** The last refused send's explanation, until the next send. */
  private refusal = '';
  /** The picked file's preview in the banner, kept while the file stays picked. */
  private filePreview: (ReturnType<typeof filePreview> & { file: File }) | null = null;

  /** Typing signals go one after another, so a late "true" can never follow the "false" of a send. */
  private typingChain: Promise<unknown> = Promise.resolve();
  private typingSentAt = 0;
  private typingIdle: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly store: ChatStore,
    private readonly conversationId: number,
    private readonly hooks: ComposerHooks,
    /** A thread's composer: its messages are replies in the thread of this root (and send no typing signal). */
    private readonly threadId: number | null = null,
  ) {
    const key = (this.key = threadId ? 'thread' : 'composer');
    this.input.id = `${key}-input`;
    this.blockedNote.id = `${key}-note`;
    this.input.setAttribute('aria-describedby', `${key}-help`);
    this.fileInput.id = `${key}-file`;
    // Before the composer's own keydown handler: while the list is open, Enter chooses a person.
    this.mentions = new MentionAutocomplete(this.input, () =>
      (store.conversation(conversationId)?.participants_preview ?? []).filter((p) => p.id !== store.me.id).map((p) => ({ user: p, name: store.displayName(p) })),
    );
    this.sendQueue = new SendQueue(store.api, conversationId, threadId, {
      sent: (message, pending) => {
        pending.remove();
        hooks.sent(message);
        // A member of a group in slow mode waits that long before the next send.
        const conversation = store.conversation(conversationId);
        if (conversation?.slow_mode_s && store.myRole(conversation) === 'member') this.wait(conversation.slow_mode_s);
      },
      changed: () => hooks.changed(),
      refused: (err) => {
        const code = err instanceof ApiError ? err.code : '';
        // The refusal tells of a setting this page missed: take it in.
        if (code === 'slow_mode') {
          if (!store.conversation(conversationId)?.slow_mode_s) void store.refreshConversation(conversationId);
          this.wait((err as ApiError).retryAfter || 1);
        }
        if (code === 'frozen') store.patchConversation(conversationId, { frozen: true });
        this.refusal = REFUSALS[code] ?? '';
        this.renderState();
      },
    });
    this.build();
  }

  focus(): void {
    this.input.focus();
  }

  replyToMessage(message: Message): void {
    this.editing = null;
    this.replyTo = message;
    this.renderBanner();
    this.input.focus();
  }

  edit(message: Message): void {
    this.replyTo = null;
    this.editing = message;
    this.input.value = message.body ?? '';
    this.autosize();
    this.renderBanner();
    this.input.focus();
  }

  /** A message was deleted: no longer replied to or edited. */
  forget(messageId: number): void {
    if (this.replyTo?.id === messageId || this.editing?.id === messageId) this.reset();
  }

  destroy(): void {
    clearInterval(this.ticker);
    this.stopTyping();
    this.filePreview?.dispose();
  }

  /** Whether I may send now, and why not: a block either way (direct), a frozen group (a member), slow mode. */
  renderState(): void {
    const conversation = this.store.conversation(this.conversationId);
    const partner = conversation ? this.store.partner(conversation) : null;
    const blocked = partner !== null && !this.store.canMessage(partner.id);
    const member = this.store.myRole(conversation) === 'member';
    const frozen = !!conversation?.frozen && member;
    // Slow mode turned off (or I became an admin) ends the wait.
    const wait = conversation?.slow_mode_s && member ? Math.ceil((this.waitUntil - Date.now()) / 1000) : 0;
    if (wait <= 0) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    const note = blocked
      ? this.store.hasBlocked(partner.id)
        ? `You blocked ${this.store.displayName(partner)}. Unblock them to send messages.`
        : `You can’t message ${this.store.displayName(partner)}.`
      : frozen
        ? 'Only owners and admins can send messages while the group is frozen.'
        : wait > 0
          ? `Slow mode: you can send again in ${wait} s.`
          : this.refusal;
    // A member of a group in slow mode sees it before sending.
    const slow = conversation?.slow_mode_s && member ? ` (slow mode: ${slowModeLabel(conversation.slow_mode_s)})` : '';
    this.input.placeholder = `${this.threadId ? 'Reply in thread…' : 'Write a message…'}${slow}`;
    this.blockedNote.hidden = !note;
    this.blockedNote.textContent = note;
    // The countdown is said once (wait()), not every second.
    this.blockedNote.setAttribute('aria-live', note.startsWith('Slow') ? 'off' : 'polite');
    this.input.disabled = blocked || frozen;
    this.sendButton.disabled = blocked || frozen || (wait > 0 && !this.editing);
    this.fileInput.disabled = blocked || frozen;
  }

  /** Slow mode: the next send in this many seconds, counted down in the note. */
  private wait(seconds: number): void {
    this.waitUntil = Date.now() + seconds * 1000;
    this.ticker ??= setInterval(() => this.renderState(), 1000);
    this.renderState();
    announce(this.blockedNote.textContent ?? '');
  }

  // ---- input -----------------------------------------------------------------------------------------------

  private build(): void {
    const key = this.key;
    const attach = h('label', { for: `${key}-file`, className: 'attach', title: 'Attach a file' }, icon('paperclip'), h('span', { className: 'visually-hidden' }, 'Attach a file'));
    this.element.append(
      this.mentions.list,
      this.banner,
      this.blockedNote,
      h(
        'div',
        { className: 'composer-row' },
        this.fileInput,
        attach,
        h('label', { for: `${key}-input`, className: 'visually-hidden' }, this.threadId ? 'Reply' : 'Message'),
        this.input,
        this.sendButton,
      ),
      h('p', { id: `${key}-help`, className: 'visually-hidden' }, 'Enter sends, Shift+Enter adds a new line, Escape cancels a reply or an edit, Up edits your last message.'),
    );
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.element.requestSubmit();
      } else if (event.key === 'Escape' && (this.replyTo || this.editing || this.file)) {
        event.preventDefault();
        this.reset();
      } else if (event.key === 'ArrowUp' && this.input.value === '' && !this.editing) {
        // As in most chat apps: Up in an empty composer edits your last message.
        const last = this.hooks.lastOwnMessage();
        if (last) {
          event.preventDefault();
          this.edit(last);
        }
      }
    });
    this.input.addEventListener('input', () => {
      this.autosize();
      this.typed();
    });
    this.input.addEventListener('blur', () => this.stopTyping());
    this.fileInput.addEventListener('change', () => {
      this.file = this.fileInput.files?.[0] ?? null;
      this.renderBanner();
      this.input.focus();
    });
    this.element.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.submit();
    });
  }

  private autosize(): void {
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, 160)}px`;
  }

  /** Send: the message goes to the send queue and the composer is cleared and free for the next one at once. */
  private async submit(): Promise<void> {
    if (this.sendButton.disabled) return; // blocked, or an edit being saved
    const text = this.input.value.replace(/\s+$/, '');
    if (this.editing) return this.saveEdit(text);
    if (text.trim() === '' && !this.file) return;
    if (this.refusal) {
      this.refusal = '';
      this.renderState();
    }
    const pending = this.sendQueue.send(text.trim() === '' ? null : text, this.file, this.replyTo?.id ?? null, this.mentions.mentionedIds(text));
    this.mentions.reset();
    this.hooks.pending(pending);
    this.stopTyping();
    this.input.value = '';
    this.autosize();
    this.reset();
    this.input.focus();
  }

  private async saveEdit(text: string): Promise<void> {
    const message = this.editing!;
    if (text === (message.body ?? '')) return this.reset();
    this.sendButton.disabled = true;
    try {
      const { data } = await this.store.api.patch<{ data: Message }>(`/messages/${message.id}`, { body: text });
      this.hooks.sent(data);
      this.input.value = '';
      this.autosize();
      this.reset();
    } catch (err) {
      toast(describeError(err));
    } finally {
      this.sendButton.disabled = false;
      this.input.focus();
    }
  }

  private reset(): void {
    const wasEditing = this.editing !== null;
    this.replyTo = null;
    this.editing = null;
    this.file = null;
    this.fileInput.value = '';
    this.filePreview?.dispose();
    this.filePreview = null;
    if (wasEditing) {
      this.input.value = '';
      this.autosize();
    }
    this.renderBanner();
  }

  /** The picked file's preview, made once per file (an image preview holds an object URL until it is dropped). */
  private previewOf(file: File): HTMLElement {
    if (this.filePreview?.file !== file) {
      this.filePreview?.dispose();
      this.filePreview = { file, ...filePreview(file) };
    }
    return this.filePreview.element;
  }

  private renderBanner(): void {
    const cancel = h('button', { type: 'button', className: 'icon-button', 'aria-label': 'Cancel' }, '×');
    cancel.addEventListener('click', () => {
      this.reset();
      this.input.focus();
    });
    const parts: Node[] = [];
    if (this.editing) parts.push(h('span', {}, h('strong', {}, 'Editing message')));
    else if (this.replyTo) {
      const excerpt = truncate(this.replyTo.body ?? (this.replyTo.attachment ? `Attachment: ${this.replyTo.attachment.name}` : ''), 80);
      parts.push(h('span', {}, 'Replying to ', h('strong', {}, this.store.displayName(this.replyTo.sender)), ': ', h('span', { className: 'muted' }, excerpt)));
    }
    if (this.file) parts.push(this.previewOf(this.file));
    this.banner.hidden = parts.length === 0;
    this.banner.replaceChildren(...parts, ...(parts.length > 0 ? [cancel] : []));
    this.sendButton.textContent = this.editing ? 'Save' : 'Send';
  }

  // ---- my typing signal ------------------------------------------------------------------------------------

  private typed(): void {
    if (this.editing || this.threadId) return;
    if (this.input.value.trim() === '') return this.stopTyping();
    const now = Date.now();
    if (now - this.typingSentAt > TYPING_RENEW_MS) {
      this.typingSentAt = now;
      this.postTyping(true);
    }
    clearTimeout(this.typingIdle);
    this.typingIdle = setTimeout(() => this.stopTyping(), TYPING_IDLE_MS);
  }

  private stopTyping(): void {
    clearTimeout(this.typingIdle);
    if (!this.typingSentAt) return;
    this.typingSentAt = 0;
    this.postTyping(false);
  }

  private postTyping(isTyping: boolean): void {
    this.typingChain = this.typingChain.then(() => this.store.api.post(`/conversations/${this.conversationId}/typing`, { is_typing: isTyping })).catch(() => {});
  }
}
