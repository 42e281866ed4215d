// The HTTP half: JSON calls to /api/chat/v1 with the bearer token. A 401 asks a token function for a fresh token
// and tries once more; an error answer becomes a ParleyError.
import { ParleyError } from './errors.js';

export type TokenSource = string | (() => string | Promise<string>);
export type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  /** A plain object is sent as JSON; FormData, Blob and other bodies as they are. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** No answer within this many ms counts as no answer at all (a ParleyError with status 0). */
  timeoutMs?: number;
}

export const API_PATH = '/api/chat/v1';

export class Http {
  private token: Promise<string> | null = null;

  constructor(
    readonly baseUrl: string,
    private readonly tokenSource: TokenSource,
    private readonly fetchImpl: typeof fetch,
    /** Headers every request carries (X-Socket-ID when the client leaves out its own socket). */
    private readonly extraHeaders: () => Record<string, string> = () => ({}),
  ) {}

  /** The current token (asked for once, then again only after a 401). */
  currentToken(): Promise<string> {
    if (!this.token) {
      const source = this.tokenSource;
      const token = Promise.resolve().then(() => (typeof source === 'function' ? source() : source));
      this.token = token;
      // A token function that failed is asked again by the next call.
      token.catch(() => this.token === token && (this.token = null));
    }
    return this.token;
  }

  /** `path` below /api/chat/v1 (e.g. `/conversations`); resolves the parsed JSON body (undefined for 204). */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { body } = options;
    const json = body !== undefined && body !== null && Object.getPrototypeOf(body) === Object.prototype;
    const headers: Record<string, string> = { Accept: 'application/json', ...(json ? { 'Content-Type': 'application/json' } : {}), ...options.headers };
    const timeout = options.timeoutMs === undefined ? null : AbortSignal.timeout(options.timeoutMs);
    const signal = timeout && options.signal ? AbortSignal.any([options.signal, timeout]) : (timeout ?? options.signal);
    const init = { method, headers, body: json ? JSON.stringify(body) : (body as BodyInit | undefined), signal };
    try {
      return read<T>(await this.fetch(this.url(path, options.query), init));
    } catch (err) {
      if (!timeout?.aborted || options.signal?.aborted) throw err;
      throw new ParleyError(0, 'network_error', `${method} ${path}: no answer within ${options.timeoutMs} ms`, undefined, { cause: err });
    }
  }

  /**
   * fetch with the bearer token: a 401 asks a token function for a new token and tries once more. Any answer is
   * returned as it came; no answer at all throws a ParleyError with status 0.
   */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const used = await this.currentToken();
    let response = await this.send(url, init, used);
    if (response.status === 401 && typeof this.tokenSource === 'function') {
      // Another call may have refreshed already: only ask again if the token that failed is still current.
      if ((await this.currentToken()) === used) this.token = null;
      await response.body?.cancel();
      response = await this.send(url, init, await this.currentToken());
    }
    return response;
  }

  private async send(url: string, init: RequestInit, token: string): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.extraHeaders())) if (!headers.has(name)) headers.set(name, value);
    headers.set('Authorization', `Bearer ${token}`);
    try {
      return await this.fetchImpl(url, { ...init, headers });
    } catch (err) {
      if (init.signal?.aborted) throw err; // the caller's abort, or a timeout request() reports itself
      const what = `${init.method ?? 'GET'} ${url.replace(this.baseUrl, '')}`;
      throw new ParleyError(0, 'network_error', `${what}: no answer (${err instanceof Error ? err.message : String(err)})`, undefined, { cause: err });
    }
  }

  url(path: string, query?: Query): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null) params.set(key, String(value));
    const search = params.toString();
    return `${this.baseUrl}${API_PATH}${path}${search ? `?${search}` : ''}`;
  }
}

async function read<T>(response: Response): Promise<T> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return parsed as T;
  const error = (parsed ?? {}) as { message?: string; code?: string; errors?: Record<string, string[]> };
  const retryAfter = Number(response.headers.get('Retry-After') ?? NaN);
  throw new ParleyError(response.status, error.code ?? 'http_error', error.message ?? `HTTP ${response.status}`, error.errors, {
    retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined,
  });
}
