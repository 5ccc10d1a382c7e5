import { describe, expect, it } from 'vitest';
import { createInMemoryRateLimiter } from '../ratelimit/index.ts';
import { clientKey, createDripLimits } from './limits.ts';

/** An EIP-55 example: upper- and lowercase letters. */
const A = '0x52908400098527886E0F7030069857D2E4169EE7';
const B = '0x2222222222222222222222222222222222222222';

/** Limits on an in-memory limiter whose clock the test moves. */
function limitsAt(perAddress: { burst: number; everySeconds: number }, perClient: { burst: number; everySeconds: number }) {
  const clock = { ms: 0 };
  const limits = createDripLimits(createInMemoryRateLimiter({ now: () => clock.ms }), { perAddress, perClient });
  return { clock, limits };
}

describe('drip limits', () => {
  it('per address and chain: a burst, then one drip per period; other chains and addresses have their own', async () => {
    const { clock, limits } = limitsAt({ burst: 2, everySeconds: 60 }, { burst: 100, everySeconds: 1 });
    expect(await limits.take('base', A, '10.0.0.1')).toEqual({ allowed: true });
    expect(await limits.take('base', A, '10.0.0.2')).toEqual({ allowed: true });
    // Asking from another client address changes nothing: the limit is the recipient's.
    expect(await limits.take('base', A, '10.0.0.3')).toEqual({ allowed: false, limit: 'address', retryAfterSeconds: 60 });
    expect(await limits.take('base', A.toLowerCase() as `0x${string}`, '10.0.0.3')).toMatchObject({ allowed: false, limit: 'address' });
    expect(await limits.take('ethereum', A, '10.0.0.1')).toEqual({ allowed: true });
    expect(await limits.take('base', B, '10.0.0.1')).toEqual({ allowed: true });
    clock.ms = 45_000;
    expect(await limits.take('base', A, '10.0.0.1')).toEqual({ allowed: false, limit: 'address', retryAfterSeconds: 15 });
    clock.ms = 60_000;
    expect(await limits.take('base', A, '10.0.0.1')).toEqual({ allowed: true });
    expect(await limits.take('base', A, '10.0.0.1')).toMatchObject({ allowed: false, limit: 'address' });
  });

  it('per client address: over every recipient and chain; a refused client spends no recipient’s drip', async () => {
    const { clock, limits } = limitsAt({ burst: 1, everySeconds: 3_600 }, { burst: 3, everySeconds: 120 });
    const addresses = Array.from({ length: 4 }, (_, i) => `0x${String(i + 1).padStart(40, '0')}` as const);
    expect(await limits.take('base', addresses[0]!, '192.0.2.7')).toEqual({ allowed: true });
    expect(await limits.take('ethereum', addresses[1]!, '192.0.2.7')).toEqual({ allowed: true });
    expect(await limits.take('arbitrum', addresses[2]!, '192.0.2.7')).toEqual({ allowed: true });
    expect(await limits.take('base', addresses[3]!, '192.0.2.7')).toEqual({ allowed: false, limit: 'client', retryAfterSeconds: 120 });
    // Another client may still fund addresses[3]: the refusal above did not take its drip.
    expect(await limits.take('base', addresses[3]!, '192.0.2.8')).toEqual({ allowed: true });
    clock.ms = 120_000;
    expect(await limits.take('arbitrum', addresses[0]!, '192.0.2.7')).toEqual({ allowed: true });
  });

  it('IPv6 clients share a bucket per /64; an IPv4-mapped address is the IPv4 address', async () => {
    const { limits } = limitsAt({ burst: 10, everySeconds: 1 }, { burst: 1, everySeconds: 600 });
    expect(await limits.take('base', A, '2001:db8:1:2::1')).toEqual({ allowed: true });
    expect(await limits.take('base', B, '2001:db8:1:2:ffff:eeee:dddd:cccc')).toMatchObject({ allowed: false, limit: 'client' });
    expect(await limits.take('base', B, '2001:db8:1:3::1')).toEqual({ allowed: true });
    expect(await limits.take('base', A, '198.51.100.4')).toEqual({ allowed: true });
    expect(await limits.take('base', B, '::ffff:198.51.100.4')).toMatchObject({ allowed: false, limit: 'client' });
  });
});

describe('clientKey', () => {
  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['::FFFF:203.0.113.9', '203.0.113.9'],
    ['2001:db8:0:0:1:2:3:4', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0000:abcd::1', '2001:db8:0:0::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s → %s', (ip, key) => {
    expect(clientKey(ip)).toBe(key);
  });
});
