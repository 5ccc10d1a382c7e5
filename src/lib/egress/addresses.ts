import { isIP } from 'node:net';

/**
 * Which destination addresses a webhook may never reach: anything that is not a public unicast address. A
 * callback_url is chosen by the caller, and the sender runs inside the deployment's network, so without this
 * a caller could make the service POST to its own cloud metadata endpoint, the Kubernetes API, Redis or any
 * internal service (SSRF). Checked on the parsed bytes, so no spelling of an address gets past it: IPv4-mapped
 * (`::ffff:127.0.0.1`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`) addresses are judged by the IPv4
 * address they carry.
 */
export type BlockedCategory =
  | 'loopback'
  | 'private'
  | 'link_local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'metadata'
  | 'reserved';

interface Range {
  bytes: number[];
  prefix: number;
  category: BlockedCategory;
}

const v4 = (cidr: string, category: BlockedCategory): Range => {
  const [addr, prefix] = cidr.split('/');
  return { bytes: addr!.split('.').map(Number), prefix: Number(prefix), category };
};
const v6 = (cidr: string, category: BlockedCategory): Range => {
  const [addr, prefix] = cidr.split('/');
  return { bytes: [...parseIp(addr!)!.bytes], prefix: Number(prefix), category };
};

const IPV4_BLOCKED: readonly Range[] = [
  v4('0.0.0.0/8', 'unspecified'), // "this network"; 0.0.0.0 reaches the local host on Linux
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'cgnat'), // shared address space; Alibaba Cloud's metadata (100.100.100.200) is in it
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link_local'), // 169.254.169.254: the AWS, GCP, Azure and OpenStack metadata service
  v4('168.63.129.16/32', 'metadata'), // Azure's wire server: a public address that only answers from inside
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'reserved'), // IETF protocol assignments (192.0.0.192: Oracle Cloud's metadata)
  v4('192.0.2.0/24', 'reserved'), // documentation (TEST-NET-1)
  v4('192.88.99.0/24', 'reserved'), // 6to4 relay anycast
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'reserved'), // benchmarking
  v4('198.51.100.0/24', 'reserved'), // documentation (TEST-NET-2)
  v4('203.0.113.0/24', 'reserved'), // documentation (TEST-NET-3)
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'), // reserved, and 255.255.255.255 broadcast
];

const IPV6_BLOCKED: readonly Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('::/96', 'reserved'), // IPv4-compatible (deprecated): no public use
  v6('64:ff9b:1::/48', 'reserved'), // local-use NAT64
  v6('100::/64', 'reserved'), // discard-only
  v6('2001::/32', 'reserved'), // Teredo: tunnels to whatever IPv4 address it encodes
  v6('2001:db8::/32', 'reserved'), // documentation
  v6('fc00::/7', 'private'), // unique local, fd00::/8 included (AWS's IPv6 metadata is fd00:ec2::254)
  v6('fe80::/10', 'link_local'),
  v6('fec0::/10', 'private'), // site-local (deprecated)
  v6('ff00::/8', 'multicast'),
];

/** IPv6 prefixes whose addresses stand for an IPv4 address: judged by that address. */
const IPV4_CARRIERS: readonly { bytes: number[]; prefix: number; offset: number }[] = [
  { bytes: [...parseIp('::ffff:0:0')!.bytes], prefix: 96, offset: 12 }, // IPv4-mapped
  { bytes: [...parseIp('64:ff9b::')!.bytes], prefix: 96, offset: 12 }, // NAT64 well-known prefix
  { bytes: [...parseIp('2002::')!.bytes], prefix: 16, offset: 2 }, // 6to4
];

export interface ParsedIp {
  family: 4 | 6;
  bytes: Uint8Array;
}

/** Parses an IPv4 or IPv6 address (a zone id such as `%eth0` is ignored); undefined for anything else. */
export function parseIp(text: string): ParsedIp | undefined {
  const address = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const bare = address.split('%')[0]!;
  const family = isIP(bare);
  if (family === 4) return { family: 4, bytes: Uint8Array.from(bare.split('.').map(Number)) };
  if (family !== 6) return undefined;
  let text6 = bare;
  const tail: number[] = [];
  const lastColon = text6.lastIndexOf(':');
  if (text6.slice(lastColon + 1).includes('.')) {
    tail.push(...text6.slice(lastColon + 1).split('.').map(Number));
    text6 = text6.slice(0, lastColon + 1) + '0:0';
  }
  const [head, rest] = text6.includes('::') ? text6.split('::') : [text6, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').filter((g) => g !== '').map((g) => parseInt(g, 16)) : []);
  const left = groups(head);
  const right = groups(rest);
  const all = rest === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  if (tail.length === 4) bytes.set(tail, 12);
  return { family: 6, bytes };
}

function inRange(bytes: Uint8Array, range: { bytes: number[]; prefix: number }): boolean {
  for (let bit = 0; bit < range.prefix; bit += 8) {
    const i = bit / 8;
    const take = Math.min(8, range.prefix - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[i]! & mask) !== (range.bytes[i]! & mask)) return false;
  }
  return true;
}

/**
 * Why a webhook may not be sent to `address`, or undefined when it is a public unicast address. Anything that
 * is not an IP address is refused as `reserved`: callers resolve names first.
 */
export function blockedCategory(address: string): BlockedCategory | undefined {
  const ip = parseIp(address);
  if (!ip) return 'reserved';
  if (ip.family === 4) return IPV4_BLOCKED.find((r) => inRange(ip.bytes, r))?.category;
  for (const carrier of IPV4_CARRIERS) {
    if (inRange(ip.bytes, carrier)) {
      const embedded = ip.bytes.slice(carrier.offset, carrier.offset + 4);
      return IPV4_BLOCKED.find((r) => inRange(embedded, r))?.category;
    }
  }
  return IPV6_BLOCKED.find((r) => inRange(ip.bytes, r))?.category;
}
