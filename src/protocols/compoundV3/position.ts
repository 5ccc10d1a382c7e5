import type { Address } from 'viem';
import { z } from 'zod';
import { AmountSchema, amountOf, fixed, TokenInfoSchema } from '../common/amounts.ts';
import type { Observation } from '../common/effects.ts';
import { readOf, type Read } from '../common/reads.ts';
import { cometAbi } from './abi.ts';
import { FACTOR_SCALE, PRICE_DECIMALS, usdOf, type CometMarket } from './markets.ts';

/** An account in one Comet: base supplied, base borrowed, and each collateral (market.collaterals' order). */
export interface CometAccount {
  supplied: bigint;
  borrowed: bigint;
  collateral: bigint[];
}

/** The account's reads in `m` (to batch with others, or to observe in a simulation). */
export function accountReads(m: CometMarket, wallet: Address): Read<bigint>[] {
  return [
    readOf({ address: m.comet, abi: cometAbi, functionName: 'balanceOf', args: [wallet] }),
    readOf({ address: m.comet, abi: cometAbi, functionName: 'borrowBalanceOf', args: [wallet] }),
    ...m.collaterals.map((c) => readOf({ address: m.comet, abi: cometAbi, functionName: 'collateralBalanceOf', args: [wallet, c.token.address] }) as Read<bigint>),
  ];
}

export const accountOf = (values: readonly unknown[]): CometAccount => ({
  supplied: values[0] as bigint,
  borrowed: values[1] as bigint,
  collateral: values.slice(2) as bigint[],
});

export const PositionSchema = z
  .object({
    market: z.string(),
    comet: z.string(),
    base_token: TokenInfoSchema,
    supplied: AmountSchema.meta({ description: 'Base token supplied, with interest' }),
    borrowed: AmountSchema.meta({ description: 'Base token borrowed, with interest' }),
    collateral: z.array(z.object({ token: TokenInfoSchema, balance: AmountSchema, value_usd: z.string() })),
    collateral_value_usd: z.string(),
    borrowed_value_usd: z.string(),
    borrow_capacity: AmountSchema.meta({ description: 'Base token that can still be borrowed: collateral value × borrow factors − borrowed' }),
    health_factor: z
      .string()
      .nullable()
      .meta({ description: 'Collateral value × liquidation factors ÷ borrowed value; below 1 the account can be liquidated. null: no borrow' }),
    liquidatable: z.boolean(),
    liquidation_prices: z
      .array(z.object({ token: TokenInfoSchema, price_usd: z.string().nullable() }))
      .meta({ description: "Per collateral held: the price (others unchanged) at which the account becomes liquidatable; null when no borrow" }),
  })
  .meta({ id: 'CompoundV3Position' });
export type Position = z.output<typeof PositionSchema>;

/** The position of `account` in `m` at the market's prices: capacity, health and liquidation prices. */
export function positionOf(m: CometMarket, account: CometAccount): Position {
  const held = m.collaterals.map((c, i) => ({ c, amount: account.collateral[i] ?? 0n, usd: usdOf(account.collateral[i] ?? 0n, c.token.decimals, c.price) }));
  const collateralUsd = held.reduce((s, h) => s + h.usd, 0n);
  const borrowUsd = usdOf(account.borrowed, m.base.decimals, m.basePrice);
  const borrowLimitUsd = held.reduce((s, h) => s + (h.usd * h.c.borrowCollateralFactor) / FACTOR_SCALE, 0n);
  const liquidationUsd = held.reduce((s, h) => s + (h.usd * h.c.liquidateCollateralFactor) / FACTOR_SCALE, 0n);
  const spareUsd = borrowLimitUsd > borrowUsd ? borrowLimitUsd - borrowUsd : 0n;
  const capacity = m.basePrice === 0n ? 0n : (spareUsd * 10n ** BigInt(m.base.decimals)) / m.basePrice;
  return {
    market: m.name,
    comet: m.comet,
    base_token: m.base,
    supplied: amountOf(account.supplied, m.base.decimals),
    borrowed: amountOf(account.borrowed, m.base.decimals),
    collateral: held.filter((h) => h.amount > 0n).map((h) => ({ token: h.c.token, balance: amountOf(h.amount, h.c.token.decimals), value_usd: fixed(h.usd, PRICE_DECIMALS) })),
    collateral_value_usd: fixed(collateralUsd, PRICE_DECIMALS),
    borrowed_value_usd: fixed(borrowUsd, PRICE_DECIMALS),
    borrow_capacity: amountOf(capacity, m.base.decimals),
    health_factor: borrowUsd === 0n ? null : fixed((liquidationUsd * 10n ** 18n) / borrowUsd, 18, 4),
    liquidatable: borrowUsd > 0n && liquidationUsd < borrowUsd,
    liquidation_prices: held
      .filter((h) => h.amount > 0n)
      .map((h) => {
        if (borrowUsd === 0n) return { token: h.c.token, price_usd: null };
        // liquidation when: others' liquidation value + amount × p × factor = borrowed value
        const others = liquidationUsd - (h.usd * h.c.liquidateCollateralFactor) / FACTOR_SCALE;
        const needed = borrowUsd > others ? borrowUsd - others : 0n;
        const price = (needed * FACTOR_SCALE * 10n ** BigInt(h.c.token.decimals)) / (h.amount * h.c.liquidateCollateralFactor);
        return { token: h.c.token, price_usd: fixed(price, PRICE_DECIMALS) };
      }),
  };
}

/** What a simulation observes of the position in `m`: the account's reads, summarized at the market's prices. */
export const positionObservation = (m: CometMarket, wallet: Address): Observation<Position> => ({
  reads: accountReads(m, wallet),
  summarize: (values) => positionOf(m, accountOf(values)),
});
