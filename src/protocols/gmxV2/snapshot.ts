import type { Address } from 'viem';
import type { ProtocolContext } from '../types.ts';
import type { GmxV2Config } from './config.ts';
import { marketPricesOf, marketProps, marketsNow, type GmxMarket, type MarketsNow } from './markets.ts';
import { readMarketParams, type ContractMarketPrices } from './marketParams.ts';
import type { PricedMarket } from './math/market.ts';
import { priceFromContract, type TokenPrices } from './math/units.ts';

/** A served market with everything its figures are computed from: its parameters and state, priced now. */
export interface PerpMarket extends GmxMarket {
  /** As the contracts take them (the Reader, simulateExecuteLatestOrder). */
  contractPrices: ContractMarketPrices;
  /** As the math takes them: USD per whole token, 30 decimals, with the parameters read at one block. */
  priced: PricedMarket;
}

export interface Snapshot extends MarketsNow {
  perp: PerpMarket[];
}

/** A token's oracle price as the math takes it. */
export const tokenPrices = (contract: { min: bigint; max: bigint }, decimals: number): TokenPrices => ({
  decimals,
  min: priceFromContract(contract.min, decimals),
  max: priceFromContract(contract.max, decimals),
});

/**
 * The served markets priced now: the oracle's prices and, in one batched read at one block, each market's
 * DataStore parameters and state and the Reader's market info (what every perp-v2 figure is computed from).
 */
export async function snapshot(ctx: ProtocolContext<'gmxV2'>): Promise<Snapshot> {
  const config = ctx.config as GmxV2Config;
  const now = await marketsNow(ctx);
  const withPrices = now.markets.map((m) => ({ m, prices: marketPricesOf(m, now.prices) }));
  const params = await readMarketParams(
    ctx.read,
    { dataStore: config.dataStore, reader: config.reader },
    withPrices.map(({ m, prices }) => ({ market: marketProps(m), prices })),
  );
  const perp = withPrices.map(({ m, prices }, i) => ({
    ...m,
    contractPrices: prices,
    priced: {
      ...params[i]!,
      prices: {
        index: tokenPrices(prices.indexTokenPrice, m.index.decimals),
        long: tokenPrices(prices.longTokenPrice, m.long.decimals),
        short: tokenPrices(prices.shortTokenPrice, m.short.decimals),
      },
    },
  }));
  return { ...now, perp };
}

/** The collateral token's prices for the math, and whether it is the index token (GMX values it with the index). */
export function collateralPrices(m: PerpMarket, token: Address): TokenPrices & { isIndexToken: boolean } {
  const isLongToken = m.long.address.toLowerCase() === token.toLowerCase();
  const p = isLongToken ? m.priced.prices.long : m.priced.prices.short;
  return { ...p, isIndexToken: m.index.address.toLowerCase() === token.toLowerCase() };
}
