import { Resolver as AresResolver } from 'node:dns/promises';
import type { ResolvedAddress, Resolver } from './egress.ts';

/**
 * The webhook resolver: DNS queries through c-ares (`dns.promises.Resolver`), never `dns.lookup`.
 *
 * Why: `dns.lookup` runs getaddrinfo on libuv's thread pool (4 threads), which the store's file I/O shares.
 * A nameserver that does not answer holds each thread ~10 s per name, so a burst of execute calls naming
 * made-up callback hosts queued every fs call behind them and the whole service stopped answering (seen in
 * CI: 30 minutes without a reply). c-ares queries on the event loop with its own timeout, so a dead
 * resolver costs a socket, not a thread.
 *
 * What it does not do, on purpose: read /etc/hosts or apply resolv.conf search domains. A callback URL names
 * a public host by its full name; `localhost` (and `*.localhost`, RFC 6761) is answered here as loopback, so
 * the development allowance for a local receiver keeps working.
 */

export interface DnsResolverOptions {
  /** Nameservers ("ip" or "ip:port"); default: the system's (resolv.conf). */
  servers?: string[];
  /** Per-query timeout (default 2 s) and attempts per server (default 2). */
  timeoutMs?: number;
  tries?: number;
}

const LOOPBACK: readonly ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/** "The name does not exist" (NXDOMAIN) outranks "no record of this type" (NODATA); anything else is transient. */
const NXDOMAIN = 'ENOTFOUND';
const NODATA = 'ENODATA';

export function createDnsResolver(opts: DnsResolverOptions = {}): Resolver {
  const ares = new AresResolver({ timeout: opts.timeoutMs ?? 2_000, tries: opts.tries ?? 2 });
  if (opts.servers) ares.setServers(opts.servers);
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return [...LOOPBACK];
    const [v4, v6] = await Promise.allSettled([ares.resolve4(name), ares.resolve6(name)]);
    const found: ResolvedAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length > 0) return found;
    const errors = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as NodeJS.ErrnoException] : []));
    const nxdomain = errors.find((e) => e.code === NXDOMAIN);
    if (nxdomain) throw nxdomain;
    const transient = errors.find((e) => e.code !== NODATA);
    if (transient) throw transient;
    throw Object.assign(new Error(`${name} has no A or AAAA record`), { code: NODATA });
  };
}
