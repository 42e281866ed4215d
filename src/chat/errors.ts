// The error the chat raises: one of the API's error codes (contract/error-codes.ts), whose HTTP status it carries,
// with a message and, for invalid input, the fields at fault. http/errors.ts turns it into the answer.
import { ERRORS, type ErrorCode } from '../contract/error-codes.js';

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
