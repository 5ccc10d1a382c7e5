import { formatEther } from 'viem';

/**
 * What the balance checks count in: gas at the latest block's maxFeePerGas. A bundle of a few operations uses
 * well under a million gas, a sponsored operation under 500,000, one plain transaction (a settlement, a drip)
 * under 150,000: below one of them the account cannot do its job at all (fail); below twenty it soon cannot (warn).
 */
export const GAS = { bundle: 1_000_000n, operation: 500_000n, transaction: 150_000n } as const;
export const WARN_MULTIPLE = 20n;

export type Level = 'ok' | 'warn' | 'fail';

/** How `balance` stands against `gasEach` units of work at `maxFeePerGas`, and how many such units it pays. */
export function balanceLevel(balance: bigint, gasEach: bigint, maxFeePerGas: bigint): { level: Level; units: bigint } {
  const each = gasEach * (maxFeePerGas > 0n ? maxFeePerGas : 1n);
  const units = balance / each;
  return { level: units < 1n ? 'fail' : units < WARN_MULTIPLE ? 'warn' : 'ok', units };
}

export const eth = (wei: bigint): string => `${formatEther(wei)} ETH`;
