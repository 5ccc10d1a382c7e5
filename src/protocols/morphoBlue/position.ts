import type { Address } from 'viem';
import { z } from 'zod';
import { AmountSchema, amountOf, fixed, ratio } from '../common/amounts.ts';
import type { Observation } from '../common/effects.ts';
import { readOf, type Read } from '../common/reads.ts';
import { morphoAbi } from './abi.ts';
import { collateralValue, marketRead, pricePerCollateral, type MorphoMarket } from './markets.ts';
import { expectedMarket, toAssetsDown, toAssetsUp, WAD, wMulDown, type MarketState } from './math.ts';

/** An account's position in one market: shares of the supply and of the borrow, and collateral. */
export interface MorphoAccount {
  supplyShares: bigint;
  borrowShares: bigint;
  collateral: bigint;
}

export const positionRead = (morpho: Address, m: MorphoMarket, wallet: Address): Read<MorphoAccount> => {
  const r = readOf({ address: morpho, abi: morphoAbi, functionName: 'position', args: [m.id, wallet] });
  return { ...r, decode: (data) => { const [supplyShares, borrowShares, collateral] = r.decode(data); return { supplyShares, borrowShares, collateral }; } };
};

/** Supplied and borrowed assets of an account, at the market's totals (borrow rounded up, as Morpho does). */
export const assetsOf = (s: MarketState, a: MorphoAccount) => ({
  supplied: toAssetsDown(a.supplyShares, s.totalSupplyAssets, s.totalSupplyShares),
  borrowed: toAssetsUp(a.borrowShares, s.totalBorrowAssets, s.totalBorrowShares),
});

export const PositionSchema = z
  .object({
    market: z.string(),
    pair: z.string(),
    supplied: AmountSchema.meta({ description: 'Loan token supplied, with interest' }),
    supply_shares: z.string(),
    borrowed: AmountSchema.meta({ description: 'Loan token borrowed, with interest' }),
    borrow_shares: z.string(),
    collateral: AmountSchema,
    collateral_value: AmountSchema.meta({ description: 'The collateral at the oracle price, in loan tokens' }),
    max_borrow: AmountSchema.meta({ description: 'Collateral value × LLTV: borrowing beyond it makes the position liquidatable' }),
    borrow_capacity: AmountSchema.meta({ description: 'max_borrow − borrowed: what can still be borrowed' }),
    ltv: z.string().meta({ description: 'borrowed ÷ collateral value' }),
    lltv: z.string(),
    health_factor: z.string().nullable().meta({ description: 'max_borrow ÷ borrowed; below 1 the position can be liquidated. null: no borrow' }),
    liquidation_price: AmountSchema.nullable().meta({ description: 'The collateral price (one whole token, in loan tokens) at which the position becomes liquidatable; null: no borrow' }),
  })
  .meta({ id: 'MorphoBluePosition' });
export type Position = z.output<typeof PositionSchema>;

/** The position of `a` in `m` (totals `state`, price `price`): health factor, capacity, liquidation price. */
export function positionOf(m: MorphoMarket, a: MorphoAccount, state: MarketState = m.state, price: bigint = m.price): Position {
  const at = { ...m, price };
  const { supplied, borrowed } = assetsOf(state, a);
  const value = collateralValue(at, a.collateral);
  const maxBorrow = wMulDown(value, m.params.lltv);
  const loan = (x: bigint) => amountOf(x, m.loan.decimals);
  // Liquidatable when collateral × price / 1e36 × lltv / 1e18 < borrowed: the price where they are equal.
  const liquidationPrice = borrowed === 0n || a.collateral === 0n ? null : (borrowed * 10n ** 36n * WAD + a.collateral * m.params.lltv - 1n) / (a.collateral * m.params.lltv);
  return {
    market: m.id,
    pair: `${m.collateral.symbol}/${m.loan.symbol}`,
    supplied: loan(supplied),
    supply_shares: a.supplyShares.toString(),
    borrowed: loan(borrowed),
    borrow_shares: a.borrowShares.toString(),
    collateral: amountOf(a.collateral, m.collateral.decimals),
    collateral_value: loan(value),
    max_borrow: loan(maxBorrow),
    borrow_capacity: loan(maxBorrow > borrowed ? maxBorrow - borrowed : 0n),
    ltv: ratio(borrowed, value),
    lltv: fixed(m.params.lltv, 18, 4),
    health_factor: borrowed === 0n ? null : ratio(maxBorrow, borrowed, 4),
    liquidation_price: liquidationPrice === null ? null : loan(pricePerCollateral(m, liquidationPrice)),
  };
}

/**
 * What a simulation observes of a position: the account and the market's totals, accrued to the plan's `now` at
 * its rate (after the action, Morpho has just accrued: nothing left to add).
 */
export const positionObservation = (morpho: Address, m: MorphoMarket, wallet: Address): Observation<Position> => ({
  reads: [positionRead(morpho, m, wallet), marketRead(morpho, m.id)],
  summarize: ([account, state]) => positionOf(m, account as MorphoAccount, expectedMarket(state as MarketState, m.borrowRate, m.now)),
});
