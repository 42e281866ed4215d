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
  ['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) NON_PUBLIC.addSubnet(net, bits, 'ipv6');

/** An IPv6 address that carries an IPv4 one (::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d): the IPv4 address. */
function embeddedIpv4(address: string): string | null {
  const m = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return m[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Is this IP address one Parley may send pushes to? */
export function isAllowedAddress(address: string, allowLoopback: boolean): boolean {
  const v4 = isIP(address) === 6 ? embeddedIpv4(address) : null;
  if (v4 !== null) return isAllowedAddress(v4, allowLoopback);
  const family = isIP(address) === 4 ? 'ipv4' : isIP(address) === 6 ? 'ipv6' : null;
  if (family === null) return false;
  if (allowLoopback && LOOPBACK.check(address, family)) return true;
  return !NON_PUBLIC.check(address, family);
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
