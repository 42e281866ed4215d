// Pending authorizations kept where the socket is: when the HTTP auth request reaches the node that holds the socket
// (one node, a sticky load balancer, or by chance), the authorization stays in that node's memory and the subscribe
// that follows claims it there, with no Redis command either way (a reconnect storm's thousands of subscriptions
// each cost two). Only an authorization for another node's socket goes to the shared ledger. Voiding a user's
// authorizations (unsubscribeUser, which every node carries out) clears both.
import type { MaybePromise } from '../maybe-promise.js';
import type { AuthorizationLedger } from './authorizations.js';
import { MemoryAuthorizationLedger } from './memory.js';

/** `isHere(socketId)`: is this socket connected to this node? */
export function localFirstLedger(shared: AuthorizationLedger, isHere: (socketId: string) => boolean, ttlMs: number): AuthorizationLedger & { readonly localSize: number } {
  const local = new MemoryAuthorizationLedger(ttlMs);
  return {
    remember(socketId, channel, userId) {
      return isHere(socketId) ? local.remember(socketId, channel, userId) : shared.remember(socketId, channel, userId);
    },
    claim(socketId, channel): MaybePromise<string | undefined> {
      return local.claim(socketId, channel) ?? shared.claim(socketId, channel);
    },
    forgetUser(channel, userId) {
      local.forgetUser(channel, userId);
      return shared.forgetUser(channel, userId);
    },
    clear() {
      local.clear();
      shared.clear();
    },
    get localSize() {
      return local.size;
    },
  };
}
