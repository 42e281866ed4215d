// A group's avatar URL is set by any owner or admin and shown to every member: their clients load it as an image.
// So it must be a URL a browser can only fetch from the public web: http or https (never javascript:, data:,
// file: or another scheme a client might act on), without credentials, and whose host is not one of the
// addresses every network keeps for itself (loopback, private and link-local ranges, localhost, or a name of
// one label such as `router`, which only resolves inside a network). Names are not resolved here: what a
// public name points at is for the viewer's network to decide, as for any image on the web.
import { isIP } from 'node:net';
import { isAllowedAddress } from '../delivery/web-push/endpoint-guard.js';
import { invalid } from '../contract/api-errors.js';

/** Refuses (422 on `field`) an avatar URL a client should not load; null (no avatar) and undefined (unchanged) pass. */
export function checkAvatarUrl(value: string | null | undefined, field = 'avatar_url'): void {
  if (value === null || value === undefined) return;
  const refuse = (why: string) => invalid(field, `The avatar URL ${why}.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('must be an absolute http or https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse('must be an http or https URL');
  if (url.username !== '' || url.password !== '') throw refuse('may not carry a user name or password');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    if (!isAllowedAddress(host, false)) throw refuse('may not point at a private, loopback or link-local address');
    return;
  }
  const name = host.replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || !name.includes('.')) throw refuse('must name a public host');
}
