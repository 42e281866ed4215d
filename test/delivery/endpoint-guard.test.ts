// The push endpoint guard: which addresses Parley may POST a push to. An endpoint is a URL a user hands in, so
// every way of writing a loopback, private or otherwise non-public address must be refused, IPv6 forms
// included (an IPv4 address inside an IPv6 one, the same address written another way).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EndpointRefused, embeddedIpv4, ipv6Groups, isAllowedAddress, parseEndpoint, resolveEndpoint } from '../../src/delivery/web-push/endpoint-guard.js';

const noDns = async (): Promise<never> => {
  throw new Error('no DNS lookup expected for an IP literal');
};

describe('the push endpoint guard', () => {
  test('IPv6 literals that stand for loopback or private IPv4 addresses are refused, however they are written', async () => {
    for (const endpoint of [
      'https://[::127.0.0.1]/x', // IPv4-compatible (URL parsing makes it [::7f00:1])
      'https://[::7f00:1]/x',
      'https://[::ffff:0:7f00:1]/x', // IPv4-translated
      'https://[::ffff:127.0.0.1]/x', // IPv4-mapped
      'https://[::ffff:7f00:1]/x',
      'https://[0:0:0:0:0:ffff:7f00:1]/x',
      'https://[0000:0000:0000:0000:0000:ffff:0a00:0001]/x', // 10.0.0.1
      'https://[::ffff:0:a9fe:a9fe]/x', // 169.254.169.254, the cloud metadata address
      'https://[64:ff9b::a00:1]/x', // NAT64 of 10.0.0.1
      'https://[2002:7f00:1::1]/x', // 6to4 of 127.0.0.1
      'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x', // Teredo
      'https://[::]/x',
      'https://[::1]/x',
      'https://[0:0:0:0:0:0:0:1]/x',
      'https://[fd00::1]/x',
      'https://[fe80::1]/x',
    ]) {
      const url = parseEndpoint(endpoint, false);
      await assert.rejects(resolveEndpoint(url, false, noDns), EndpointRefused, endpoint);
    }
  });

  test('a DNS answer in any of those forms refuses the host', async () => {
    for (const address of ['::ffff:0:7f00:1', '::7f00:1', '::ffff:10.0.0.1', '2002:c0a8:101::1']) {
      await assert.rejects(resolveEndpoint(new URL('https://push.example/x'), false, async () => [{ address, family: 6 }]), EndpointRefused, address);
    }
  });

  test('public addresses pass, IPv6 ones and public IPv4 inside IPv6 too', async () => {
    for (const address of ['8.8.8.8', '2606:4700:4700::1111', '2a00:1450:4001:80b::200a', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      assert.equal(isAllowedAddress(address, false), true, address);
    }
    const url = parseEndpoint('https://[2606:4700:4700::1111]/x', false);
    assert.deepEqual(await resolveEndpoint(url, false, noDns), { address: '2606:4700:4700::1111', family: 6 });
  });

  test('with loopback allowed (development), ::1 and 127.0.0.1 in IPv6 form pass; private addresses still do not', () => {
    for (const address of ['::1', '::ffff:127.0.0.1', '127.0.0.1']) assert.equal(isAllowedAddress(address, true), true, address);
    for (const address of ['::ffff:10.0.0.1', 'fd00::1', '::7f00:1']) assert.equal(isAllowedAddress(address, true), false, address);
  });

  test('ipv6Groups and embeddedIpv4 read every way of writing an address', () => {
    assert.deepEqual(ipv6Groups('::127.0.0.1'), [0, 0, 0, 0, 0, 0, 0x7f00, 1]);
    assert.deepEqual(ipv6Groups('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(ipv6Groups('fe80::1%eth0'), [0xfe80, 0, 0, 0, 0, 0, 0, 1]);
    assert.equal(ipv6Groups('127.0.0.1'), null);
    assert.equal(embeddedIpv4('::ffff:0:7f00:1'), '127.0.0.1');
    assert.equal(embeddedIpv4('::FFFF:192.168.1.1'), '192.168.1.1');
    assert.equal(embeddedIpv4('2606:4700::1'), null);
  });
});
