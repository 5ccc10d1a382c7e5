import { getAddress, isAddress, type Address } from 'viem';
import type { TokenInfo } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf } from '../common/reads.ts';
import type { ProtocolContext } from '../types.ts';
import { readerAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { priceSourceFor, type OracleToken, type TokenPrice } from './prices.ts';

/** How many markets one read lists: GMX's Reader pages by index. */
const MARKETS_PAGE = 100n;

export interface GmxMarket {
  /** The market token's address: the market's id. */
  address: Address;
  /** `ETH/USD [WETH-USDC]`, as GMX's interface names it. */
  name: string;
  /** What the market trades, as GMX's interface says it: ETH for a WETH index (the wrapped native token), else the index symbol. */
  indexSymbol: string;
  index: OracleToken;
  long: TokenInfo;
  short: TokenInfo;
}

/** GMX's MarketUtils.MarketPrices: each token's min and max price, contract format. */
export interface MarketPrices {
  indexTokenPrice: { min: bigint; max: bigint };
  longTokenPrice: { min: bigint; max: bigint };
  shortTokenPrice: { min: bigint; max: bigint };
}

export interface MarketsNow {
  markets: GmxMarket[];
  prices: ReadonlyMap<Address, TokenPrice>;
  /** The tokens the oracle prices, by address. */
  tokens: ReadonlyMap<Address, OracleToken>;
}

const tokenInfo = (t: OracleToken): TokenInfo => ({ symbol: t.symbol, address: t.address, decimals: t.decimals });

/**
 * The markets served (the Reader's list, or the configured subset), each with its tokens as the oracle names them,
 * and the oracle's prices now. A market whose tokens the oracle does not price is left out: nothing about it can be
 * valued, and GMX's keepers could not execute an order in it either.
 */
export async function marketsNow(ctx: ProtocolContext<'gmxV2'>): Promise<MarketsNow> {
  const config = ctx.config as GmxV2Config;
  const source = priceSourceFor(config.oracleUrl);
  const [[listed], tokens, prices] = await Promise.all([
    ctx.read([readOf({ address: config.reader, abi: readerAbi, functionName: 'getMarkets', args: [config.dataStore, 0n, MARKETS_PAGE] })]),
    source.tokens(),
    source.prices(),
  ]);
  const wanted = config.markets?.map((m) => m.toLowerCase());
  const markets: GmxMarket[] = [];
  for (const m of listed) {
    if (wanted && !wanted.includes(m.marketToken.toLowerCase())) continue;
    const [index, long, short] = [tokens.get(m.indexToken), tokens.get(m.longToken), tokens.get(m.shortToken)];
    if (!index || !long || !short) continue;
    const indexSymbol = index.address.toLowerCase() === config.wnt.toLowerCase() ? index.symbol.replace(/^W/, '') : index.symbol;
    markets.push({
      address: getAddress(m.marketToken),
      name: `${indexSymbol}/USD [${long.symbol}-${short.symbol}]`,
      indexSymbol,
      index,
      long: tokenInfo(long),
      short: tokenInfo(short),
    });
  }
  return { markets, prices, tokens };
}

/** The market as GMX's contracts take it (Market.Props). */
export const marketProps = (m: GmxMarket) => ({ marketToken: m.address, indexToken: m.index.address, longToken: m.long.address, shortToken: m.short.address });

/** A token's price, or a protocol_read_failed naming it (an oracle that stopped pricing a listed token). */
export function priceOf(prices: ReadonlyMap<Address, TokenPrice>, token: { address: Address; symbol: string }): TokenPrice {
  const p = prices.get(getAddress(token.address));
  if (!p) throw new ProtocolError('protocol_read_failed', `GMX's oracle keeper gives no price for ${token.symbol} (${token.address})`);
  return p;
}

export function marketPricesOf(m: GmxMarket, prices: ReadonlyMap<Address, TokenPrice>): MarketPrices {
  const pick = (t: { address: Address; symbol: string }) => {
    const p = priceOf(prices, t);
    return { min: p.min, max: p.max };
  };
  return { indexTokenPrice: pick(m.index), longTokenPrice: pick(m.long), shortTokenPrice: pick(m.short) };
}

/**
 * The market an input names: its market token's address, or its index symbol (`ETH`, `ETH/USD`) when one served
 * market has that index; several is ambiguous_market (give the address), none unknown_market.
 */
export function findMarket<M extends GmxMarket>(markets: readonly M[], input: string, field = 'market'): M {
  if (isAddress(input, { strict: false })) {
    const m = markets.find((x) => x.address.toLowerCase() === input.toLowerCase());
    if (m) return m;
  } else {
    const symbol = input.replace(/\/USD$/i, '').toLowerCase();
    const found = markets.filter((x) => x.indexSymbol.toLowerCase() === symbol || x.index.symbol.toLowerCase() === symbol);
    if (found.length === 1) return found[0]!;
    if (found.length > 1) {
      throw new ProtocolError('ambiguous_market', `${input} names ${found.length} markets: give one's address (${found.map((f) => `${f.name} ${f.address}`).join(', ')})`, { field });
    }
  }
  const known = markets.map((m) => `${m.name} (${m.address})`).join(', ');
  throw new ProtocolError('unknown_market', `${input} is not a GMX market served here; the markets are: ${known}`, { field });
}
