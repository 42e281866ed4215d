// Pusher protocol errors (https://pusher.com/docs/channels/library_auth_reference/pusher-websockets-protocol/#error-codes).
// The code's range is all the client goes by, so it is the one source of truth for
// whether the socket is closed: pusher-js maps the close code to "refused" (4000–4099),
// "backoff" (4100–4199) or "retry" (4200–4299); 4300–4399 are reported but leave the socket open.

import { encodeObjectFrame } from './frames.js';

export const PusherErrorCode = {
  /** Wrong app key in /app/{key}. */
  AppDoesNotExist: 4001,
  /** A path under /app/ that is not /app/{key}. */
  PathNotFound: 4005,
  /** `?protocol=` is not an integer. */
  InvalidVersionFormat: 4006,
  /** `?protocol=` outside the versions this server speaks. */
  UnsupportedProtocolVersion: 4007,
  /** The connection itself is not allowed: origin refused, sign-in failed, or terminated through the HTTP API. */
  Unauthorized: 4009,
  /** The server (or this socket's send buffer) is full: reconnect after a back-off. */
  OverCapacity: 4100,
  /** Reconnect now (server shutdown, restart). */
  Reconnect: 4200,
  /** We pinged and the client did not answer in time. */
  PongNotReceived: 4201,
  /** Any other error; the socket stays open. */
  Generic: 4300,
  /** A `client-*` event was refused (Pusher documents 4301 for rejected client events). */
  ClientEventRejected: 4301,
} as const;

export type PusherErrorCode = (typeof PusherErrorCode)[keyof typeof PusherErrorCode];

/** Codes below 4300 mean "this connection is over" in the Pusher protocol. */
export function isFatal(code: number): boolean {
  return code >= 4000 && code < 4300;
}

export class PusherError extends Error {
  readonly code: PusherErrorCode;

  constructor(code: PusherErrorCode, message: string) {
    super(message);
    this.name = 'PusherError';
    this.code = code;
  }

  get fatal(): boolean {
    return isFatal(this.code);
  }

  /** The one `pusher:error` frame this error becomes (`data` an object, as hosted Pusher sends it). */
  toFrame(): string {
    return encodeObjectFrame('pusher:error', { code: this.code, message: this.message });
  }
}
