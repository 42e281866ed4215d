// pusher:signin (user authentication): the app's server signs `socket_id::user::user_data` and the client
// sends {auth, user_data}. A signed-in socket receives what is sent to `#server-to-user-{id}` (a channel no
// client can subscribe to by name) and can be closed through the HTTP API's terminate_connections.
// A bad sign-in closes the socket with 4009, as Pusher does. A connection is one user's: signing in again as
// the same user is answered again, as a different user it is a failed sign-in (4009, closed), never a move
// of the socket to another user's channel. pusher:signin_success carries `data` as an object, as on Pusher.

import type { ChannelRegistry } from '../channels.js';
import type { Connection } from './connection.js';
import { PusherError, PusherErrorCode } from './errors.js';
import { MAX_DATA_DEPTH, encodeObjectFrame, stringField, tooDeep, type ClientFrame } from './frames.js';
import { userSignedString, verifyAuth } from './signature.js';

export const SERVER_TO_USER_PREFIX = '#server-to-user-';

export function serverToUserChannel(userId: string): string {
  return `${SERVER_TO_USER_PREFIX}${userId}`;
}

interface Context {
  readonly appKey: string;
  readonly appSecret: string;
  readonly registry: ChannelRegistry;
}

export function handleSignin(ctx: Context, conn: Connection, frame: ClientFrame): void {
  const auth = stringField(frame.data, 'auth');
  const userData = stringField(frame.data, 'user_data');
  const refuse = (reason: string): void => conn.fail(new PusherError(PusherErrorCode.Unauthorized, reason));
  if (auth === undefined || userData === undefined) return refuse('pusher:signin needs data.auth and data.user_data');
  if (!verifyAuth(ctx.appKey, ctx.appSecret, userSignedString(conn.id, userData), auth)) return refuse('Invalid signin signature');
  const user = userOf(userData);
  if (user === undefined) return refuse('user_data must be a JSON object with a non-empty string id');
  const userId = user.id;

  if (conn.signedInUserId !== undefined && conn.signedInUserId !== userId) {
    return refuse('This connection is already signed in as another user');
  }
  if (conn.signedInUserId === undefined) {
    conn.signedInUserId = userId;
    conn.signedInUserInfo = user.info;
    ctx.registry.subscribe(conn, serverToUserChannel(userId), userId);
  }
  conn.send(encodeObjectFrame('pusher:signin_success', { user_data: userData }));
}

/** user_data's id, and its user_info (a presence member's info when a channel is joined without channel_data). */
function userOf(userData: string): { id: string; info: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(userData);
    const { id, user_info: info } = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
    if (tooDeep(info, MAX_DATA_DEPTH)) return undefined;
    return typeof id === 'string' && id !== '' && id.length <= 128 ? { id, info: info ?? null } : undefined;
  } catch {
    return undefined;
  }
}
