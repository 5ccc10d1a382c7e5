import { decodeFunctionResult, encodeFunctionData, getAddress, parseAbi, type Address, type Hex } from 'viem';
import type { ChainWorker, ReadCall, ReadCallResult } from '../../chain/types.ts';
import type { ChainConfig, PriceSourceConfig } from '../../config/chainConfig.ts';
import type { ChainName } from '../../config/chains.ts';
import { assetKey, configuredPrice, priceOfRound, type Asset, type AssetPrice } from './price.ts';

/**
 * A chain's USD prices (docs/policies.md, "Prices"): configured figures and on-chain oracle reads (AggregatorV3
 * feeds, Aave v3's oracle), each answer bounded in age. Oracle reads go through the chain worker, all the assets of
 * one valuation in one batched read at one block, and are reused for `cacheSeconds` on the chain.
 */
export interface PriceSource {
  readonly chain: ChainName;
  /** The price of each asset (by assetKey), or why it has none, at `now`. Errors: the worker's (rpc_unavailable). */
  prices(assets: readonly Asset[], now: Date): Promise<Map<string, AssetPrice>>;
}

export type PriceChainConfig = Pick<ChainConfig, 'name' | 'tokens' | 'nativeUsdPrice' | 'prices'>;

const FEED_ABI = parseAbi([
  'function latestRoundData() view returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)',
  'function decimals() view returns (uint8)',
]);
const AAVE_ORACLE_ABI = parseAbi([
  'function getAssetPrice(address asset) view returns (uint256)',
  'function BASE_CURRENCY_UNIT() view returns (uint256)',
  'function getSourceOfAsset(address asset) view returns (address)',
]);
const ERC20_DECIMALS_ABI = parseAbi(['function decimals() view returns (uint8)']);

/** The most assets one valuation prices: three reads each stay within a worker's batch (MAX_READ_CALLS, 256). */
export const MAX_PRICED_ASSETS = 64;

interface Cached {
  at: number;
  /** What the chain answered, judged again at each use (its age grows while it is cached). */
  judge: (now: Date) => AssetPrice;
}

/** The price source of one chain, reading through `worker`. */
export function createPriceSource(config: PriceChainConfig, worker: Pick<ChainWorker, 'read'>): PriceSource {
  const { maxAgeSeconds, cacheSeconds } = config.prices;
  const bySymbol = new Map(config.tokens.map((t) => [t.symbol.toLowerCase(), t]));
  const byAddress = new Map(config.tokens.map((t) => [t.address.toLowerCase(), t]));
  // Sources by asset key: a symbol names the configured token of that symbol.
  const sources = new Map<string, PriceSourceConfig>();
  for (const [name, source] of Object.entries(config.prices.tokens)) {
    const address = name.startsWith('0x') ? name : bySymbol.get(name.toLowerCase())?.address;
    if (address) sources.set(address.toLowerCase(), source);
  }
  sources.set('native', config.prices.native ?? { usd: String(config.nativeUsdPrice) });
  const cache = new Map<string, Cached>();
  // The feed Aave's oracle reads for an asset (getSourceOfAsset), by `oracle/asset`: its updatedAt ages the oracle's
  // answer. Learnt once (one more round trip), then checked in every batch: a source changed is read anew.
  const aaveSources = new Map<string, Address>();

  return {
    chain: config.name,
    async prices(assets, now) {
      const out = new Map<string, AssetPrice>();
      const toRead: { key: string; asset: Asset; source: Exclude<PriceSourceConfig, { usd: string }>; knownDecimals: number | undefined }[] = [];
      for (const asset of assets) {
        const key = assetKey(asset);
        if (out.has(key)) continue;
        const source = sources.get(key);
        const knownDecimals = asset === 'native' ? 18 : byAddress.get(key)?.decimals;
        if (!source) {
          out.set(key, { kind: 'unpriced', reason: 'no price is configured for it on this chain' });
          continue;
        }
        const cached = cache.get(key);
        if (cached && now.getTime() - cached.at <= cacheSeconds * 1000) {
          out.set(key, cached.judge(now));
          continue;
        }
        if ('usd' in source && knownDecimals !== undefined) {
          out.set(key, configuredPrice(source.usd, knownDecimals));
          continue;
        }
        if (toRead.length >= MAX_PRICED_ASSETS) {
          out.set(key, { kind: 'unpriced', reason: `more than ${MAX_PRICED_ASSETS} assets to price in one execution` });
          continue;
        }
        out.set(key, { kind: 'unpriced', reason: 'not read' }); // replaced below
        toRead.push({ key, asset, source: source as Exclude<PriceSourceConfig, { usd: string }>, knownDecimals });
      }
      if (toRead.length === 0) return out;
      const aaveAsset = (r: (typeof toRead)[number]): Address | undefined => {
        if (!('aaveOracle' in r.source)) return undefined;
        const a = r.source.asset ?? (r.asset === 'native' ? undefined : r.asset);
        return a && getAddress(a);
      };
      const sourceKey = (oracle: string, asset: string) => `${oracle.toLowerCase()}/${asset.toLowerCase()}`;
      const unknownSources = toRead.flatMap((r) => {
        const asset = aaveAsset(r);
        return asset && 'aaveOracle' in r.source && !aaveSources.has(sourceKey(r.source.aaveOracle, asset)) ? [{ oracle: r.source.aaveOracle, asset }] : [];
      });
      if (unknownSources.length > 0) {
        const learnt = await worker.read(unknownSources.map((u) => ({ to: u.oracle, data: encodeFunctionData({ abi: AAVE_ORACLE_ABI, functionName: 'getSourceOfAsset', args: [u.asset] }) })));
        unknownSources.forEach((u, i) => {
          const s = decoded(learnt.results[i], AAVE_ORACLE_ABI, 'getSourceOfAsset') as Address | undefined;
          if (s !== undefined && BigInt(s) !== 0n) aaveSources.set(sourceKey(u.oracle, u.asset), getAddress(s));
        });
      }

      // One batched read: for each asset its source's calls, then the token's decimals() when not configured.
      const calls: ReadCall[] = [];
      const plans = toRead.map((r) => {
        const start = calls.length;
        if ('feed' in r.source) {
          calls.push({ to: r.source.feed, data: encodeFunctionData({ abi: FEED_ABI, functionName: 'latestRoundData' }) });
          calls.push({ to: r.source.feed, data: encodeFunctionData({ abi: FEED_ABI, functionName: 'decimals' }) });
        } else if ('aaveOracle' in r.source) {
          const priced = aaveAsset(r);
          if (priced === undefined) return { start, count: 0, decimalsAt: undefined, invalid: "Aave's oracle prices the native coin only through an `asset` (its wrapped token)" };
          const feed = aaveSources.get(sourceKey(r.source.aaveOracle, priced));
          if (feed === undefined) return { start, count: 0, decimalsAt: undefined, invalid: `Aave's oracle ${r.source.aaveOracle} names no source feed for ${priced}` };
          calls.push({ to: r.source.aaveOracle, data: encodeFunctionData({ abi: AAVE_ORACLE_ABI, functionName: 'getAssetPrice', args: [priced] }) });
          calls.push({ to: r.source.aaveOracle, data: encodeFunctionData({ abi: AAVE_ORACLE_ABI, functionName: 'BASE_CURRENCY_UNIT' }) });
          calls.push({ to: r.source.aaveOracle, data: encodeFunctionData({ abi: AAVE_ORACLE_ABI, functionName: 'getSourceOfAsset', args: [priced] }) });
          calls.push({ to: feed, data: encodeFunctionData({ abi: FEED_ABI, functionName: 'latestRoundData' }) });
        }
        const count = calls.length - start;
        let decimalsAt: number | undefined;
        if (r.knownDecimals === undefined && r.asset !== 'native') {
          decimalsAt = calls.length;
          calls.push({ to: r.asset, data: encodeFunctionData({ abi: ERC20_DECIMALS_ABI, functionName: 'decimals' }) });
        }
        return { start, count, decimalsAt, invalid: undefined as string | undefined };
      });
      const { results } = await worker.read(calls);
      const at = Date.now();
      toRead.forEach((r, i) => {
        const plan = plans[i]!;
        const asset = aaveAsset(r);
        const expected = asset && 'aaveOracle' in r.source ? aaveSources.get(sourceKey(r.source.aaveOracle, asset)) : undefined;
        const judge = judgeOf(r.source, r.knownDecimals, plan, results, maxAgeSeconds, expected);
        // A source the oracle no longer names is learnt again by the next valuation.
        if (asset && 'aaveOracle' in r.source && expected && !plan.invalid) {
          const now = decoded(results[plan.start + 2], AAVE_ORACLE_ABI, 'getSourceOfAsset') as Address | undefined;
          if (!now || now.toLowerCase() !== expected.toLowerCase()) aaveSources.delete(sourceKey(r.source.aaveOracle, asset));
        }
        cache.set(r.key, { at, judge });
        out.set(r.key, judge(now));
      });
      return out;
    },
  };
}

/** How an asset's read answers become its price at a given time. */
function judgeOf(
  source: Exclude<PriceSourceConfig, { usd: string }> | { usd: string },
  knownDecimals: number | undefined,
  plan: { start: number; count: number; decimalsAt: number | undefined; invalid: string | undefined },
  results: readonly ReadCallResult[],
  maxAgeSeconds: number,
  aaveSource?: Address,
): (now: Date) => AssetPrice {
  const unpriced = (reason: string) => () => ({ kind: 'unpriced', reason }) as AssetPrice;
  if (plan.invalid) return unpriced(plan.invalid);
  let assetDecimals = knownDecimals;
  if (plan.decimalsAt !== undefined) {
    const d = decoded(results[plan.decimalsAt], ERC20_DECIMALS_ABI, 'decimals');
    if (d === undefined || Number(d) > 36) return unpriced('its decimals() could not be read');
    assetDecimals = Number(d);
  }
  const decimals = assetDecimals!;
  if ('usd' in source) {
    const p = configuredPrice(source.usd, decimals);
    return () => p;
  }
  if ('feed' in source) {
    const round = decoded(results[plan.start], FEED_ABI, 'latestRoundData') as readonly [bigint, bigint, bigint, bigint, bigint] | undefined;
    const feedDecimals = decoded(results[plan.start + 1], FEED_ABI, 'decimals');
    if (round === undefined || feedDecimals === undefined) return unpriced(`its feed ${source.feed} could not be read`);
    return (now) => priceOfRound({ answer: round[1], updatedAt: round[3], decimals: Number(feedDecimals) }, decimals, now, maxAgeSeconds);
  }
  const price = decoded(results[plan.start], AAVE_ORACLE_ABI, 'getAssetPrice') as bigint | undefined;
  const unit = decoded(results[plan.start + 1], AAVE_ORACLE_ABI, 'BASE_CURRENCY_UNIT') as bigint | undefined;
  const unitDecimals = unit === undefined ? -1 : unit.toString().length - 1;
  const named = decoded(results[plan.start + 2], AAVE_ORACLE_ABI, 'getSourceOfAsset') as Address | undefined;
  const round = decoded(results[plan.start + 3], FEED_ABI, 'latestRoundData') as readonly [bigint, bigint, bigint, bigint, bigint] | undefined;
  if (price === undefined || unit === undefined || unit !== 10n ** BigInt(unitDecimals)) return unpriced(`Aave's oracle ${source.aaveOracle} could not be read`);
  if (named === undefined || aaveSource === undefined || named.toLowerCase() !== aaveSource.toLowerCase()) return unpriced(`Aave's oracle ${source.aaveOracle} changed the source it reads`);
  if (round === undefined) return unpriced(`the feed Aave's oracle reads (${aaveSource}) could not be read`);
  // Aave's answer (in its base currency unit), aged by the updatedAt of the feed it read it from.
  return (now) => priceOfRound({ answer: price, updatedAt: round[3], decimals: unitDecimals }, decimals, now, maxAgeSeconds, 'aaveOracle');
}

function decoded(result: ReadCallResult | undefined, abi: readonly unknown[], functionName: string): unknown {
  if (!result?.success) return undefined;
  try {
    return (decodeFunctionResult as (p: { abi: readonly unknown[]; functionName: string; data: Hex }) => unknown)({ abi, functionName, data: result.returnData });
  } catch {
    return undefined;
  }
}

/** The price source of each chain, reading through its worker (chains without a worker have none). */
export function priceSources(chains: readonly PriceChainConfig[], workers: ReadonlyMap<ChainName, Pick<ChainWorker, 'read'>>): Map<ChainName, PriceSource> {
  return new Map(chains.flatMap((c) => (workers.has(c.name) ? [[c.name, createPriceSource(c, workers.get(c.name)!)] as const] : [])));
}

