import { describe, expect, it } from 'vitest';
import { decodeFunctionData, encodeFunctionResult, getAddress, type Address, type Hex } from 'viem';
import type { ReadCall, ReadResult } from '../../chain/types.ts';
import { createReader } from '../common/reads.ts';
import { prng, sdk, sdkMarketKeys } from '../../../test/support/gmxSdkOracle.ts';
import { dataStoreAbi, readerAbi } from './abis.generated.ts';
import * as keys from './keys.ts';
import { readExecutionFeeParams, readMarketParams, type ContractMarketPrices, type MarketProps } from './marketParams.ts';

// The reads are answered by an in-memory DataStore and Reader that decode each eth_call as the contracts would
// receive it. Every key holds a distinct value, and the expected value of each field is looked up through the
// SDK's own field → key maps (marketKeysAndConfigs.js, dataStore.js): a field read from the wrong key, or a key
// built wrongly, fails.

const DATA_STORE: Address = '0x0000000000000000000000000000000000da7a00';
const READER: Address = '0x00000000000000000000000000000000000ead00';
const ETH: Address = '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1';
const USDC: Address = '0xaf88d065e77c8cC2239327C5EDb3A432268e5831';
const BTC: Address = '0x47904963fc8b2340414262125aF798B9655E58Cd';

class FakeChain {
  readonly uints = new Map<Hex, bigint>();
  readonly bools = new Map<Hex, boolean>();
  readonly marketInfo = new Map<Address, { pricesSeen: ContractMarketPrices[]; borrowLong: bigint; borrowShort: bigint; funding: bigint; longsPayShorts: boolean; virtual: bigint }>();
  calls = 0;
  batches = 0;
  private next = 1_000n;
  private r = prng(7);

  uint(key: Hex): bigint {
    if (!this.uints.has(key)) this.uints.set(key, (this.next += BigInt(this.r.int(1, 1_000_000))) * 10n ** 20n);
    return this.uints.get(key)!;
  }

  bool(key: Hex): boolean {
    if (!this.bools.has(key)) this.bools.set(key, this.r.bool());
    return this.bools.get(key)!;
  }

  async read(calls: readonly ReadCall[]): Promise<ReadResult> {
    this.batches++;
    this.calls += calls.length;
    return { blockNumber: 1n, results: calls.map((c) => ({ success: true as const, returnData: this.answer(c) })) };
  }

  private answer(c: ReadCall): Hex {
    if (getAddress(c.to) === getAddress(DATA_STORE)) {
      const { functionName, args } = decodeFunctionData({ abi: dataStoreAbi, data: c.data });
      if (functionName === 'getUint') return encodeFunctionResult({ abi: dataStoreAbi, functionName, result: this.uint(args[0]) });
      if (functionName === 'getBool') return encodeFunctionResult({ abi: dataStoreAbi, functionName, result: this.bool(args[0]) });
      throw new Error(`unexpected DataStore.${functionName}`);
    }
    const { functionName, args } = decodeFunctionData({ abi: readerAbi, data: c.data });
    if (functionName !== 'getMarketInfo') throw new Error(`unexpected Reader.${functionName}`);
    const [dataStore, prices, market] = args;
    expect(getAddress(dataStore)).toBe(getAddress(DATA_STORE));
    const state = this.marketInfo.get(getAddress(market))!;
    state.pricesSeen.push(prices);
    const zero2 = { longToken: 0n, shortToken: 0n };
    const zero4 = { long: zero2, short: zero2 };
    return encodeFunctionResult({
      abi: readerAbi,
      functionName,
      result: {
        market: { marketToken: market, indexToken: ETH, longToken: ETH, shortToken: USDC },
        borrowingFactorPerSecondForLongs: state.borrowLong,
        borrowingFactorPerSecondForShorts: state.borrowShort,
        baseFunding: { fundingFeeAmountPerSize: zero4, claimableFundingAmountPerSize: zero4 },
        nextFunding: {
          longsPayShorts: state.longsPayShorts,
          fundingFactorPerSecond: state.funding,
          nextSavedFundingFactorPerSecond: 0n,
          fundingFeeAmountPerSizeDelta: zero4,
          claimableFundingAmountPerSizeDelta: zero4,
        },
        virtualInventory: { virtualPoolAmountForLongToken: 0n, virtualPoolAmountForShortToken: 0n, virtualInventoryForPositions: state.virtual },
        isDisabled: false,
      },
    });
  }
}

const markets: MarketProps[] = [
  { marketToken: '0x70d95587d40A2caf56bd97485aB3Eec10Bee6336', indexToken: ETH, longToken: ETH, shortToken: USDC },
  { marketToken: '0x47c031236e19d024b42f8AE6780E44A573170703', indexToken: BTC, longToken: BTC, shortToken: USDC },
  // A single-token market: both collateral slots are the same token, so GMX's amounts count twice.
  { marketToken: '0x450bb6774Dd8a756274E0ab4107953259d2ac541', indexToken: ETH, longToken: ETH, shortToken: ETH },
];

const priceOf = (i: number): ContractMarketPrices => ({
  indexTokenPrice: { min: 3_000n * 10n ** 12n + BigInt(i), max: 3_001n * 10n ** 12n },
  longTokenPrice: { min: 3_000n * 10n ** 12n, max: 3_001n * 10n ** 12n + BigInt(i) },
  shortTokenPrice: { min: 10n ** 24n, max: 10n ** 24n + BigInt(i) },
});

describe('readMarketParams', () => {
  it('reads every field from the key the SDK reads it from, for all markets in one batch', async () => {
    const chain = new FakeChain();
    markets.forEach((m, i) =>
      chain.marketInfo.set(getAddress(m.marketToken), { pricesSeen: [], borrowLong: 11n + BigInt(i), borrowShort: 22n + BigInt(i), funding: 33n + BigInt(i), longsPayShorts: i % 2 === 0, virtual: -44n * BigInt(i) }),
    );
    const read = createReader(chain);
    const params = await readMarketParams(read, { dataStore: DATA_STORE, reader: READER }, markets.map((market, i) => ({ market, prices: priceOf(i) })));

    expect(chain.batches).toBe(1);
    expect(params).toHaveLength(markets.length);
    markets.forEach((m, i) => {
      const p = params[i]!;
      const sdkMarket = { marketTokenAddress: m.marketToken, indexTokenAddress: m.indexToken, longTokenAddress: m.longToken, shortTokenAddress: m.shortToken };
      const config = sdkMarketKeys.hashMarketConfigKeys(sdkMarket);
      const values = sdkMarketKeys.hashMarketValuesKeys(sdkMarket);
      const uint = (key: Hex) => chain.uints.get(key)!;
      const same: (keyof typeof p)[] = [
        'positionFeeFactorForBalanceWasImproved', 'positionFeeFactorForBalanceWasNotImproved', 'positionImpactFactorPositive', 'positionImpactFactorNegative',
        'positionImpactExponentFactorPositive', 'positionImpactExponentFactorNegative', 'maxPositionImpactFactorPositive', 'maxPositionImpactFactorNegative',
        'maxPositionImpactFactorForLiquidations', 'minCollateralFactor', 'minCollateralFactorForLiquidation', 'minCollateralFactorForOpenInterestLong',
        'minCollateralFactorForOpenInterestShort', 'borrowingFactorLong', 'borrowingFactorShort', 'borrowingExponentFactorLong', 'borrowingExponentFactorShort',
        'fundingFactor', 'fundingExponentFactor', 'reserveFactorLong', 'reserveFactorShort', 'openInterestReserveFactorLong', 'openInterestReserveFactorShort',
        'maxOpenInterestLong', 'maxOpenInterestShort', 'maxLongPoolAmount', 'maxShortPoolAmount', 'maxPnlFactorForTradersLong', 'maxPnlFactorForTradersShort',
      ];
      for (const field of same) expect(p[field], `${field} of market ${i}`).toBe(uint(config[field]!));
      expect(p.isDisabled).toBe(chain.bools.get(config.isDisabled!));
      expect(p.positionImpactPoolAmount).toBe(uint(values.positionImpactPoolAmount!));

      const d = m.longToken === m.shortToken ? 2n : 1n;
      expect(p.longPoolAmount).toBe(uint(values.longPoolAmount!) / d);
      expect(p.shortPoolAmount).toBe(uint(values.shortPoolAmount!) / d);
      expect(p.longInterestUsd).toBe(uint(values.longInterestUsingLongToken!) / d + uint(values.longInterestUsingShortToken!) / d);
      expect(p.shortInterestUsd).toBe(uint(values.shortInterestUsingLongToken!) / d + uint(values.shortInterestUsingShortToken!) / d);
      expect(p.longInterestInTokens).toBe(uint(values.longInterestInTokensUsingLongToken!) / d + uint(values.longInterestInTokensUsingShortToken!) / d);
      expect(p.shortInterestInTokens).toBe(uint(values.shortInterestInTokensUsingLongToken!) / d + uint(values.shortInterestInTokensUsingShortToken!) / d);

      expect(p.minCollateralUsd).toBe(uint(sdk.dataStore.MIN_COLLATERAL_USD_KEY));
      expect(p.minPositionSizeUsd).toBe(uint(sdk.dataStore.MIN_POSITION_SIZE_USD_KEY));
      expect(p.useOpenInterestInTokensForBalance).toBe(chain.bools.get(sdk.dataStore.USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE));

      const info = chain.marketInfo.get(getAddress(m.marketToken))!;
      expect(info.pricesSeen).toEqual([priceOf(i)]);
      expect([p.borrowingFactorPerSecondForLongs, p.borrowingFactorPerSecondForShorts, p.fundingFactorPerSecond, p.longsPayShorts, p.virtualInventoryForPositions]).toEqual([
        info.borrowLong,
        info.borrowShort,
        info.funding,
        info.longsPayShorts,
        info.virtual,
      ]);
      expect([p.marketToken, p.indexToken, p.longToken, p.shortToken]).toEqual([m.marketToken, m.indexToken, m.longToken, m.shortToken]);
    });
    // Distinct values per key: every uint field above came from its own key.
    expect(new Set(chain.uints.values()).size).toBe(chain.uints.size);
  });

  it('reads the execution-fee settings from the keys the SDK reads them from, in one batch', async () => {
    const chain = new FakeChain();
    const fee = await readExecutionFeeParams(createReader(chain), DATA_STORE);
    expect(chain.batches).toBe(1);
    const ds = sdk.dataStore;
    expect(fee).toEqual({
      estimatedGasFeeBaseAmount: chain.uints.get(ds.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1),
      estimatedGasFeePerOraclePrice: chain.uints.get(ds.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE),
      estimatedGasFeeMultiplierFactor: chain.uints.get(ds.ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR),
      increaseOrderGasLimit: chain.uints.get(ds.increaseOrderGasLimitKey()),
      decreaseOrderGasLimit: chain.uints.get(ds.decreaseOrderGasLimitKey()),
      swapOrderGasLimit: chain.uints.get(ds.swapOrderGasLimitKey()),
      singleSwapGasLimit: chain.uints.get(ds.singleSwapGasLimitKey()),
      depositGasLimit: chain.uints.get(ds.depositGasLimitKey()),
      withdrawalGasLimit: chain.uints.get(ds.withdrawalGasLimitKey()),
    });
    expect(Object.values(fee).every((v) => typeof v === 'bigint')).toBe(true);
    expect(keys.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1).toBe(ds.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1);
  });
});
