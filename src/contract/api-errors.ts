// The API's errors (docs/api.md, "Errors"): every code it answers with and its HTTP status, the one list clients
// can rely on; and ChatError, the error that carries one of them up to the HTTP layer (http/error-handler.ts turns
// it into the answer). The Pusher protocol's own 4xxx codes stay with the protocol (realtime/pusher/errors.ts).
export const ERRORS = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  blocked: 403,
  forbidden_role: 403,
  not_sender: 403,
  not_participant: 403,
  /** v1.2: the user is banned from the group (adding them back), until unbanned or the ban's `until`. */
  banned: 403,
  /** v1.2: a frozen group, where only the owner and admins send. */
  frozen: 403,
  /** v1.2: the user is banned from the service (their tokens), or the person messaged is. */
  user_banned: 403,
  not_found: 404,
  /** Answered by the HTTP layer itself (http/timeouts.ts): a request that arrived too slowly. */
  request_timeout: 408,
  conflict: 409,
  /** v1.2: a 51st pinned message in a conversation, or an 11th pinned conversation in an inbox. */
  too_many_pins: 409,
  /** v1.2: a second report of the same message by the same user. */
  already_reported: 409,
  /** GET /sync with a cursor older than CHAT_SYNC_RETENTION_S: reload, then sync from a new cursor. */
  cursor_expired: 410,
  payload_too_large: 413,
  /** An upload that would take its uploader's attachments over CHAT_UPLOAD_QUOTA_BYTES. */
  quota_exceeded: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  /** v1.2: a message or edit containing a word of CHAT_BLOCKED_WORDS. */
  blocked_word: 422,
  rate_limited: 429,
  /** v1.2: a member sending again within the group's slow mode window (Retry-After says when they may). */
  slow_mode: 429,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERRORS;

export class ChatError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: { errors?: Record<string, string[]>; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.status = ERRORS[code];
  }
}

export const notFound = (what: string): ChatError => new ChatError('not_found', `${what} not found.`);
export const forbidden = (code: ErrorCode, message: string): ChatError => new ChatError(code, message);
export const invalid = (field: string, message: string): ChatError =>
  new ChatError('validation_failed', message, { errors: { [field]: [message] } });
