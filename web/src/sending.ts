// Optimistic sends. Submitting hands the message to this queue and frees the composer at once: the message
// shows at the end of the list as "Sending…", the queue posts one message at a time (so they arrive in the
// order typed), and the server's answer replaces it ("sent"), matched by its client_message_id. A failed send
// stays as "Failed" with a Retry button; a retry keeps the same client_message_id, so it is never posted twice.
import { describeError } from './api.js';
import type { Api } from './api.js';
import { filePreview } from './attachments.js';
import { newClientMessageId } from '@parley/client';
import { h } from './dom.js';
import type { Message } from './types.js';

export interface Outgoing {
  clientMessageId: string;
  body: string | null;
  file: File | null;
  /** Set once the file is uploaded, so a retry does not upload it again. */
  attachmentId: number | null;
  replyToId: number | null;
  mentionedUserIds: number[];
  state: 'sending' | 'failed';
  element: HTMLLIElement;
  /** The file's preview (an image thumbnail from the local file, or a chip), made once. */
  preview: ReturnType<typeof filePreview> | null;
}

export interface SendQueueHooks {
  /** The server's answer: show it in place of the pending element. */
  sent(message: Message, pending: HTMLElement): void;
  /** The pending element changed (added, failed, retried): keep the list scrolled. */
  changed(pending: HTMLElement): void;
  /** The server refused a send (slow mode, a frozen group, a blocked word…). */
  refused(err: unknown): void;
}

export class SendQueue {
  private readonly queue: Outgoing[] = [];
  private running = false;

  constructor(
    private readonly api: Api,
    private readonly conversationId: number,
    /** A thread's root: every message is a reply in it. */
    private readonly threadId: number | null,
    private readonly hooks: SendQueueHooks,
  ) {}

  /** Queues a message and returns its pending element (to be placed at the end of the list). */
  send(body: string | null, file: File | null, replyToId: number | null, mentionedUserIds: number[] = []): HTMLLIElement {
    const outgoing: Outgoing = {
      clientMessageId: newClientMessageId(),
      body,
      file,
      attachmentId: null,
      replyToId,
      mentionedUserIds,
      state: 'sending',
      element: h('li'),
      preview: file ? filePreview(file) : null,
    };
    this.render(outgoing);
    this.queue.push(outgoing);
    void this.run();
    return outgoing.element;
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) await this.post(next);
    } finally {
      this.running = false;
    }
  }

  private async post(outgoing: Outgoing): Promise<void> {
    try {
      if (outgoing.file && outgoing.attachmentId === null) {
        const { data } = await this.api.upload<{ data: { id: number } }>('/attachments', outgoing.file);
        outgoing.attachmentId = data.id;
      }
      // The client tries again with the same client_message_id when an answer is lost: never sent twice.
      const message: Message = await this.api.send(this.conversationId, {
        body: outgoing.body,
        attachment_id: outgoing.attachmentId,
        reply_to_id: outgoing.replyToId,
        client_message_id: outgoing.clientMessageId,
        ...(this.threadId ? { thread_id: this.threadId } : {}),
        ...(outgoing.mentionedUserIds.length > 0 ? { mentioned_user_ids: outgoing.mentionedUserIds } : {}),
      });
      outgoing.preview?.dispose();
      // The answer is a MessageResource, without mentioned_user_ids: they are the ones sent.
      this.hooks.sent({ ...message, mentioned_user_ids: message.mentioned_user_ids ?? outgoing.mentionedUserIds }, outgoing.element);
    } catch (err) {
      outgoing.state = 'failed';
      this.render(outgoing, describeError(err));
      this.hooks.changed(outgoing.element);
      this.hooks.refused(err);
    }
  }

  private render(outgoing: Outgoing, error = ''): void {
    const bubble = h('div', { className: 'bubble' });
    if (outgoing.file && outgoing.preview) {
      bubble.append(h('p', { className: 'pending-file' }, outgoing.preview.element));
      const uploading = outgoing.state === 'sending' && outgoing.attachmentId === null;
      // A bar without a fraction (fetch reports no upload progress) until the file is stored.
      if (uploading) bubble.append(h('progress', { className: 'upload-progress', 'aria-label': `Uploading ${outgoing.file.name}` }));
    }
    if (outgoing.body) bubble.append(h('p', { className: 'body' }, outgoing.body));
    const status = h('p', { className: 'meta send-state', role: outgoing.state === 'failed' ? 'alert' : null }, outgoing.state === 'sending' ? 'Sending…' : `Failed${error ? `: ${error}` : ''} — `);
    if (outgoing.state === 'failed') {
      const retry = h('button', { type: 'button', className: 'link-button retry' }, 'Retry');
      retry.addEventListener('click', () => {
        outgoing.state = 'sending';
        this.render(outgoing);
        this.hooks.changed(outgoing.element);
        this.queue.push(outgoing);
        void this.run();
      });
      status.append(retry);
    }
    bubble.append(status);
    const element = outgoing.element;
    element.className = 'message mine pending';
    element.dataset.clientMessageId = outgoing.clientMessageId;
    element.dataset.state = outgoing.state;
    element.replaceChildren(bubble);
  }
}
