// Channel authorization signatures (Pusher "auth" strings).
// auth = "<app key>:" + hex(HMAC-SHA256(app secret, socket_id + ":" + channel_name)).
// Verification compares in constant time so a forger learns nothing from response timing.

import { createHmac, timingSafeEqual } from 'node:crypto';

const SOCKET_ID = /^\d+\.\d+$/;

export function isValidSocketId(socketId: string): boolean {
  return SOCKET_ID.test(socketId);
}

export function signChannel(secret: string, socketId: string, channelName: string): string {
  return createHmac('sha256', secret).update(`${socketId}:${channelName}`).digest('hex');
}

export function channelAuth(key: string, secret: string, socketId: string, channelName: string): string {
  return `${key}:${signChannel(secret, socketId, channelName)}`;
}

/**
 * What a signature covers: `socket_id:channel` for private channels, `socket_id:channel:channel_data` for
 * presence channels (channel_data exactly as the client sent it), `socket_id::user::user_data` for pusher:signin.
 */
export function signedString(socketId: string, channelName: string, channelData?: string): string {
  return channelData === undefined ? `${socketId}:${channelName}` : `${socketId}:${channelName}:${channelData}`;
}

/** The `auth` of a pusher:signin: "<key>:" + HMAC-SHA256(secret, "socket_id::user::user_data"). */
export function userAuth(key: string, secret: string, socketId: string, userData: string): string {
  return `${key}:${createHmac('sha256', secret).update(userSignedString(socketId, userData)).digest('hex')}`;
}

export function userSignedString(socketId: string, userData: string): string {
  return `${socketId}::user::${userData}`;
}

/** True when `auth` is exactly "<key>:" + HMAC-SHA256(secret, signed) — compared in constant time. */
export function verifyAuth(key: string, secret: string, signed: string, auth: string): boolean {
  const expected = Buffer.from(`${key}:${createHmac('sha256', secret).update(signed).digest('hex')}`);
  const given = Buffer.from(auth);
  // timingSafeEqual throws on different lengths; the length itself is public (key + 64 hex digits).
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** True when `auth` is exactly the auth string this app would have issued for this socket and channel. */
export function verifyChannelAuth(key: string, secret: string, socketId: string, channelName: string, auth: string, channelData?: string): boolean {
  return verifyAuth(key, secret, signedString(socketId, channelName, channelData), auth);
}
