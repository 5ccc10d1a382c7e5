import { isIPv4, isIPv6 } from 'node:net';
import type { Address } from 'viem';
import type { ChainName } from '../config/chains.ts';
import type { RateLimiter } from '../ratelimit/index.ts';
import { rateLimitOf, type DripLimitConfig } from './config.ts';

/** Which limit refused a drip: the recipient's (this address on this chain) or the caller's (its client address). */
export type DripLimitName = 'address' | 'client';

export type DripLimitDecision = { allowed: true } | { allowed: false; limit: DripLimitName; retryAfterSeconds: number };

export interface DripLimits {
  /** Takes one drip from the caller's bucket, then from the recipient's; refused by the first that is empty. */
  take(chain: ChainName, to: Address, clientIp: string): Promise<DripLimitDecision>;
}

/**
 * The bucket of a client address. An IPv6 host usually holds a whole /64 and can pick any address in it at
 * will, so IPv6 clients share one bucket per /64; IPv4 (also written as ::ffff:a.b.c.d) one per address.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/**
 * The faucet's two limits on the shared token buckets (src/ratelimit: in memory, or Redis when configured).
 * The caller's bucket is taken first: a client refused for asking too often spends no recipient's drip, while
 * one that spreads its requests over many addresses still meets its own limit.
 */
export function createDripLimits(limiter: RateLimiter, limits: { perAddress: DripLimitConfig; perClient: DripLimitConfig }): DripLimits {
  const perAddress = rateLimitOf(limits.perAddress);
  const perClient = rateLimitOf(limits.perClient);
  const refused = (limit: DripLimitName, retryAfterMs: number): DripLimitDecision => ({
    allowed: false,
    limit,
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
  });
  return {
    async take(chain, to, clientIp) {
      const client = await limiter.consume(`faucet:client:${clientKey(clientIp)}`, perClient);
      if (!client.allowed) return refused('client', client.retryAfterMs);
      const recipient = await limiter.consume(`faucet:address:${chain}:${to.toLowerCase()}`, perAddress);
      if (!recipient.allowed) return refused('address', recipient.retryAfterMs);
      return { allowed: true };
    },
  };
}
