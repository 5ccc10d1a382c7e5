import { describe, expect, it } from 'vitest';
import { blockedCategory, parseIp } from './addresses.ts';

describe('blockedCategory', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['169.254.169.254', 'link_local'],
    ['168.63.129.16', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link_local'],
    ['fd00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['fc00::1', 'private'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['ff02::1', 'multicast'],
    ['64:ff9b::a9fe:a9fe', 'link_local'], // NAT64 of 169.254.169.254
    ['2002:7f00:1::', 'loopback'], // 6to4 of 127.0.0.1
    ['2001:db8::1', 'reserved'],
    ['::127.0.0.1', 'reserved'], // IPv4-compatible
    ['not an address', 'reserved'],
  ])('%s is refused as %s', (address, category) => {
    expect(blockedCategory(address)).toBe(category);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '169.253.255.255', '2606:4700::1111', '::ffff:93.184.216.34', '64:ff9b::808:808', '2002:5db8:d822::'])(
    '%s is public',
    (address) => {
      expect(blockedCategory(address)).toBeUndefined();
    },
  );

  it('parses IPv6 spellings to the same bytes', () => {
    const a = parseIp('0:0:0:0:0:ffff:7f00:1')!.bytes;
    for (const s of ['::ffff:7f00:1', '::ffff:127.0.0.1', '[::ffff:127.0.0.1]', '::FFFF:7F00:0001']) expect(parseIp(s)!.bytes).toEqual(a);
    expect(parseIp('1.2.3')).toBeUndefined();
  });
});
