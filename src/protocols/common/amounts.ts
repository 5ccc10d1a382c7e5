import { formatUnits, parseUnits, type Address } from 'viem';
import { z } from 'zod';
import { ProtocolError } from './errors.ts';

/** A token as the protocol endpoints name it. */
export interface TokenInfo {
  symbol: string;
  address: Address;
  decimals: number;
  /** The chain's native coin (ETH), where a family lets it stand for its wrapped token: balances are the account's own. */
  native?: boolean;
}

export const TokenInfoSchema = z.object({
  symbol: z.string(),
  address: z.string().meta({ description: 'The token contract, EIP-55 checksummed' }),
  decimals: z.int(),
  native: z.boolean().optional().meta({ description: "true: the chain's native coin (ETH); address is then the wrapped token the pools hold" }),
});

/** Every amount in answers: the raw integer (smallest unit), the token's decimals, and the decimal string. */
export const AmountSchema = z
  .object({
    raw: z.string().meta({ description: 'Integer amount in the smallest unit (may be negative for a change)', examples: ['1500000'] }),
    decimals: z.int(),
    formatted: z.string().meta({ description: 'The same amount in whole tokens, as a decimal string', examples: ['1.5'] }),
  })
  .meta({ id: 'Amount' });
export type Amount = z.infer<typeof AmountSchema>;

export const amountOf = (raw: bigint, decimals: number): Amount => ({ raw: raw.toString(), decimals, formatted: formatUnits(raw, decimals) });

/** What an action was asked to move: an exact raw amount, or `max` (the whole balance, debt or supply). */
export type RequestedAmount = { kind: 'exact'; raw: bigint } | { kind: 'max' };

/**
 * The amount of an action's input in the token's smallest unit: `amount` in token units ("12.5", or "max" where
 * the action takes it) or `amount_raw`. More decimals than the token has is refused, never rounded.
 */
export function requestedAmount(input: { amount?: string | undefined; amount_raw?: string | undefined }, token: TokenInfo): RequestedAmount {
  if (input.amount_raw !== undefined) return { kind: 'exact', raw: BigInt(input.amount_raw) };
  const amount = input.amount!;
  if (amount === 'max') return { kind: 'max' };
  return { kind: 'exact', raw: tokenUnits(amount, token, 'amount') };
}

/**
 * A decimal amount of `token` (an input `field`) in its smallest unit. More decimals than the token has is
 * refused, never rounded; so is more than a uint256 holds (no contract call could carry it, and encoding it would
 * fail as a 500).
 */
export function tokenUnits(amount: string, token: TokenInfo, field: string): bigint {
  const [, fraction = ''] = amount.split('.');
  if (fraction.length > token.decimals) {
    throw new ProtocolError('invalid_amount', `${field} has ${fraction.length} decimals; ${token.symbol} has ${token.decimals}`, { field });
  }
  const raw = parseUnits(amount, token.decimals);
  if (raw > MAX_UINT256) throw new ProtocolError('invalid_amount', `${field} is more ${token.symbol} than a uint256 holds`, { field });
  return raw;
}

const MAX_UINT256 = 2n ** 256n - 1n;

/**
 * `value / 10^decimals` as a decimal string cut to `places` digits (rounded down): ratios, rates, USD values.
 * Exact integer arithmetic, no floating point.
 */
export function fixed(value: bigint, decimals: number, places = 6): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const cut = decimals > places ? abs / 10n ** BigInt(decimals - places) : abs * 10n ** BigInt(places - decimals);
  const s = formatUnits(cut, places);
  return negative && cut !== 0n ? `-${s}` : s;
}

/** A ratio `numerator / denominator` as a decimal string with `places` digits (rounded down). */
export const ratio = (numerator: bigint, denominator: bigint, places = 6): string =>
  denominator === 0n ? '0' : fixed((numerator * 10n ** BigInt(places)) / denominator, places, places);

export const SECONDS_PER_YEAR = 31_536_000n;
