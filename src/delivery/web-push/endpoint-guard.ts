// Which push endpoints Parley sends to. A subscription's endpoint is a URL the browser's user hands in, so
// without a guard anyone could make Parley POST to an internal service. An endpoint must be https (http only
// with CHAT_PUSH_ALLOW_HTTP) and its host must not be, or resolve to, a private, loopback, link-local or
// otherwise non-public address (loopback allowed with CHAT_PUSH_ALLOW_HTTP, for development and tests).
// Checked when the subscription is saved and again at every delivery, where the request then goes to the
// very address that was checked (no second DNS lookup an attacker could answer differently).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  // ::/96 holds ::, ::1 and the deprecated IPv4-compatible addresses (::a.b.c.d); 2001::/32 is Teredo, whose
  // IPv4 addresses are hidden (one of them inverted bit by bit); the other ranges that carry an IPv4 address
  // (::ffff:0:0/96, ::ffff:0:0:0/96, 64:ff9b::/96, 2002::/16) are judged by it, see embeddedIpv4.
  ['::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) NON_PUBLIC.addSubnet(net, bits, 'ipv6');

/**
 * An IPv6 address as its 8 groups of 16 bits, whatever way it is written (`::` anywhere, leading zeros, an IPv4
 * address in the last 32 bits: `::127.0.0.1`, `::ffff:0:7f00:1`); null when it is not one.
 */
export function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase().split('%')[0]!; // a zone (fe80::1%eth0) says where, not what
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(zeros).fill('0'), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}

const dotted = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 address stands for, by the ranges that carry one: IPv4-mapped (::ffff:a.b.c.d,
 * what a dual-stack socket connects to as IPv4), IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d)
 * and 6to4 (2002:AABB:CCDD::). Null for any other address.
 */
export function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (g === null) return null;
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && g[5] === 0xffff) return dotted(g[6]!, g[7]!); // ::ffff:0:0/96
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return dotted(g[6]!, g[7]!); // ::ffff:0:0:0/96
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return dotted(g[6]!, g[7]!); // 64:ff9b::/96
  if (g[0] === 0x2002) return dotted(g[1]!, g[2]!); // 2002::/16
  return null;
}

/**
 * Is this IP address one Parley may send pushes to (a public address)? IPv6 addresses are judged by their
 * value, not by how they are written, and one that carries an IPv4 address by that address.
 */
export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  const family = isIP(address);
  if (family === 4) {
    if (allowLoopback && LOOPBACK.check(address, 'ipv4')) return true;
    return !NON_PUBLIC.check(address, 'ipv4');
  }
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== null) return isAllowedAddress(v4, allowLoopback);
  const groups = ipv6Groups(address);
  if (groups === null) return false;
  const canonical = groups.map((g) => g.toString(16)).join(':'); // no zone, no dotted tail: what BlockList reads alike
  if (allowLoopback && LOOPBACK.check(canonical, 'ipv6')) return true;
  return !NON_PUBLIC.check(canonical, 'ipv6');
}

/** The endpoint may never be sent to (its form, or its address). */
export class EndpointRefused extends Error {}
/** The endpoint's host does not resolve now: refused on subscribe, retried at delivery (DNS may be away for a while). */
export class EndpointUnresolved extends Error {}

/** The endpoint as a URL when its form is acceptable; else EndpointRefused saying why. */
export function parseEndpoint(endpoint: string, allowHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new EndpointRefused('The endpoint must be an absolute URL.');
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw new EndpointRefused(allowHttp ? 'The endpoint must be an https or http URL.' : 'The endpoint must be an https URL.');
  }
  if (url.username !== '' || url.password !== '') throw new EndpointRefused('The endpoint may not carry a user name or password.');
  return url;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;
const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * The address to send to for the endpoint's host: the host itself when it is an IP address, else its DNS
 * answer, every address of which must be allowed (one private address among public ones refuses the host).
 */
export async function resolveEndpoint(url: URL, allowLoopback: boolean, resolver: Resolver = systemResolver): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await resolver(host);
    } catch {
      throw new EndpointUnresolved(`The endpoint's host ${host} does not resolve.`);
    }
    if (addresses.length === 0) throw new EndpointUnresolved(`The endpoint's host ${host} does not resolve.`);
  }
  const refused = addresses.find((a) => !isAllowedAddress(a.address, allowLoopback));
  if (refused) throw new EndpointRefused('The endpoint may not be a private, loopback or link-local address.');
  const first = addresses[0]!;
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
