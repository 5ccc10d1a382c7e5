import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { chainUnderTest, freshSecret } from '../../../test/support/chainUnderTest.ts';
import { createChainWorker, type LocalChainWorker } from '../../chain/worker/index.ts';
import { PricesConfigSchema, type ChainConfig } from '../../config/chainConfig.ts';
import { devnetPriceFeedAbi, devnetPriceFeedDeployData } from '../../devnet/contracts.ts';
import { DEVNET_PRICE_MAX_AGE_SECONDS } from '../../devnet/devnet.ts';
import { createPriceSource } from './source.ts';

/**
 * The price source on the devnet (ethereum: the chain with Aave v3), through a real chain worker's batched reads.
 * Feeds of this file's own are deployed for what it changes: the devnet's shared feeds are only read.
 */
describe('price source (devnet)', () => {
  const env = chainUnderTest('ethereum');
  let worker: LocalChainWorker;
  const token = (symbol: string) => env.config.tokens.find((t) => t.symbol === symbol)!.address;
  const send = async (tx: Promise<Hex>) => env.client.waitForTransactionReceipt({ hash: await tx });
  const ownFeed = async (decimals: number, answer: bigint): Promise<Address> => {
    const data = devnetPriceFeedDeployData({ decimals, description: 'test / USD', answer, owner: env.funded.account.address });
    const receipt = await send(env.funded.sendTransaction({ data }));
    return receipt.contractAddress!;
  };
  const setAnswer = (feed: Address, answer: bigint) => send(env.funded.writeContract({ address: feed, abi: devnetPriceFeedAbi, functionName: 'setAnswer', args: [answer] }));
  const withPrices = (prices: object): ChainConfig => ({ ...env.config, prices: PricesConfigSchema.parse(prices) });

  beforeAll(async () => {
    worker = await createChainWorker(env.config, { serviceSecret: freshSecret() });
  });
  afterAll(() => worker?.close());

  it('the devnet configuration prices USDC, WETH and the native coin from Aave’s reserve feeds; aUSD is unpriced', async () => {
    expect(env.config.prices.maxAgeSeconds).toBe(DEVNET_PRICE_MAX_AGE_SECONDS);
    const source = createPriceSource(env.config, worker);
    const p = await source.prices([token('USDC'), token('WETH'), 'native', token('aUSD')], new Date());
    expect(p.get(token('USDC').toLowerCase())).toMatchObject({ kind: 'priced', answer: 100_000_000n, decimals: 8, assetDecimals: 6, source: 'feed' });
    // WETH's feed is Aave's test's to move: only that it is read (a positive answer from the feed).
    expect(p.get(token('WETH').toLowerCase())).toMatchObject({ kind: 'priced', decimals: 8, assetDecimals: 18, source: 'feed' });
    expect(p.get('native')).toMatchObject({ kind: 'priced', decimals: 8, assetDecimals: 18, source: 'feed' });
    expect(p.get(token('aUSD').toLowerCase())).toEqual({ kind: 'unpriced', reason: 'no price is configured for it on this chain' });
  });

  it('base (Compound v3’s feeds) and arbitrum (GMX v2’s) price USDC, WETH and the native coin by feed too', async () => {
    for (const name of ['base', 'arbitrum'] as const) {
      const other = chainUnderTest(name);
      const w = await createChainWorker(other.config, { serviceSecret: freshSecret() });
      try {
        const at = (symbol: string) => other.config.tokens.find((t) => t.symbol === symbol)!.address;
        const p = await createPriceSource(other.config, w).prices([at('USDC'), at('WETH'), 'native'], new Date());
        expect([name, [...p.values()].map((x) => [x.kind, x.kind === 'priced' && x.source])]).toEqual([name, [['priced', 'feed'], ['priced', 'feed'], ['priced', 'feed']]]);
      } finally {
        await w.close();
      }
    }
  });

  it('Aave’s oracle: getAssetPrice in its base currency unit', async () => {
    const oracle = (env.config.protocols.aaveV3 as { oracle: Address }).oracle;
    const source = createPriceSource(withPrices({ tokens: { USDC: { aaveOracle: oracle } } }), worker);
    const p = await source.prices([token('USDC')], new Date());
    expect(p.get(token('USDC').toLowerCase())).toMatchObject({ kind: 'priced', answer: 100_000_000n, decimals: 8, assetDecimals: 6, source: 'aaveOracle' });
    // Aged by the updatedAt of the feed the oracle reads (the devnet's: its deployment, long before a minute's bound).
    const strict = createPriceSource(withPrices({ maxAgeSeconds: 60, tokens: { USDC: { aaveOracle: oracle } } }), worker);
    const updatedAt = (p.get(token('USDC').toLowerCase()) as { updatedAt: number }).updatedAt;
    const later = new Date((updatedAt + 61) * 1000);
    expect((await strict.prices([token('USDC')], later)).get(token('USDC').toLowerCase())).toMatchObject({ kind: 'unpriced', reason: expect.stringContaining('61 s old') });
    // An asset the oracle has no source for: unpriced, never its fallback's guess.
    const none = createPriceSource(withPrices({ tokens: { aUSD: { aaveOracle: oracle } } }), worker);
    expect((await none.prices([token('aUSD')], new Date())).get(token('aUSD').toLowerCase())).toMatchObject({ kind: 'unpriced', reason: expect.stringContaining('names no source feed') });
  });

  it('a feed of 18 decimals; a stale answer, a zero or negative one are unpriced; answers are reused for cacheSeconds', async () => {
    const feed = await ownFeed(18, 2n * 10n ** 18n);
    const aUsd = token('aUSD');
    const key = aUsd.toLowerCase();
    const fresh = createPriceSource(withPrices({ maxAgeSeconds: 600, cacheSeconds: 0, tokens: { aUSD: { feed } } }), worker);
    const now = new Date();
    const priced = (await fresh.prices([aUsd], now)).get(key);
    expect(priced).toMatchObject({ kind: 'priced', answer: 2n * 10n ** 18n, decimals: 18, assetDecimals: 6, source: 'feed' });
    const updatedAt = (priced as { updatedAt: number }).updatedAt;
    // Judged at a later time than the bound allows: stale, never guessed.
    expect((await fresh.prices([aUsd], new Date((updatedAt + 601) * 1000))).get(key)).toMatchObject({ kind: 'unpriced', reason: expect.stringContaining('601 s old') });

    const cached = createPriceSource(withPrices({ cacheSeconds: 60, tokens: { aUSD: { feed } } }), worker);
    await cached.prices([aUsd], now);
    await setAnswer(feed, 0n);
    expect((await fresh.prices([aUsd], new Date())).get(key)).toMatchObject({ kind: 'unpriced', reason: 'the feed answers 0, not a price' });
    // The cached source still has the answer it read (and judges its age again at each use).
    expect((await cached.prices([aUsd], new Date())).get(key)).toMatchObject({ kind: 'priced', answer: 2n * 10n ** 18n });
    await setAnswer(feed, -1n);
    expect((await fresh.prices([aUsd], new Date())).get(key)).toMatchObject({ kind: 'unpriced', reason: 'the feed answers -1, not a price' });
  });

  it('a token named by address outside the configured tokens: its decimals() read in the same batch', async () => {
    const usdc = token('USDC');
    const source = createPriceSource({ ...withPrices({ tokens: { [usdc]: { usd: '1.5' } } }), tokens: [] }, worker);
    expect((await source.prices([usdc], new Date())).get(usdc.toLowerCase())).toEqual({ kind: 'priced', answer: 15n, decimals: 1, assetDecimals: 6, source: 'configured' });
    // A contract that is no token (the devnet's counter): no decimals, so no price.
    const counter = env.counter as Address;
    const odd = createPriceSource(withPrices({ tokens: { [counter]: { usd: '1' } } }), worker);
    expect((await odd.prices([counter], new Date())).get(counter.toLowerCase())).toEqual({ kind: 'unpriced', reason: 'its decimals() could not be read' });
  });
});
