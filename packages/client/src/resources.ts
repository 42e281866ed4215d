// The typed calls of docs/api.md that the client names: conversations and messages. Everything else is
// reachable through `chat.request` (same auth, errors and token refresh).
import { isNetworkError, ParleyError } from './errors.js';
import type { ConversationView, HistoryItem, InboxPage, MessageResource, PageMeta } from './generated/contract.js';
import type { paths } from './generated/openapi.js';
import type { Http } from './http.js';
import { newClientMessageId } from './ids.js';

/** The body of POST /conversations/{id}/messages, as docs/openapi.json says it. */
export type SendMessageInput = NonNullable<paths['/api/chat/v1/conversations/{id}/messages']['post']['requestBody']>['content']['application/json'];

export interface InboxOptions {
  /** `meta.next_cursor` of the page before. */
  cursor?: string;
  /** 1-100, default 30. */
  limit?: number;
  /** true: the archived conversations instead. */
  archived?: boolean;
}

export interface HistoryOptions {
  before?: number;
  after?: number;
  /** 1-100, default 50. */
  limit?: number;
}

export interface HistoryPage {
  data: HistoryItem[];
  meta: PageMeta;
}

export function conversationsApi(http: Http, onInbox: (page: InboxPage, options: InboxOptions) => void) {
  return {
    /** GET /conversations: the inbox, newest activity first (pinned ones first). */
    async list(options: InboxOptions = {}): Promise<InboxPage> {
      const page = await http.request<InboxPage>('GET', '/conversations', { query: { ...options } });
      onInbox(page, options);
      return page;
    },
    /** GET /conversations/{id}: one conversation as the caller sees it. */
    async get(conversationId: number): Promise<ConversationView> {
      return (await http.request<{ data: ConversationView }>('GET', `/conversations/${conversationId}`)).data;
    },
    /** POST /conversations: the direct conversation with a user, created if there is none. */
    async openDirect(userId: number): Promise<ConversationView> {
      return (await http.request<{ data: ConversationView }>('POST', '/conversations', { body: { user_id: userId } })).data;
    },
  };
}

/** Waits between the tries of a send whose answer did not come (ms). */
const SEND_RETRY_DELAYS = [250, 1_000, 3_000];

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `sendTimeoutMs`: how long one try of a send may wait for its answer before it counts as lost. */
export function messagesApi(http: Http, sendTimeoutMs = 15_000) {
  return {
    /** GET /conversations/{id}/messages: a page of history, newest first (before or after a message id). */
    list(conversationId: number, options: HistoryOptions = {}): Promise<HistoryPage> {
      return http.request<HistoryPage>('GET', `/conversations/${conversationId}/messages`, { query: { ...options } });
    },
    /**
     * POST /conversations/{id}/messages. The message gets a client_message_id (yours if you pass one), and a try
     * that got no answer (within sendTimeoutMs), or a 503, is made again with the same id: the server stores it
     * once (docs/api.md, send). Up to 4 tries.
     */
    async send(conversationId: number, input: SendMessageInput): Promise<MessageResource> {
      const body = { ...input, client_message_id: input.client_message_id ?? newClientMessageId() };
      for (let attempt = 0; ; attempt++) {
        try {
          const path = `/conversations/${conversationId}/messages`;
          return (await http.request<{ data: MessageResource }>('POST', path, { body, timeoutMs: sendTimeoutMs })).data;
        } catch (err) {
          const retriable = isNetworkError(err) || (err instanceof ParleyError && err.status === 503);
          if (!retriable || attempt >= SEND_RETRY_DELAYS.length) throw err;
          await sleep(SEND_RETRY_DELAYS[attempt]!);
        }
      }
    },
    /** PATCH /messages/{id}: the sender edits the body. */
    async edit(messageId: number, body: string): Promise<MessageResource> {
      return (await http.request<{ data: MessageResource }>('PATCH', `/messages/${messageId}`, { body: { body } })).data;
    },
    /** DELETE /messages/{id}: for everyone, or `{ forMe: true }` hidden for the caller alone. */
    async delete(messageId: number, options: { forMe?: boolean } = {}): Promise<void> {
      await http.request<void>('DELETE', `/messages/${messageId}`, { query: { for: options.forMe ? 'me' : undefined } });
    },
  };
}
