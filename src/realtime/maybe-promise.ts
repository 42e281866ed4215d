// A value now or later: the memory parts of a node (presence, occupancy, authorizations) answer at once, so a
// node alone answers a subscribe in the same tick; the Redis parts answer with promises.

export type MaybePromise<T> = T | Promise<T>;

/**
 * Calls `then` with the value: at once for a plain value, once it resolves for a promise (`failed` on a
 * rejection). Returns the promise of that work, or undefined when it was done at once.
 */
export function whenSettled<T>(value: MaybePromise<T>, then: (value: T) => void, failed: (err: unknown) => void): Promise<void> | undefined {
  if (!(value instanceof Promise)) {
    then(value);
    return undefined;
  }
  return value.then(then, failed);
}
