// client_message_id for a send (docs/api.md: 1-100 characters, the sender's idempotency key).

export function newClientMessageId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  // Without randomUUID (an insecure browser context): time plus randomness is unique enough for one sender.
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
}

/** The user id a Parley token is for: its `sub` claim (docs/api.md, Authentication). */
export function userIdOfToken(token: string): number {
  const payload = token.split('.')[1] ?? '';
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(payload.length / 4) * 4, '='));
    const sub = Number((JSON.parse(json) as { sub?: unknown }).sub);
    if (Number.isSafeInteger(sub) && sub > 0) return sub;
  } catch {
    // falls through to the error below
  }
  throw new Error('The token is not a Parley user token (no numeric `sub`): pass userId to ParleyClient');
}
