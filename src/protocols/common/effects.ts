import type { Address } from 'viem';
import { z } from 'zod';
import type { Observed } from '../../chain/types.ts';
import { amountOf, AmountSchema, TokenInfoSchema, type TokenInfo } from './amounts.ts';
import { decodeResult, type Read } from './reads.ts';
import { balanceOfRead, nativeBalanceObservedRead } from './tokens.ts';

/** What a simulation says an action will change, besides gas: the position before and after, where there is one. */
export interface Observation<P> {
  reads: readonly Read<unknown>[];
  summarize(values: readonly unknown[]): P;
}

export const BalanceChangeSchema = z.object({
  token: TokenInfoSchema,
  before: AmountSchema,
  after: AmountSchema,
  change: AmountSchema.meta({ description: 'after − before (negative: the wallet pays)' }),
});

export const effectsSchema = <P extends z.ZodType>(position: P) =>
  z.object({
    balance_changes: z.array(BalanceChangeSchema).meta({ description: "The wallet's token balances the action moves, before and after it" }),
    position_before: position.nullable(),
    position_after: position.nullable().meta({ description: 'The position as the action leaves it (health factor, borrow capacity, liquidation price)' }),
  });

/** The reads a simulation observes for `tokens` (the wallet's balances) and `position`, in one list. */
export function observedReads(wallet: Address, tokens: readonly TokenInfo[], position: Observation<unknown> | undefined): Read<unknown>[] {
  return [...tokens.map((t) => (t.native ? nativeBalanceObservedRead(wallet) : balanceOfRead(t.address, wallet))), ...(position?.reads ?? [])];
}

/** The effects out of the observed reads (same order as observedReads). */
export function effectsOf<P>(tokens: readonly TokenInfo[], position: Observation<P> | undefined, reads: readonly Read<unknown>[], observed: Observed) {
  const decoded = (side: 'before' | 'after') => reads.map((r, i) => decodeResult(r, observed[side][i]!));
  const before = decoded('before');
  const after = decoded('after');
  const n = tokens.length;
  return {
    balance_changes: tokens
      .map((t, i) => ({ token: t, before: before[i] as bigint, after: after[i] as bigint }))
      .map(({ token, before: b, after: a }) => ({ token, before: amountOf(b, token.decimals), after: amountOf(a, token.decimals), change: amountOf(a - b, token.decimals) })),
    position_before: position ? position.summarize(before.slice(n)) : null,
    position_after: position ? position.summarize(after.slice(n)) : null,
  };
}
