// The HTTP API through @parley/client (docs/client-sdk.md): the views' short calls (`api.get('/blocks')`) go
// to `chat.request`, with X-Socket-ID (so this tab gets no events for its own requests); every failure is a
// ParleyError carrying the server's {message, code, errors}, and a 401 signs out.
import { ParleyError, type MessageResource, type ParleyClient, type SendMessageInput } from '@parley/client';

export { ParleyError as ApiError };
export const API_BASE = '/api/chat/v1';

/** A sentence for people: the server's message, plus the field errors of a 422. */
export function describeError(err: unknown): string {
  if (err instanceof ParleyError) {
    if (err.status === 0) return 'Cannot reach the chat server. Check your connection.';
    // The server's message often is the one field message itself ("The body may be at most 10000 characters."):
    // then it is said once.
    const fields = Object.entries(err.errors ?? {})
      .map(([field, messages]) => [field, messages.filter((m) => !err.message.includes(m))] as const)
      .filter(([, messages]) => messages.length > 0)
      .map(([field, messages]) => `${field}: ${messages.join(', ')}`);
    return fields.length > 0 ? `${err.message} (${fields.join('; ')})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export interface Api {
  /** The client underneath, for its typed calls (conversations, messages) and its events. */
  readonly chat: ParleyClient;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  put<T>(path: string, body?: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  /** POST /attachments: one file as multipart/form-data. */
  upload<T>(path: string, file: File): Promise<T>;
  /** POST /conversations/{id}/messages through the client's send: a lost answer is tried again with the same client_message_id. */
  send(conversationId: number, input: SendMessageInput): Promise<MessageResource>;
  /** An attachment's bytes (it needs the token, so no plain <img src>). */
  blob(url: string): Promise<Blob>;
  /** The offline signal from a closing page: keepalive lets it outlive the page. */
  goodbye(): void;
}

/**
 * Requests without a user token (client-config, demo sign-in): the web client's own helpers beside the chat
 * API (docs/web-client.md), so plain fetch; failures as ParleyError all the same.
 */
export async function publicRequest<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(API_BASE + path, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).catch(() => {
    throw new ParleyError(0, 'network_error', '');
  });
  const answer = (await response.json().catch(() => ({}))) as { message?: string; code?: string; errors?: Record<string, string[]> };
  if (!response.ok) throw new ParleyError(response.status, answer.code ?? 'http_error', answer.message ?? `The server answered ${response.status}.`, answer.errors);
  return answer as T;
}

export function createApi(chat: ParleyClient, onUnauthenticated: (err: ParleyError) => void): Api {
  // The client sends X-Socket-ID itself (excludeOwnSocket, set in app.ts).
  const signOutOn401 = <T>(call: Promise<T>): Promise<T> =>
    call.catch((err: unknown) => {
      if (err instanceof ParleyError && err.status === 401) onUnauthenticated(err);
      throw err;
    });
  const request = <T>(method: string, path: string, body?: unknown): Promise<T> => signOutOn401(chat.request<T>(method, path, { body }));

  return {
    chat,
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body),
    patch: (path, body) => request('PATCH', path, body),
    put: (path, body) => request('PUT', path, body),
    delete: (path) => request('DELETE', path),
    send: (conversationId, input) => signOutOn401(chat.messages.send(conversationId, input)),
    upload(path, file) {
      const form = new FormData();
      form.append('file', file, file.name); // the browser sets the multipart boundary
      return request('POST', path, form);
    },
    // What the client's JSON calls do not give: a response's bytes, and a request that outlives the page.
    async blob(url) {
      const response = await chat.fetch(url);
      if (!response.ok) throw new ParleyError(response.status, 'http_error', `The server answered ${response.status}.`);
      return response.blob();
    },
    goodbye() {
      void chat.fetch(`${API_BASE}/presence/offline`, { method: 'POST', keepalive: true }).catch(() => {});
    },
  };
}
