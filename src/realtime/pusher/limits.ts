// What one client may take of a node: sockets per address (AddressCounts, keyed by clientAddress) and frames
// per socket (FrameAllowance). The channels per socket are counted by the handlers (handlers.ts).

import type { IncomingMessage } from 'node:http';
import { BlockList, isIP, isIPv6 } from 'node:net';

/**
 * A socket's allowance of inbound frames (text frames and WebSocket pings): a bucket of `burst` frames refilled
 * at `perSecond`. A frame beyond it is dropped; a client that goes on sending keeps spending, down to a debt of
 * `burst` frames, and a socket that reaches that debt (it sent another whole burst's worth while being told to
 * stop) is to be closed. Only slowing down below the rate earns the allowance back.
 */
export class FrameAllowance {
  private readonly perMs: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;
  private limited = false;

  constructor(perSecond: number, burst: number, now = performance.now()) {
    this.perMs = perSecond / 1000;
    this.burst = burst;
    this.tokens = burst;
    this.last = now;
  }

  /**
   * Counts one frame. `ok`: handle it. `dropped`: ignore it (`first`: the first of a run of dropped frames, the
   * one to tell the client about). `close`: the client went on far beyond the allowance.
   */
  take(now = performance.now()): { readonly verdict: 'ok' } | { readonly verdict: 'dropped'; readonly first: boolean } | { readonly verdict: 'close' } {
    this.tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.perMs);
    this.last = now;
    this.tokens--;
    if (this.tokens >= 0) {
      this.limited = false;
      return OK;
    }
    if (this.tokens <= -this.burst) return CLOSE;
    const first = !this.limited;
    this.limited = true;
    return first ? FIRST_DROPPED : DROPPED;
  }
}

const OK = { verdict: 'ok' } as const;
const CLOSE = { verdict: 'close' } as const;
const FIRST_DROPPED = { verdict: 'dropped', first: true } as const;
const DROPPED = { verdict: 'dropped', first: false } as const;

/** Open sockets per client address. */
export class AddressCounts {
  private readonly counts = new Map<string, number>();

  count(address: string): number {
    return this.counts.get(address) ?? 0;
  }

  add(address: string): void {
    this.counts.set(address, this.count(address) + 1);
  }

  remove(address: string): void {
    const left = this.count(address) - 1;
    if (left > 0) this.counts.set(address, left);
    else this.counts.delete(address);
  }
}

/**
 * How a node tells who opened a socket: the address that connected, or, when that is one of `trustedProxies`
 * (CHAT_TRUSTED_PROXIES: addresses and CIDR ranges), the client's address from X-Forwarded-For, read from the
 * right and skipping every trusted proxy (as the HTTP API reads it). `forwarded` says X-Forwarded-For was
 * there but not trusted: a proxy in front that is not listed.
 */
export function clientAddressResolver(trustedProxies: readonly string[]): (req: IncomingMessage) => { address: string; forwarded: boolean } {
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(bits), family);
  }
  const isTrusted = (address: string): boolean => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
  return (req) => {
    const peer = unmapped(req.socket.remoteAddress ?? '');
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((hop) => unmapped(hop.trim())).filter(Boolean);
    if (trustedProxies.length === 0 || !isTrusted(peer)) return { address: addressKey(peer), forwarded: hops.length > 0 };
    let address = peer;
    while (isTrusted(address) && hops.length > 0) address = hops.pop()!;
    return { address: addressKey(address), forwarded: false };
  };
}

function unmapped(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/** What sockets are counted by: an IPv4 address as it is, an IPv6 address by its /64, which one client usually has whole. */
export function addressKey(address: string): string {
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
