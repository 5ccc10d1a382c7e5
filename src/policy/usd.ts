/**
 * USD as the policies count it: integer micro-dollars (as src/payments/pricing.ts does), parsed from and shown as
 * exact decimal text, so a limit, a valuation and a budget's spend compare without floating point.
 */

const MICRO = 1_000_000n;
const WEI_PER_COIN = 10n ** 18n;

/** `12.5` → 12_500_000n: a policy's USD figure (its schema allows at most 6 decimals). */
export function decimalToMicro(usd: string): bigint {
  const [whole, frac = ''] = usd.split('.');
  return BigInt(whole!) * MICRO + BigInt(frac.padEnd(6, '0').slice(0, 6));
}

/** 48_200_000n → `48.2`: exact, without trailing zeros. */
export function formatMicroUsd(micro: bigint): string {
  const whole = micro / MICRO;
  const frac = (micro % MICRO).toString().padStart(6, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
}

/** Wei at a price in micro-USD per coin, rounded up. */
export const weiToMicroUsd = (wei: bigint, nativeUsdMicro: bigint): bigint => (wei * nativeUsdMicro + WEI_PER_COIN - 1n) / WEI_PER_COIN;
