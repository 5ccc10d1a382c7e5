import { encodeAbiParameters, erc20Abi, getAddress, keccak256, type Address, type Hex } from 'viem';
import { z } from 'zod';
import type { MorphoBlueConfig } from './config.ts';
import { AmountSchema, amountOf, fixed, ratio, SECONDS_PER_YEAR, TokenInfoSchema, type TokenInfo } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf, type Read } from '../common/reads.ts';
import type { ProtocolContext } from '../types.ts';
import { irmAbi, morphoAbi, oracleAbi } from './abi.ts';
import { expectedMarket, ORACLE_PRICE_SCALE, WAD, wMulDown, type MarketState } from './math.ts';

export interface MarketParams {
  loanToken: Address;
  collateralToken: Address;
  oracle: Address;
  irm: Address;
  lltv: bigint;
}

/** One Morpho Blue market as read now: its params and tokens, the oracle's price, and its totals accrued to now. */
export interface MorphoMarket {
  id: Hex;
  params: MarketParams;
  loan: TokenInfo;
  collateral: TokenInfo;
  /** Collateral → loan, scaled by 1e36 (and the decimals), as the oracle answers. */
  price: bigint;
  borrowRate: bigint;
  /** Totals with interest accrued to `now`, as MorphoBalancesLib computes them. */
  state: MarketState;
  now: bigint;
}

/** A market's id: keccak256 of its ABI-encoded MarketParams (MarketParamsLib.id). */
export const marketId = (p: MarketParams): Hex =>
  keccak256(
    encodeAbiParameters(
      [{ type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'uint256' }],
      [p.loanToken, p.collateralToken, p.oracle, p.irm, p.lltv],
    ),
  );

export const marketRead = (morpho: Address, id: Hex): Read<MarketState> => {
  const r = readOf({ address: morpho, abi: morphoAbi, functionName: 'market', args: [id] });
  return {
    ...r,
    decode: (data) => {
      const [totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee] = r.decode(data);
      return { totalSupplyAssets, totalSupplyShares, totalBorrowAssets, totalBorrowShares, lastUpdate, fee };
    },
  };
};

/**
 * The configured markets, in two batched round trips whatever their number: their totals, prices and tokens; then
 * each one's borrow rate (the rate model takes the market's totals). A market Morpho does not know is a 502
 * naming it (a configuration error).
 */
export async function loadMarkets(ctx: ProtocolContext<'morphoBlue'>): Promise<MorphoMarket[]> {
  const config: MorphoBlueConfig = ctx.config;
  const morpho = getAddress(config.morpho);
  const params = config.markets.map(
    (m): MarketParams => ({ loanToken: getAddress(m.loanToken), collateralToken: getAddress(m.collateralToken), oracle: getAddress(m.oracle), irm: getAddress(m.irm), lltv: BigInt(m.lltv) }),
  );
  if (params.length === 0) return [];
  const ids = params.map(marketId);
  const [now, first] = await Promise.all([
    ctx.now(),
    ctx.read(
      params.flatMap((p, i) => [
        marketRead(morpho, ids[i]!),
        readOf({ address: p.oracle, abi: oracleAbi, functionName: 'price' }),
        readOf({ address: p.loanToken, abi: erc20Abi, functionName: 'symbol' }),
        readOf({ address: p.loanToken, abi: erc20Abi, functionName: 'decimals' }),
        readOf({ address: p.collateralToken, abi: erc20Abi, functionName: 'symbol' }),
        readOf({ address: p.collateralToken, abi: erc20Abi, functionName: 'decimals' }),
      ]) as Read<unknown>[],
    ),
  ]);
  const rows = params.map((p, i) => {
    const v = first.slice(i * 6, i * 6 + 6) as [MarketState, bigint, string, number, string, number];
    if (v[0].lastUpdate === 0n) throw new ProtocolError('protocol_read_failed', `market ${ids[i]} is configured but Morpho has not created it`);
    return { p, id: ids[i]!, state: v[0], price: v[1], loan: { symbol: v[2], address: p.loanToken, decimals: v[3] }, collateral: { symbol: v[4], address: p.collateralToken, decimals: v[5] } };
  });
  const rates = await ctx.read(
    rows.map((r) =>
      readOf({
        address: r.p.irm,
        abi: irmAbi,
        functionName: 'borrowRateView',
        args: [{ ...r.p }, { ...r.state }],
      }),
    ),
  );
  return rows.map((r, i) => ({
    id: r.id,
    params: r.p,
    loan: r.loan,
    collateral: r.collateral,
    price: r.price,
    borrowRate: rates[i] as bigint,
    state: expectedMarket(r.state, rates[i] as bigint, now),
    now,
  }));
}

/**
 * The market an input names: its id, or `COLLATERAL/LOAN` symbols when one market has that pair. Without one, the
 * only market there is; with several, 400 ambiguous_market listing them.
 */
export function selectMarket(markets: readonly MorphoMarket[], input: string | undefined): MorphoMarket {
  const list = () => markets.map((m) => `${m.collateral.symbol}/${m.loan.symbol} lltv ${fixed(m.params.lltv, 18, 4)} (${m.id})`).join(', ') || 'none';
  if (input === undefined) {
    if (markets.length === 1) return markets[0]!;
    throw new ProtocolError('ambiguous_market', `give market: this deployment has ${markets.length === 0 ? 'no markets' : `several: ${list()}`}`, { field: 'market' });
  }
  const byId = markets.find((m) => m.id.toLowerCase() === input.toLowerCase());
  if (byId) return byId;
  const [collateral, loan] = input.split('/');
  const pair = markets.filter((m) => m.collateral.symbol.toLowerCase() === collateral?.toLowerCase() && m.loan.symbol.toLowerCase() === loan?.toLowerCase());
  if (pair.length === 1) return pair[0]!;
  if (pair.length > 1) throw new ProtocolError('ambiguous_market', `${input} names ${pair.length} markets: give the id of one: ${pair.map((m) => m.id).join(', ')}`, { field: 'market' });
  throw new ProtocolError('unknown_market', `${input} is not a market here; markets: ${list()}`, { field: 'market' });
}

/** The collateral's value in loan tokens (smallest unit), at the oracle's price. */
export const collateralValue = (m: MorphoMarket, collateral: bigint): bigint => (collateral * m.price) / ORACLE_PRICE_SCALE;

/** One whole collateral token's price in loan tokens (smallest unit), from an oracle-scaled price. */
export const pricePerCollateral = (m: MorphoMarket, price: bigint): bigint => (price * 10n ** BigInt(m.collateral.decimals)) / ORACLE_PRICE_SCALE;

export const MarketSchema = z
  .object({
    id: z.string().meta({ description: 'The market id (keccak256 of its params): what `market` takes' }),
    pair: z.string().meta({ description: 'COLLATERAL/LOAN: also what `market` takes, when one market has the pair' }),
    loan_token: TokenInfoSchema,
    collateral_token: TokenInfoSchema,
    oracle: z.string(),
    irm: z.string(),
    lltv: z.string().meta({ description: 'Liquidation loan-to-value, e.g. 0.86: borrowing beyond it makes the position liquidatable' }),
    oracle_price: AmountSchema.meta({ description: 'One whole collateral token, in loan tokens' }),
    total_supply: AmountSchema,
    total_borrow: AmountSchema,
    utilization: z.string(),
    borrow_apr: z.string().meta({ description: 'Yearly borrow rate at the current utilization, e.g. 0.05 = 5 %' }),
    supply_apr: z.string(),
    fee: z.string(),
  })
  .meta({ id: 'MorphoBlueMarket' });

export function presentMarket(m: MorphoMarket): z.output<typeof MarketSchema> {
  const s = m.state;
  const utilization = s.totalSupplyAssets === 0n ? 0n : (s.totalBorrowAssets * WAD) / s.totalSupplyAssets;
  const borrowApr = m.borrowRate * SECONDS_PER_YEAR;
  return {
    id: m.id,
    pair: `${m.collateral.symbol}/${m.loan.symbol}`,
    loan_token: m.loan,
    collateral_token: m.collateral,
    oracle: m.params.oracle,
    irm: m.params.irm,
    lltv: fixed(m.params.lltv, 18, 4),
    oracle_price: amountOf(pricePerCollateral(m, m.price), m.loan.decimals),
    total_supply: amountOf(s.totalSupplyAssets, m.loan.decimals),
    total_borrow: amountOf(s.totalBorrowAssets, m.loan.decimals),
    utilization: ratio(s.totalBorrowAssets, s.totalSupplyAssets),
    borrow_apr: fixed(borrowApr, 18, 6),
    supply_apr: fixed(wMulDown(wMulDown(borrowApr, utilization), WAD - s.fee), 18, 6),
    fee: fixed(s.fee, 18, 4),
  };
}
