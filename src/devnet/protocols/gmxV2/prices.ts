import { createPublicClient, http, type Address, type Chain } from 'viem';
import { devnetPriceFeedAbi } from '../../contracts.ts';
import { FEED_DECIMALS } from './market.ts';

/** A token the devnet's GMX prices, and the DevnetPriceFeed (8-decimal USD) its price is read from. */
export interface GmxPricedToken {
  symbol: string;
  token: Address;
  decimals: number;
  feed: Address;
}

export interface GmxTokenPrice extends GmxPricedToken {
  /** GMX's price format: USD per smallest unit × 10^30, i.e. USD × 10^(30 − decimals). */
  price: bigint;
  /** The feed's last update (seconds). */
  updatedAt: bigint;
}

/** A feed's 8-decimal USD answer in GMX's per-unit 30-decimal format. */
export function gmxPrice(answer: bigint, tokenDecimals: number): bigint {
  const shift = 30 - tokenDecimals - FEED_DECIMALS;
  return shift >= 0 ? answer * 10n ** BigInt(shift) : answer / 10n ** BigInt(-shift);
}

/** Reads every feed in one JSON-RPC batch. */
export function feedReader(chain: Chain): (tokens: readonly GmxPricedToken[]) => Promise<GmxTokenPrice[]> {
  const client = createPublicClient({ chain, transport: http(undefined, { batch: true }) });
  return async (tokens) => {
    const rounds = await Promise.all(tokens.map((t) => client.readContract({ address: t.feed, abi: devnetPriceFeedAbi, functionName: 'latestRoundData' })));
    return tokens.map((t, i) => {
      const [, answer, , updatedAt] = rounds[i]!;
      if (answer <= 0n) throw new Error(`gmxV2: the ${t.symbol} feed at ${t.feed} answers ${answer}`);
      return { ...t, price: gmxPrice(answer, t.decimals), updatedAt };
    });
  };
}
