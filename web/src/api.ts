// The HTTP API over fetch: bearer token, X-Socket-ID (so this tab gets no events for its own requests),
// JSON in and out, and every failure as an ApiError carrying the server's {message, code, errors}.

export const API_BASE = '/api/chat/v1';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: Record<string, string[]> = {},
    /** Retry-After in seconds (a 429), else 0. */
    readonly retryAfter = 0,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A sentence for people: the server's message, plus the field errors of a 422. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    // The server's message often is the one field message itself ("The body may be at most 10000 characters."):
    // then it is said once.
    const fields = Object.entries(err.errors)
      .map(([field, messages]) => [field, messages.filter((m) => !err.message.includes(m))] as const)
      .filter(([, messages]) => messages.length > 0)
      .map(([field, messages]) => `${field}: ${messages.join(', ')}`);
    return fields.length > 0 ? `${err.message} (${fields.join('; ')})` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

async function failure(response: Response): Promise<ApiError> {
  return errorFrom(response.status, response.statusText, await response.text().catch(() => ''), Number(response.headers.get('Retry-After')) || 0);
}

function errorFrom(status: number, statusText: string, text: string, retryAfter = 0): ApiError {
  let body: { message?: unknown; code?: unknown; errors?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    /* not JSON (a proxy's error page) */
  }
  const message = typeof body.message === 'string' ? body.message : `The server answered ${status} ${statusText}.`;
  const code = typeof body.code === 'string' ? body.code : 'http_error';
  const errors = body.errors && typeof body.errors === 'object' ? (body.errors as Record<string, string[]>) : {};
  return new ApiError(status, code, message, errors, retryAfter);
}

export interface Api {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  put<T>(path: string, body?: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  /** POST /attachments: one file as multipart/form-data; onProgress gets the fraction sent (0–1). */
  upload<T>(path: string, file: File, onProgress?: (fraction: number) => void): Promise<T>;
  /** An attachment's bytes (it needs the token, so no plain <img src>). */
  blob(url: string): Promise<Blob>;
  /** The offline signal from a closing page: keepalive lets it outlive the page. */
  goodbye(): void;
}

/** Requests without a user token (client-config, demo sign-in). */
export async function publicRequest<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(API_BASE + path, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'Cannot reach the chat server. Check your connection.');
  }
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

export function createApi(token: string, socketId: () => string | undefined, onUnauthenticated: (err: ApiError) => void): Api {
  async function request<T>(method: string, path: string, body?: BodyInit, contentType?: string): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
    const socket = socketId();
    if (socket) headers['X-Socket-ID'] = socket;
    if (contentType) headers['Content-Type'] = contentType; // never on a request without a body
    let response: Response;
    try {
      response = await fetch(path.startsWith('/') && !path.startsWith(API_BASE) ? API_BASE + path : path, { method, headers, body });
    } catch {
      throw new ApiError(0, 'network_error', 'Cannot reach the chat server. Check your connection.');
    }
    if (!response.ok) {
      const err = await failure(response);
      if (err.status === 401) onUnauthenticated(err);
      throw err;
    }
    if (response.status === 204) return null as T;
    return (await response.json()) as T;
  }

  const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));
  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, json(body), body === undefined ? undefined : 'application/json'),
    patch: (path, body) => request('PATCH', path, json(body), 'application/json'),
    put: (path, body) => request('PUT', path, json(body), body === undefined ? undefined : 'application/json'),
    delete: (path) => request('DELETE', path),
    // XMLHttpRequest, because fetch reports no upload progress.
    upload: (path, file, onProgress) =>
      new Promise((resolve, reject) => {
        const form = new FormData();
        form.append('file', file, file.name); // the browser sets the multipart boundary
        const xhr = new XMLHttpRequest();
        xhr.open('POST', API_BASE + path);
        xhr.setRequestHeader('Authorization', `Bearer ${token}`);
        const socket = socketId();
        if (socket) xhr.setRequestHeader('X-Socket-ID', socket);
        xhr.upload.addEventListener('progress', (event) => {
          if (event.lengthComputable) onProgress?.(event.loaded / event.total);
        });
        xhr.addEventListener('error', () => reject(new ApiError(0, 'network_error', 'Cannot reach the chat server. Check your connection.')));
        xhr.addEventListener('load', () => {
          if (xhr.status >= 200 && xhr.status < 300) {
            onProgress?.(1);
            resolve(JSON.parse(xhr.responseText) as never);
            return;
          }
          const err = errorFrom(xhr.status, xhr.statusText, xhr.responseText);
          if (err.status === 401) onUnauthenticated(err);
          reject(err);
        });
        xhr.send(form);
      }),
    async blob(url) {
      let response: Response;
      try {
        response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      } catch {
        throw new ApiError(0, 'network_error', 'Cannot reach the chat server. Check your connection.');
      }
      if (!response.ok) throw await failure(response);
      return response.blob();
    },
    goodbye() {
      void fetch(`${API_BASE}/presence/offline`, { method: 'POST', keepalive: true, headers: { Authorization: `Bearer ${token}` } }).catch(() => {});
    },
  };
}
