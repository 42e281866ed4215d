// What the HTTP auth endpoints give out (pusher-js's channelAuthorization and userAuthentication): signatures for
// the Pusher server the browsers connect to, the built-in one or an external one. On the built-in server the
// authorization is recorded in its ledger first, so the subscribe that follows finds whose it is on any node.
import type { AuthorizationLedger } from '../authorizations/authorizations.js';
import { channelAuth, userAuth } from './signature.js';

export interface PusherAuthorizer {
  /** Records (socket, channel) → userId in the ledger, if any, then returns the `auth` of the subscription. */
  authorizeChannel(socketId: string, channel: string, userId: string): Promise<string>;
  /** Signs a pusher:signin as userId: `user_data` is `{"id":"<user id>"}`. */
  authenticateUser(socketId: string, userId: string): { auth: string; user_data: string };
}

/** `credentials`: the app key and secret of the server the browsers connect to; `ledger`: the built-in server's. */
export function pusherAuthorizer(credentials: { readonly key: string; readonly secret: string }, ledger: AuthorizationLedger | undefined): PusherAuthorizer {
  const { key, secret } = credentials;
  return {
    async authorizeChannel(socketId, channel, userId) {
      // Recorded before the answer goes out, so the subscribe that follows finds it on any node.
      await ledger?.remember(socketId, channel, userId);
      return channelAuth(key, secret, socketId, channel);
    },
    authenticateUser(socketId, userId) {
      const userData = JSON.stringify({ id: userId });
      return { auth: userAuth(key, secret, socketId, userData), user_data: userData };
    },
  };
}
