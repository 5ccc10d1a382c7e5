import type { Address, Hex } from 'viem';
import { readOf, type Read, type Reader } from '../common/reads.ts';
import { dataStoreAbi, readerAbi } from './abis.generated.ts';
import * as keys from './keys.ts';
import type { ExecutionFeeParams } from './math/executionFee.ts';
import type { MarketParams } from './math/market.ts';

/** A market as the Reader lists it (Market.Props). */
export interface MarketProps {
  marketToken: Address;
  indexToken: Address;
  longToken: Address;
  shortToken: Address;
}

/** Prices as the contracts take them: USD per smallest unit, 30 − decimals (the oracle's signed min/max). */
export interface ContractPrice {
  min: bigint;
  max: bigint;
}
export interface ContractMarketPrices {
  indexTokenPrice: ContractPrice;
  longTokenPrice: ContractPrice;
  shortTokenPrice: ContractPrice;
}

export interface GmxContracts {
  dataStore: Address;
  reader: Address;
}

type UintField = {
  [K in keyof MarketParams]: MarketParams[K] extends bigint ? K : never;
}[keyof MarketParams];

/** The market's DataStore uints, field by field: config, then state (open interest and pools are summed below). */
function uintKeys(m: MarketProps): [UintField, Hex][] {
  const mk = m.marketToken;
  return [
    ['positionFeeFactorForBalanceWasImproved', keys.positionFeeFactorKey(mk, true)],
    ['positionFeeFactorForBalanceWasNotImproved', keys.positionFeeFactorKey(mk, false)],
    ['positionImpactFactorPositive', keys.positionImpactFactorKey(mk, true)],
    ['positionImpactFactorNegative', keys.positionImpactFactorKey(mk, false)],
    ['positionImpactExponentFactorPositive', keys.positionImpactExponentFactorKey(mk, true)],
    ['positionImpactExponentFactorNegative', keys.positionImpactExponentFactorKey(mk, false)],
    ['maxPositionImpactFactorPositive', keys.maxPositionImpactFactorKey(mk, true)],
    ['maxPositionImpactFactorNegative', keys.maxPositionImpactFactorKey(mk, false)],
    ['maxPositionImpactFactorForLiquidations', keys.maxPositionImpactFactorForLiquidationsKey(mk)],
    ['minCollateralFactor', keys.minCollateralFactorKey(mk)],
    ['minCollateralFactorForLiquidation', keys.minCollateralFactorForLiquidationKey(mk)],
    ['minCollateralFactorForOpenInterestLong', keys.minCollateralFactorForOpenInterestMultiplierKey(mk, true)],
    ['minCollateralFactorForOpenInterestShort', keys.minCollateralFactorForOpenInterestMultiplierKey(mk, false)],
    ['borrowingFactorLong', keys.borrowingFactorKey(mk, true)],
    ['borrowingFactorShort', keys.borrowingFactorKey(mk, false)],
    ['borrowingExponentFactorLong', keys.borrowingExponentFactorKey(mk, true)],
    ['borrowingExponentFactorShort', keys.borrowingExponentFactorKey(mk, false)],
    ['fundingFactor', keys.fundingFactorKey(mk)],
    ['fundingExponentFactor', keys.fundingExponentFactorKey(mk)],
    ['reserveFactorLong', keys.reserveFactorKey(mk, true)],
    ['reserveFactorShort', keys.reserveFactorKey(mk, false)],
    ['openInterestReserveFactorLong', keys.openInterestReserveFactorKey(mk, true)],
    ['openInterestReserveFactorShort', keys.openInterestReserveFactorKey(mk, false)],
    ['maxOpenInterestLong', keys.maxOpenInterestKey(mk, true)],
    ['maxOpenInterestShort', keys.maxOpenInterestKey(mk, false)],
    ['maxLongPoolAmount', keys.maxPoolAmountKey(mk, m.longToken)],
    ['maxShortPoolAmount', keys.maxPoolAmountKey(mk, m.shortToken)],
    ['maxPnlFactorForTradersLong', keys.maxPnlFactorKey(keys.MAX_PNL_FACTOR_FOR_TRADERS, mk, true)],
    ['maxPnlFactorForTradersShort', keys.maxPnlFactorKey(keys.MAX_PNL_FACTOR_FOR_TRADERS, mk, false)],
    ['positionImpactPoolAmount', keys.positionImpactPoolAmountKey(mk)],
  ];
}

/** Open interest is stored per (collateral token, side): the four slots of USD, then of index tokens. */
function openInterestKeys(m: MarketProps): Hex[] {
  const slots = [
    [m.longToken, true],
    [m.shortToken, true],
    [m.longToken, false],
    [m.shortToken, false],
  ] as const;
  return [
    ...slots.map(([token, isLong]) => keys.openInterestKey(m.marketToken, token, isLong)),
    ...slots.map(([token, isLong]) => keys.openInterestInTokensKey(m.marketToken, token, isLong)),
  ];
}

export const uintRead = (dataStore: Address, key: Hex, label: string) => readOf({ address: dataStore, abi: dataStoreAbi, functionName: 'getUint', args: [key], label: `DataStore ${label}` });

const GLOBAL_READS = 3;
function globalReads(dataStore: Address) {
  return [
    uintRead(dataStore, keys.MIN_COLLATERAL_USD, 'MIN_COLLATERAL_USD'),
    uintRead(dataStore, keys.MIN_POSITION_SIZE_USD, 'MIN_POSITION_SIZE_USD'),
    readOf({ address: dataStore, abi: dataStoreAbi, functionName: 'getBool', args: [keys.USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE], label: 'DataStore USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE' }),
  ] as const;
}

function marketReads(gmx: GmxContracts, m: MarketProps, prices: ContractMarketPrices): Read<unknown>[] {
  const at = m.marketToken;
  return [
    readOf({ address: gmx.reader, abi: readerAbi, functionName: 'getMarketInfo', args: [gmx.dataStore, prices, at], label: `Reader.getMarketInfo(${at})` }),
    readOf({ address: gmx.dataStore, abi: dataStoreAbi, functionName: 'getBool', args: [keys.isMarketDisabledKey(at)], label: `DataStore IS_MARKET_DISABLED(${at})` }),
    uintRead(gmx.dataStore, keys.poolAmountKey(at, m.longToken), `POOL_AMOUNT(${at}, long)`),
    uintRead(gmx.dataStore, keys.poolAmountKey(at, m.shortToken), `POOL_AMOUNT(${at}, short)`),
    ...openInterestKeys(m).map((key) => uintRead(gmx.dataStore, key, `OPEN_INTEREST(${at})`)),
    ...uintKeys(m).map(([field, key]) => uintRead(gmx.dataStore, key, `${field}(${at})`)),
  ];
}

type ReaderMarketInfo = {
  borrowingFactorPerSecondForLongs: bigint;
  borrowingFactorPerSecondForShorts: bigint;
  nextFunding: { longsPayShorts: boolean; fundingFactorPerSecond: bigint };
  virtualInventory: { virtualInventoryForPositions: bigint };
};

/**
 * Everything the position math needs about each market, in one batched read (one round trip at one block, however
 * many markets): per market the Reader's getMarketInfo at the given prices and ~45 DataStore values, plus the three
 * global ones. Open interest and pool amounts of a market whose long and short token are the same are halved (GMX
 * keys both slots the same), as the SDK's markets module does.
 */
export async function readMarketParams(
  read: Reader,
  gmx: GmxContracts,
  markets: readonly { market: MarketProps; prices: ContractMarketPrices }[],
): Promise<MarketParams[]> {
  const perMarket = markets.map(({ market, prices }) => marketReads(gmx, market, prices));
  const results = (await read([...globalReads(gmx.dataStore), ...perMarket.flat()] as never[])) as unknown[];
  const [minCollateralUsd, minPositionSizeUsd, useOpenInterestInTokensForBalance] = results.slice(0, GLOBAL_READS) as [bigint, bigint, boolean];
  let at = GLOBAL_READS;
  return markets.map(({ market }, i) => {
    const v = results.slice(at, at + perMarket[i]!.length);
    at += perMarket[i]!.length;
    const info = v[0] as ReaderMarketInfo;
    const isDisabled = v[1] as boolean;
    const divisor = market.longToken.toLowerCase() === market.shortToken.toLowerCase() ? 2n : 1n;
    const [longPool, shortPool, ...rest] = (v.slice(2) as bigint[]).map((x, j) => (j < 2 + 8 ? x / divisor : x));
    const oi = rest.slice(0, 8);
    const uints = Object.fromEntries(uintKeys(market).map(([field], j) => [field, rest[8 + j]!])) as Record<UintField, bigint>;
    return {
      ...uints,
      marketToken: market.marketToken,
      indexToken: market.indexToken,
      longToken: market.longToken,
      shortToken: market.shortToken,
      isDisabled,
      minCollateralUsd,
      minPositionSizeUsd,
      useOpenInterestInTokensForBalance,
      longPoolAmount: longPool!,
      shortPoolAmount: shortPool!,
      longInterestUsd: oi[0]! + oi[1]!,
      shortInterestUsd: oi[2]! + oi[3]!,
      longInterestInTokens: oi[4]! + oi[5]!,
      shortInterestInTokens: oi[6]! + oi[7]!,
      borrowingFactorPerSecondForLongs: info.borrowingFactorPerSecondForLongs,
      borrowingFactorPerSecondForShorts: info.borrowingFactorPerSecondForShorts,
      fundingFactorPerSecond: info.nextFunding.fundingFactorPerSecond,
      longsPayShorts: info.nextFunding.longsPayShorts,
      virtualInventoryForPositions: info.virtualInventory.virtualInventoryForPositions,
    };
  });
}

const EXECUTION_FEE_KEYS: [keyof ExecutionFeeParams, Hex, string][] = [
  ['estimatedGasFeeBaseAmount', keys.ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1, 'ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1'],
  ['estimatedGasFeePerOraclePrice', keys.ESTIMATED_GAS_FEE_PER_ORACLE_PRICE, 'ESTIMATED_GAS_FEE_PER_ORACLE_PRICE'],
  ['estimatedGasFeeMultiplierFactor', keys.ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR, 'ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR'],
  ['increaseOrderGasLimit', keys.INCREASE_ORDER_GAS_LIMIT, 'INCREASE_ORDER_GAS_LIMIT'],
  ['decreaseOrderGasLimit', keys.DECREASE_ORDER_GAS_LIMIT, 'DECREASE_ORDER_GAS_LIMIT'],
  ['swapOrderGasLimit', keys.SWAP_ORDER_GAS_LIMIT, 'SWAP_ORDER_GAS_LIMIT'],
  ['singleSwapGasLimit', keys.SINGLE_SWAP_GAS_LIMIT, 'SINGLE_SWAP_GAS_LIMIT'],
  ['depositGasLimit', keys.DEPOSIT_GAS_LIMIT, 'DEPOSIT_GAS_LIMIT'],
  ['withdrawalGasLimit', keys.WITHDRAWAL_GAS_LIMIT, 'WITHDRAWAL_GAS_LIMIT'],
];

/** The execution-fee reads, to batch with others (decode the answers with `executionFeeParamsOf`). */
export const executionFeeReads = (dataStore: Address): Read<bigint>[] => EXECUTION_FEE_KEYS.map(([, key, name]) => uintRead(dataStore, key, name));

export function executionFeeParamsOf(values: readonly bigint[]): ExecutionFeeParams {
  return Object.fromEntries(EXECUTION_FEE_KEYS.map(([field], i) => [field, values[i]!])) as unknown as ExecutionFeeParams;
}

/** The DataStore's execution-fee settings, in one batched read. */
export async function readExecutionFeeParams(read: Reader, dataStore: Address): Promise<ExecutionFeeParams> {
  return executionFeeParamsOf((await read(executionFeeReads(dataStore) as never[])) as bigint[]);
}
