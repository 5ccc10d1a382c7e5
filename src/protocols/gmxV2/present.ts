import { formatUnits } from 'viem';
import { z } from 'zod';
import { TokenInfoSchema } from '../common/amounts.ts';
import { borrowingFactorPerPeriod, fundingFactorPerPeriod, openInterestUsd } from './math/market.ts';
import { positionFigures } from './math/positionFigures.ts';
import { USD_DECIMALS } from './math/units.ts';
import { collateralPrices, type PerpMarket } from './snapshot.ts';

/** A 30-decimal USD amount (or a USD price per whole token) as a decimal string, exact. */
export const usd = (x: bigint): string => formatUnits(x, USD_DECIMALS);
/** A 30-decimal factor as a percentage, exact. */
export const percent = (factor: bigint): string => formatUnits(factor * 100n, USD_DECIMALS);
/** Leverage in basis points as a multiple ("5.2"). */
export const multiple = (bps: bigint | undefined): string | null => (bps === undefined ? null : formatUnits(bps, 4));

export const Usd = z.string().meta({ description: 'USD, exact decimal string', examples: ['3012.5'] });
export const PriceUsd = z.string().meta({ description: 'USD per whole index token, exact decimal string', examples: ['3012.5'] });
export const Side = z.enum(['long', 'short']);

export const MarketSchema = z
  .object({
    market: z.string().meta({ description: "The market token's address: the market's id in every other field and endpoint" }),
    name: z.string().meta({ examples: ['ETH/USD [WETH-USDC]'] }),
    index_token: z.object({ symbol: z.string(), address: z.string(), decimals: z.int(), synthetic: z.boolean() }),
    long_token: TokenInfoSchema,
    short_token: TokenInfoSchema,
    index_price: z.object({ min: PriceUsd, max: PriceUsd }).meta({ description: "The oracle keeper's signed prices now: longs open at max and close at min, shorts the reverse" }),
    open_interest_usd: z.object({ long: Usd, short: Usd }),
    funding_rate_per_hour: z
      .object({ long: z.string(), short: z.string() })
      .meta({ description: 'Percent of position size per hour each side receives (positive) or pays (negative), at the current imbalance' }),
    borrowing_rate_per_hour: z.object({ long: z.string(), short: z.string() }).meta({ description: 'Percent of position size per hour each side pays to the pool' }),
    position_fee_percent: z.object({ balance_improved: z.string(), balance_worsened: z.string() }),
    min_collateral_usd: Usd,
    max_leverage: z.string().meta({ description: 'The highest leverage the minimum collateral factor allows (before open-interest scaling)' }),
    disabled: z.boolean(),
  })
  .meta({ id: 'PerpMarket' });

export function presentMarket(m: PerpMarket): z.infer<typeof MarketSchema> {
  const p = m.priced;
  const PRECISION = 10n ** 30n;
  return {
    market: m.address,
    name: m.name,
    index_token: { symbol: m.index.symbol, address: m.index.address, decimals: m.index.decimals, synthetic: m.index.synthetic },
    long_token: m.long,
    short_token: m.short,
    index_price: { min: usd(p.prices.index.min), max: usd(p.prices.index.max) },
    open_interest_usd: { long: usd(openInterestUsd(p, true)), short: usd(openInterestUsd(p, false)) },
    funding_rate_per_hour: { long: percent(fundingFactorPerPeriod(p, true, 3600)), short: percent(fundingFactorPerPeriod(p, false, 3600)) },
    borrowing_rate_per_hour: { long: percent(-borrowingFactorPerPeriod(p, true, 3600)), short: percent(-borrowingFactorPerPeriod(p, false, 3600)) },
    position_fee_percent: { balance_improved: percent(p.positionFeeFactorForBalanceWasImproved), balance_worsened: percent(p.positionFeeFactorForBalanceWasNotImproved) },
    min_collateral_usd: usd(p.minCollateralUsd),
    max_leverage: p.minCollateralFactor > 0n ? formatUnits((PRECISION * 10_000n) / p.minCollateralFactor, 4) : '0',
    disabled: p.isDisabled,
  };
}

/** One position of the Reader's getAccountPositionInfoList, the fields read. */
export interface ReaderPositionInfo {
  positionKey: `0x${string}`;
  position: {
    addresses: { account: string; market: string; collateralToken: string };
    numbers: { sizeInUsd: bigint; sizeInTokens: bigint; collateralAmount: bigint; pendingImpactAmount: bigint; increasedAtTime: bigint };
    flags: { isLong: boolean };
  };
  fees: { funding: { fundingFeeAmount: bigint; claimableLongTokenAmount: bigint; claimableShortTokenAmount: bigint }; borrowing: { borrowingFeeUsd: bigint } };
}

export const PositionSchema = z
  .object({
    key: z.string().meta({ description: "GMX's position key: keccak256(account, market, collateral token, is long)" }),
    market: z.string(),
    market_name: z.string(),
    side: Side,
    collateral_token: TokenInfoSchema,
    size_usd: Usd,
    size_in_tokens: z.string().meta({ description: 'Index tokens, decimal' }),
    collateral_amount: z.string().meta({ description: 'Collateral tokens, decimal' }),
    collateral_usd: Usd,
    entry_price: PriceUsd.nullable(),
    mark_price: PriceUsd.meta({ description: 'The price a close would be marked at now (min for a long, max for a short)' }),
    pnl_usd: Usd.meta({ description: 'At the mark price, before fees' }),
    pnl_after_fees_usd: Usd.meta({ description: 'After pending funding and borrowing fees, the closing fee and the close’s price impact' }),
    pending_fees_usd: z.object({ funding: Usd, borrowing: Usd }),
    closing_fee_usd: Usd,
    net_value_usd: Usd.meta({ description: 'Collateral + PnL − pending fees − closing fee − close impact: what a close would return, in USD' }),
    leverage: z.string().nullable().meta({ description: 'Size / (collateral − pending fees); null when nothing is left' }),
    liquidation_price: PriceUsd.nullable().meta({ description: 'The index price at which it becomes liquidatable; null when none (fully collateralized in the index token)' }),
    claimable_funding: z.object({ long_token: z.string(), short_token: z.string() }).meta({ description: 'Funding fees earned, claimable (decimal, in each token)' }),
    opened_at: z.string().nullable(),
  })
  .meta({ id: 'PerpPosition' });

/** A position with its figures as GMX's own interface shows them (the SDK's derivation: src/protocols/gmxV2/math). */
export function presentPosition(m: PerpMarket, info: ReaderPositionInfo): z.infer<typeof PositionSchema> {
  const n = info.position.numbers;
  const isLong = info.position.flags.isLong;
  const collateralToken = m.long.address.toLowerCase() === info.position.addresses.collateralToken.toLowerCase() ? m.long : m.short;
  const collateral = collateralPrices(m, collateralToken.address);
  const f = positionFigures(
    m.priced,
    {
      sizeInUsd: n.sizeInUsd,
      sizeInTokens: n.sizeInTokens,
      collateralAmount: n.collateralAmount,
      pendingImpactAmount: n.pendingImpactAmount,
      isLong,
      pendingBorrowingFeesUsd: info.fees.borrowing.borrowingFeeUsd,
      fundingFeeAmount: info.fees.funding.fundingFeeAmount,
    },
    collateral,
  );
  return {
    key: info.positionKey,
    market: m.address,
    market_name: m.name,
    side: isLong ? 'long' : 'short',
    collateral_token: collateralToken,
    size_usd: usd(n.sizeInUsd),
    size_in_tokens: formatUnits(n.sizeInTokens, m.index.decimals),
    collateral_amount: formatUnits(n.collateralAmount, collateralToken.decimals),
    collateral_usd: usd(f.collateralUsd),
    entry_price: f.entryPrice === undefined ? null : usd(f.entryPrice),
    mark_price: usd(f.markPrice),
    pnl_usd: usd(f.pnlUsd),
    pnl_after_fees_usd: usd(f.pnlAfterFeesUsd),
    pending_fees_usd: { funding: usd(f.pendingFundingFeesUsd), borrowing: usd(f.pendingBorrowingFeesUsd) },
    closing_fee_usd: usd(f.closingFeeUsd),
    net_value_usd: usd(f.netValueUsd),
    leverage: multiple(f.leverageBps),
    liquidation_price: f.liquidationPrice === undefined ? null : usd(f.liquidationPrice),
    claimable_funding: {
      long_token: formatUnits(info.fees.funding.claimableLongTokenAmount, m.long.decimals),
      short_token: formatUnits(info.fees.funding.claimableShortTokenAmount, m.short.decimals),
    },
    opened_at: n.increasedAtTime > 0n ? new Date(Number(n.increasedAtTime) * 1000).toISOString() : null,
  };
}
