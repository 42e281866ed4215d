// What a failed call throws: the API's error body (docs/api.md, "Errors") with the HTTP status, or a network
// failure (status 0, code 'network_error') when no answer came at all.

export class ParleyError extends Error {
  override readonly name = 'ParleyError';
  /** The HTTP status; 0 when the request got no answer (network failure). */
  readonly status: number;
  /** The API's error code (`validation_failed`, `not_found`, ...), or `network_error`. Program against it. */
  readonly code: string;
  /** On 422: each field's messages (dotted paths for nested fields). */
  readonly errors: Record<string, string[]> | undefined;
  /** Seconds from the Retry-After header (429, 503), when the server sent one. */
  readonly retryAfter: number | undefined;

  constructor(status: number, code: string, message: string, errors?: Record<string, string[]>, options?: { retryAfter?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.errors = errors;
    this.retryAfter = options?.retryAfter;
  }
}

/** A request that got no answer: the connection failed or was cut before the response came. */
export const isNetworkError = (err: unknown): err is ParleyError => err instanceof ParleyError && err.status === 0;
