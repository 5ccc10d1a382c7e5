import { describe, expect, it } from 'vitest';
import type { TokenConfig } from '../config/chainConfig.ts';
import { gasCostMicroUsd, microToUsd, price, quoteTokens, rawTokenAmount, usdToMicro } from './pricing.ts';

const token = (symbol: TokenConfig['symbol'], acceptedForPayment = true, decimals = 6): TokenConfig => ({
  symbol,
  address: `0x${symbol === 'USDC' ? '11' : symbol === 'USDT' ? '22' : '33'}${'00'.repeat(19)}`,
  decimals,
  acceptedForPayment,
});

describe('pricing', () => {
  it('reads configured USD amounts exactly, rounding anything below a micro-dollar up', () => {
    expect(usdToMicro(0.1)).toBe(100_000n);
    expect(usdToMicro(3000)).toBe(3_000_000_000n);
    expect(usdToMicro(0.0000001)).toBe(1n);
    expect(usdToMicro(0)).toBe(0n);
    expect(() => usdToMicro(-1)).toThrow(RangeError);
  });

  it('prices gas as gas × fee per gas × the native price, rounded up', () => {
    // 100k gas at 2 gwei = 2e14 wei = 0.0002 ETH, at 3000 USD = 0.6 USD.
    expect(gasCostMicroUsd(100_000n, 2_000_000_000n, 3000)).toBe(600_000n);
    // One wei at 1 USD is far below a micro-dollar: still one micro-dollar, never zero.
    expect(gasCostMicroUsd(1n, 1n, 1)).toBe(1n);
  });

  it('charges by mode: manual gas + fee, auto gas only, sponsored nothing', () => {
    const base = { gas: 100_000n, maxFeePerGas: 2_000_000_000n, nativeUsdPrice: 3000, platformFeeUsd: 0.05 };
    expect(price({ ...base, mode: 'manual' })).toEqual({ gasCostMicroUsd: 600_000n, feeMicroUsd: 50_000n, payableMicroUsd: 650_000n });
    expect(price({ ...base, mode: 'auto' })).toEqual({ gasCostMicroUsd: 600_000n, feeMicroUsd: 0n, payableMicroUsd: 600_000n });
    expect(price({ ...base, mode: 'sponsored' }).payableMicroUsd).toBe(0n);
    expect(microToUsd(650_000n)).toBe(0.65);
  });

  it('converts to raw token amounts with the token’s decimals, rounding up', () => {
    expect(rawTokenAmount(650_000n, 6)).toBe(650_000n);
    expect(rawTokenAmount(650_001n, 2)).toBe(66n); // 0.650001 USD in cents: 66, not 65
    expect(rawTokenAmount(1n, 18)).toBe(1_000_000_000_000n);
  });

  it('lists accepted tokens in byte order of their symbols: USDC, USDT, aUSD', () => {
    const q = quoteTokens([token('aUSD'), token('USDT'), token('USDC')], 1_000_000n);
    expect(q.map((t) => t.symbol)).toEqual(['USDC', 'USDT', 'aUSD']);
    expect(q.every((t) => t.amountRaw === 1_000_000n)).toBe(true);
    expect(quoteTokens([token('aUSD'), token('USDT', false), token('USDC')], 1n).map((t) => t.symbol)).toEqual(['USDC', 'aUSD']);
  });
});
