import { erc20Abi, getAddress, type Address } from 'viem';
import { z } from 'zod';
import type { CompoundV3Config } from './config.ts';
import { AmountSchema, amountOf, fixed, SECONDS_PER_YEAR, TokenInfoSchema, type TokenInfo } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf, type Reader } from '../common/reads.ts';
import { cometAbi } from './abi.ts';

/** Comet's fixed scales (CometCore): factors and rates 1e18, prices 8 decimals. */
export const FACTOR_SCALE = 10n ** 18n;
export const PRICE_DECIMALS = 8;

export interface CometCollateral {
  token: TokenInfo;
  priceFeed: Address;
  price: bigint;
  scale: bigint;
  borrowCollateralFactor: bigint;
  liquidateCollateralFactor: bigint;
  liquidationFactor: bigint;
  supplyCap: bigint;
  totalSupplied: bigint;
}

/** One Comet market as read from the chain: its base token, collaterals, prices, rates and totals. */
export interface CometMarket {
  name: string;
  comet: Address;
  base: TokenInfo;
  basePrice: bigint;
  baseBorrowMin: bigint;
  utilization: bigint;
  supplyRate: bigint;
  borrowRate: bigint;
  totalSupply: bigint;
  totalBorrow: bigint;
  collaterals: CometCollateral[];
}

/**
 * Every configured market, read in three batched round trips whatever their number: the markets' own values,
 * then their base tokens, collaterals and rates, then the collaterals' tokens and prices.
 */
export async function loadMarkets(read: Reader, config: CompoundV3Config): Promise<CometMarket[]> {
  const markets = config.markets.map((m) => ({ name: m.name, comet: getAddress(m.comet) }));
  const per = <T>(f: (comet: Address) => T[]) => markets.flatMap((m) => f(m.comet));

  const first = await read(
    per((comet) => [
      readOf({ address: comet, abi: cometAbi, functionName: 'baseToken' }),
      readOf({ address: comet, abi: cometAbi, functionName: 'baseTokenPriceFeed' }),
      readOf({ address: comet, abi: cometAbi, functionName: 'numAssets' }),
      readOf({ address: comet, abi: cometAbi, functionName: 'baseBorrowMin' }),
      readOf({ address: comet, abi: cometAbi, functionName: 'getUtilization' }),
      readOf({ address: comet, abi: cometAbi, functionName: 'totalSupply' }),
      readOf({ address: comet, abi: cometAbi, functionName: 'totalBorrow' }),
    ]) as never[],
  );
  const F = 7;
  const basics = markets.map((m, i) => {
    const v = first.slice(i * F, i * F + F) as [Address, Address, number, bigint, bigint, bigint, bigint];
    return { ...m, baseToken: v[0], baseFeed: v[1], numAssets: v[2], baseBorrowMin: v[3], utilization: v[4], totalSupply: v[5], totalBorrow: v[6] };
  });

  const second = await read(
    basics.flatMap((b) => [
      readOf({ address: b.baseToken, abi: erc20Abi, functionName: 'symbol' }),
      readOf({ address: b.baseToken, abi: erc20Abi, functionName: 'decimals' }),
      readOf({ address: b.comet, abi: cometAbi, functionName: 'getPrice', args: [b.baseFeed] }),
      readOf({ address: b.comet, abi: cometAbi, functionName: 'getSupplyRate', args: [b.utilization] }),
      readOf({ address: b.comet, abi: cometAbi, functionName: 'getBorrowRate', args: [b.utilization] }),
      ...Array.from({ length: b.numAssets }, (_, i) => readOf({ address: b.comet, abi: cometAbi, functionName: 'getAssetInfo', args: [i] })),
    ]) as never[],
  );
  let at = 0;
  const withAssets = basics.map((b) => {
    const v = second.slice(at, at + 5 + b.numAssets) as unknown[];
    at += 5 + b.numAssets;
    const assets = v.slice(5) as { asset: Address; priceFeed: Address; scale: bigint; borrowCollateralFactor: bigint; liquidateCollateralFactor: bigint; liquidationFactor: bigint; supplyCap: bigint }[];
    return { ...b, baseSymbol: v[0] as string, baseDecimals: v[1] as number, basePrice: v[2] as bigint, supplyRate: v[3] as bigint, borrowRate: v[4] as bigint, assets };
  });

  const third = await read(
    withAssets.flatMap((b) =>
      b.assets.flatMap((a) => [
        readOf({ address: a.asset, abi: erc20Abi, functionName: 'symbol' }),
        readOf({ address: a.asset, abi: erc20Abi, functionName: 'decimals' }),
        readOf({ address: b.comet, abi: cometAbi, functionName: 'getPrice', args: [a.priceFeed] }),
        readOf({ address: b.comet, abi: cometAbi, functionName: 'totalsCollateral', args: [a.asset] }),
      ]),
    ) as never[],
  );
  at = 0;
  return withAssets.map((b) => ({
    name: b.name,
    comet: b.comet,
    base: { symbol: b.baseSymbol, address: getAddress(b.baseToken), decimals: b.baseDecimals },
    basePrice: b.basePrice,
    baseBorrowMin: b.baseBorrowMin,
    utilization: b.utilization,
    supplyRate: b.supplyRate,
    borrowRate: b.borrowRate,
    totalSupply: b.totalSupply,
    totalBorrow: b.totalBorrow,
    collaterals: b.assets.map((a) => {
      const v = third.slice(at, at + 4) as [string, number, bigint, readonly [bigint, bigint]];
      at += 4;
      return {
        token: { symbol: v[0], address: getAddress(a.asset), decimals: v[1] },
        priceFeed: a.priceFeed,
        price: v[2],
        scale: a.scale,
        borrowCollateralFactor: a.borrowCollateralFactor,
        liquidateCollateralFactor: a.liquidateCollateralFactor,
        liquidationFactor: a.liquidationFactor,
        supplyCap: a.supplyCap,
        totalSupplied: v[3][0],
      };
    }),
  }));
}

/** The market an input names (its name, e.g. cUSDCv3, or its Comet's address); the first one by default. */
export function selectMarket(markets: readonly CometMarket[], input: string | undefined): CometMarket {
  if (input === undefined) return markets[0]!;
  const found = markets.find((m) => m.name.toLowerCase() === input.toLowerCase() || m.comet.toLowerCase() === input.toLowerCase());
  if (found) return found;
  throw new ProtocolError('unknown_market', `${input} is not a market here; markets: ${markets.map((m) => `${m.name} (${m.comet})`).join(', ')}`, { field: 'market' });
}

/** Every token a market takes: its base and its collaterals. */
export const marketTokens = (m: CometMarket): TokenInfo[] => [m.base, ...m.collaterals.map((c) => c.token)];

export const usdOf = (amount: bigint, decimals: number, price: bigint): bigint => (amount * price) / 10n ** BigInt(decimals);

const aprOf = (perSecond: bigint) => fixed(perSecond * SECONDS_PER_YEAR, 18, 6);

export const CometMarketInput = z
  .string()
  .regex(/^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9._-]{1,32})$/, 'must be a market name (e.g. cUSDCv3) or its Comet address')
  .optional()
  .meta({ description: 'The market: its name (e.g. cUSDCv3) or its Comet address. Default: the first market (GET .../markets)' });

export const MarketSchema = z.object({
  name: z.string(),
  comet: z.string(),
  base_token: TokenInfoSchema,
  base_price_usd: z.string(),
  base_borrow_min: AmountSchema,
  total_supply: AmountSchema,
  total_borrow: AmountSchema,
  utilization: z.string().meta({ description: 'Borrowed / supplied, 0 to 1' }),
  supply_apr: z.string().meta({ description: 'Yearly supply rate at the current utilization, e.g. 0.0321 = 3.21 %' }),
  borrow_apr: z.string(),
  collaterals: z.array(
    z.object({
      token: TokenInfoSchema,
      price_usd: z.string(),
      borrow_collateral_factor: z.string().meta({ description: 'Share of its value that can be borrowed against, e.g. 0.775' }),
      liquidate_collateral_factor: z.string(),
      liquidation_factor: z.string(),
      supply_cap: AmountSchema,
      total_supplied: AmountSchema,
    }),
  ),
});

export function presentMarket(m: CometMarket): z.output<typeof MarketSchema> {
  return {
    name: m.name,
    comet: m.comet,
    base_token: m.base,
    base_price_usd: fixed(m.basePrice, PRICE_DECIMALS),
    base_borrow_min: amountOf(m.baseBorrowMin, m.base.decimals),
    total_supply: amountOf(m.totalSupply, m.base.decimals),
    total_borrow: amountOf(m.totalBorrow, m.base.decimals),
    utilization: fixed(m.utilization, 18),
    supply_apr: aprOf(m.supplyRate),
    borrow_apr: aprOf(m.borrowRate),
    collaterals: m.collaterals.map((c) => ({
      token: c.token,
      price_usd: fixed(c.price, PRICE_DECIMALS),
      borrow_collateral_factor: fixed(c.borrowCollateralFactor, 18),
      liquidate_collateral_factor: fixed(c.liquidateCollateralFactor, 18),
      liquidation_factor: fixed(c.liquidationFactor, 18),
      supply_cap: amountOf(c.supplyCap, c.token.decimals),
      total_supplied: amountOf(c.totalSupplied, c.token.decimals),
    })),
  };
}
