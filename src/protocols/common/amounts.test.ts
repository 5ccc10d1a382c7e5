import { describe, expect, it } from 'vitest';
import { ProtocolError } from './errors.ts';
import { requestedAmount, tokenUnits } from './amounts.ts';

const WETH = { symbol: 'WETH', address: '0x0000000000000000000000000000000000000001', decimals: 18 } as const;
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof ProtocolError ? [e.code, e.details?.field ?? (e as unknown as { field?: string }).field] : e;
  }
  return 'accepted';
};

describe('token units', () => {
  it('a decimal in the smallest unit, exactly', () => {
    expect(tokenUnits('1.5', WETH, 'long_amount')).toBe(1_500_000_000_000_000_000n);
    expect(requestedAmount({ amount: '0.000000000000000001' }, WETH)).toEqual({ kind: 'exact', raw: 1n });
  });

  it('more decimals than the token has, or more than a uint256 holds: invalid_amount on the field, never rounded or encoded', () => {
    expect(refusal(() => tokenUnits('1.0000000000000000001', WETH, 'long_amount'))).toEqual(['invalid_amount', 'long_amount']);
    expect(refusal(() => tokenUnits(`2${'0'.repeat(59)}`, WETH, 'long_amount'))).toEqual(['invalid_amount', 'long_amount']);
    expect(tokenUnits(`1${'0'.repeat(59)}`, WETH, 'long_amount')).toBe(10n ** 77n);
    expect(refusal(() => requestedAmount({ amount: `2${'0'.repeat(59)}` }, WETH))).toEqual(['invalid_amount', 'amount']);
  });
});
