import { getAddress, type Address } from 'viem';
import { z } from 'zod';
import { AmountSchema, amountOf, fixed, TokenInfoSchema } from '../common/amounts.ts';
import type { Observation } from '../common/effects.ts';
import { readOf, type Read } from '../common/reads.ts';
import { dataProviderAbi, poolAbi } from './abi.ts';
import { BASE_DECIMALS, BPS, NO_DEBT_HEALTH_FACTOR, usdOf, type Reserve } from './reserves.ts';
import type { AaveV3Config } from './config.ts';

/** getUserAccountData: totals in the base currency (8 decimals), LTV and threshold in bps, health factor WAD. */
export interface AccountData {
  totalCollateralBase: bigint;
  totalDebtBase: bigint;
  availableBorrowsBase: bigint;
  currentLiquidationThreshold: bigint;
  ltv: bigint;
  healthFactor: bigint;
}

/** getUserReserveData: one reserve of an account. */
export interface UserReserve {
  supplied: bigint;
  stableDebt: bigint;
  variableDebt: bigint;
  collateral: boolean;
}

export function accountReads(config: AaveV3Config, reserves: readonly Reserve[], wallet: Address): Read<unknown>[] {
  const account = readOf({ address: getAddress(config.pool), abi: poolAbi, functionName: 'getUserAccountData', args: [wallet] });
  return [
    { ...account, decode: (d) => { const v = account.decode(d); return { totalCollateralBase: v[0], totalDebtBase: v[1], availableBorrowsBase: v[2], currentLiquidationThreshold: v[3], ltv: v[4], healthFactor: v[5] } satisfies AccountData; } },
    ...reserves.map((r) => {
      const read = readOf({ address: getAddress(config.protocolDataProvider), abi: dataProviderAbi, functionName: 'getUserReserveData', args: [r.token.address, wallet] });
      return { ...read, decode: (d: `0x${string}`) => { const v = read.decode(d); return { supplied: v[0], stableDebt: v[1], variableDebt: v[2], collateral: v[8] } satisfies UserReserve; } };
    }),
  ];
}

export const accountOf = (values: readonly unknown[]) => ({ data: values[0] as AccountData, reserves: values.slice(1) as UserReserve[] });

const usd = (base: bigint) => fixed(base, BASE_DECIMALS);

export const PositionSchema = z
  .object({
    total_collateral_usd: z.string(),
    total_debt_usd: z.string(),
    available_borrows_usd: z.string().meta({ description: 'What can still be borrowed, in USD: collateral × LTV − debt' }),
    ltv: z.string().meta({ description: "The account's weighted loan-to-value limit, e.g. 0.8" }),
    liquidation_threshold: z.string(),
    health_factor: z.string().nullable().meta({ description: 'Below 1 the account can be liquidated. null: no debt' }),
    supplied: z.array(z.object({ token: TokenInfoSchema, amount: AmountSchema, value_usd: z.string(), collateral: z.boolean() })),
    borrowed: z.array(z.object({ token: TokenInfoSchema, amount: AmountSchema, value_usd: z.string() })),
    borrow_capacity: z
      .array(z.object({ token: TokenInfoSchema, amount: AmountSchema }))
      .meta({ description: 'available_borrows_usd in each token that can be borrowed, at its price' }),
    liquidation_prices: z
      .array(z.object({ token: TokenInfoSchema, price_usd: z.string().nullable() }))
      .meta({ description: 'Per collateral: the price (the others unchanged) at which the account becomes liquidatable; null without debt' }),
  })
  .meta({ id: 'AaveV3Position' });
export type Position = z.output<typeof PositionSchema>;

export function positionOf(reserves: readonly Reserve[], account: ReturnType<typeof accountOf>): Position {
  const { data } = account;
  const rows = reserves.map((r, i) => ({ r, u: account.reserves[i]! }));
  const debt = data.totalDebtBase;
  // Each collateral's weight at the liquidation threshold, in base units × bps.
  const weighted = rows.filter(({ u }) => u.collateral && u.supplied > 0n).map(({ r, u }) => ({ r, u, w: usdOf(u.supplied, r) * r.liquidationThreshold }));
  const totalWeighted = weighted.reduce((s, x) => s + x.w, 0n);
  return {
    total_collateral_usd: usd(data.totalCollateralBase),
    total_debt_usd: usd(debt),
    available_borrows_usd: usd(data.availableBorrowsBase),
    ltv: fixed(data.ltv, 4, 4),
    liquidation_threshold: fixed(data.currentLiquidationThreshold, 4, 4),
    health_factor: data.healthFactor === NO_DEBT_HEALTH_FACTOR || debt === 0n ? null : fixed(data.healthFactor, 18, 4),
    supplied: rows.filter(({ u }) => u.supplied > 0n).map(({ r, u }) => ({ token: r.token, amount: amountOf(u.supplied, r.token.decimals), value_usd: usd(usdOf(u.supplied, r)), collateral: u.collateral })),
    borrowed: rows
      .filter(({ u }) => u.variableDebt + u.stableDebt > 0n)
      .map(({ r, u }) => ({ token: r.token, amount: amountOf(u.variableDebt + u.stableDebt, r.token.decimals), value_usd: usd(usdOf(u.variableDebt + u.stableDebt, r)) })),
    borrow_capacity: reserves
      .filter((r) => r.borrowingEnabled && r.active && !r.frozen && r.price > 0n)
      .map((r) => ({ token: r.token, amount: amountOf((data.availableBorrowsBase * 10n ** BigInt(r.token.decimals)) / r.price, r.token.decimals) })),
    liquidation_prices: weighted.map(({ r, u, w }) => {
      if (debt === 0n) return { token: r.token, price_usd: null };
      // Liquidation when Σ value × threshold = debt: solve for this collateral's price, the others unchanged.
      const others = totalWeighted - w;
      const needed = debt * BPS > others ? debt * BPS - others : 0n;
      return { token: r.token, price_usd: usd((needed * 10n ** BigInt(r.token.decimals)) / (u.supplied * r.liquidationThreshold)) };
    }),
  };
}

export const positionObservation = (config: AaveV3Config, reserves: readonly Reserve[], wallet: Address): Observation<Position> => ({
  reads: accountReads(config, reserves, wallet),
  summarize: (values) => positionOf(reserves, accountOf(values)),
});
