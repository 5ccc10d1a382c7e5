import { describe, expect, it } from 'vitest';
import { getAddress, type Address } from 'viem';
import { sdk } from '../../../test/support/gmxSdkOracle.ts';
import * as k from './keys.ts';

// GMX's SDK (configs/dataStore.js, utils/hash.js) is the reference the keys are compared with.
const ds = sdk.dataStore;
const markets: Address[] = ['0x70d95587d40A2caf56bd97485aB3Eec10Bee6336', '0x482Df3D320C964808579b585a8AC7Dd5D144eFaF', '0x0000000000000000000000000000000000000001'];
const tokens: Address[] = ['0x82aF49447D8a07e3bd95BD0d56f35241523fBab1', '0xaf88d065e77c8cC2239327C5EDb3A432268e5831'];
const accounts: Address[] = ['0x1111111111111111111111111111111111111111', getAddress('0xabcdef0123456789abcdef0123456789abcdef01')];
const bools = [true, false];

describe('GMX DataStore keys', () => {
  it('names hash as the SDK hashes them', () => {
    const names: [ours: string, sdkName: string][] = [
      ['NONCE', 'NONCE_KEY'],
      ['MARKET_LIST', 'MARKET_LIST_KEY'],
      ['ACCOUNT_ORDER_LIST', 'ACCOUNT_ORDER_LIST_KEY'],
      ['ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1', 'ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1'],
      ['ESTIMATED_GAS_FEE_PER_ORACLE_PRICE', 'ESTIMATED_GAS_FEE_PER_ORACLE_PRICE'],
      ['ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR', 'ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR'],
      ['INCREASE_ORDER_GAS_LIMIT', 'INCREASE_ORDER_GAS_LIMIT_KEY'],
      ['DECREASE_ORDER_GAS_LIMIT', 'DECREASE_ORDER_GAS_LIMIT_KEY'],
      ['SWAP_ORDER_GAS_LIMIT', 'SWAP_ORDER_GAS_LIMIT_KEY'],
      ['SINGLE_SWAP_GAS_LIMIT', 'SINGLE_SWAP_GAS_LIMIT_KEY'],
      ['DEPOSIT_GAS_LIMIT', 'DEPOSIT_GAS_LIMIT_KEY'],
      ['WITHDRAWAL_GAS_LIMIT', 'WITHDRAWAL_GAS_LIMIT_KEY'],
      ['REQUEST_EXPIRATION_TIME', 'REQUEST_EXPIRATION_TIME_KEY'],
      ['MAX_PNL_FACTOR_FOR_DEPOSITS', 'MAX_PNL_FACTOR_FOR_DEPOSITS_KEY'],
      ['MAX_PNL_FACTOR_FOR_WITHDRAWALS', 'MAX_PNL_FACTOR_FOR_WITHDRAWALS_KEY'],
      ['POSITION_FEE_FACTOR', 'POSITION_FEE_FACTOR_KEY'],
      ['POSITION_IMPACT_FACTOR', 'POSITION_IMPACT_FACTOR_KEY'],
      ['POSITION_IMPACT_EXPONENT_FACTOR', 'POSITION_IMPACT_EXPONENT_FACTOR_KEY'],
      ['MAX_POSITION_IMPACT_FACTOR', 'MAX_POSITION_IMPACT_FACTOR_KEY'],
      ['MAX_POSITION_IMPACT_FACTOR_FOR_LIQUIDATIONS', 'MAX_POSITION_IMPACT_FACTOR_FOR_LIQUIDATIONS_KEY'],
      ['MIN_COLLATERAL_FACTOR', 'MIN_COLLATERAL_FACTOR_KEY'],
      ['MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION', 'MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION_KEY'],
      ['MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER', 'MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER_KEY'],
      ['MIN_COLLATERAL_USD', 'MIN_COLLATERAL_USD_KEY'],
      ['MIN_POSITION_SIZE_USD', 'MIN_POSITION_SIZE_USD_KEY'],
      ['BORROWING_FACTOR', 'BORROWING_FACTOR_KEY'],
      ['BORROWING_EXPONENT_FACTOR', 'BORROWING_EXPONENT_FACTOR_KEY'],
      ['FUNDING_FACTOR', 'FUNDING_FACTOR_KEY'],
      ['FUNDING_EXPONENT_FACTOR', 'FUNDING_EXPONENT_FACTOR_KEY'],
      ['RESERVE_FACTOR', 'RESERVE_FACTOR_KEY'],
      ['OPEN_INTEREST_RESERVE_FACTOR', 'OPEN_INTEREST_RESERVE_FACTOR_KEY'],
      ['MAX_OPEN_INTEREST', 'MAX_OPEN_INTEREST_KEY'],
      ['MAX_POOL_AMOUNT', 'MAX_POOL_AMOUNT_KEY'],
      ['MAX_PNL_FACTOR', 'MAX_PNL_FACTOR_KEY'],
      ['MAX_PNL_FACTOR_FOR_TRADERS', 'MAX_PNL_FACTOR_FOR_TRADERS_KEY'],
      ['IS_MARKET_DISABLED', 'IS_MARKET_DISABLED_KEY'],
      ['OPEN_INTEREST', 'OPEN_INTEREST_KEY'],
      ['OPEN_INTEREST_IN_TOKENS', 'OPEN_INTEREST_IN_TOKENS_KEY'],
      ['POOL_AMOUNT', 'POOL_AMOUNT_KEY'],
      ['POSITION_IMPACT_POOL_AMOUNT', 'POSITION_IMPACT_POOL_AMOUNT_KEY'],
      ['CLAIMABLE_FUNDING_AMOUNT', 'CLAIMABLE_FUNDING_AMOUNT'],
      ['USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE', 'USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE'],
    ];
    for (const [ours, theirs] of names) {
      expect(ds[theirs], theirs).toMatch(/^0x[0-9a-f]{64}$/);
      expect((k as unknown as Record<string, string>)[ours], ours).toBe(ds[theirs]);
    }
    // Not in the SDK's table: the name hash itself is checked against the SDK's hashString.
    expect(k.ACCOUNT_POSITION_LIST).toBe(sdk.hash.hashString('ACCOUNT_POSITION_LIST'));
  });

  it('roles are keccak256(abi.encode(name)), as the SDK hashes a string', () => {
    for (const [name, value] of Object.entries(k.ROLES)) expect(value, name).toBe(sdk.hash.hashString(name));
    // A pinned value from GMX's Role.sol docs: CONTROLLER.
    expect(k.ROLES.CONTROLLER).toBe('0x97adf037b2472f4a6a9825eff7d2dd45e37f2dc308df2a260d6a72af4189a65b');
  });

  it('per-market, per-side and per-token keys match the SDK on several markets and accounts', () => {
    let checked = 0;
    const same = (ours: string, theirs: string, what: string) => {
      expect(ours, what).toBe(theirs);
      checked++;
    };
    for (const m of markets) {
      same(k.maxPositionImpactFactorForLiquidationsKey(m), ds.maxPositionImpactFactorForLiquidationsKey(m), 'maxPositionImpactFactorForLiquidations');
      same(k.minCollateralFactorKey(m), ds.minCollateralFactorKey(m), 'minCollateralFactor');
      same(k.minCollateralFactorForLiquidationKey(m), ds.minCollateralFactorForLiquidationKey(m), 'minCollateralFactorForLiquidation');
      same(k.fundingFactorKey(m), ds.fundingFactorKey(m), 'fundingFactor');
      same(k.fundingExponentFactorKey(m), ds.fundingExponentFactorKey(m), 'fundingExponentFactor');
      same(k.positionImpactPoolAmountKey(m), ds.positionImpactPoolAmountKey(m), 'positionImpactPoolAmount');
      same(k.isMarketDisabledKey(m), ds.isMarketDisabledKey(m), 'isMarketDisabled');
      for (const b of bools) {
        same(k.positionFeeFactorKey(m, b), ds.positionFeeFactorKey(m, b), 'positionFeeFactor');
        same(k.positionImpactFactorKey(m, b), ds.positionImpactFactorKey(m, b), 'positionImpactFactor');
        same(k.positionImpactExponentFactorKey(m, b), ds.positionImpactExponentFactorKey(m, b), 'positionImpactExponentFactor');
        same(k.maxPositionImpactFactorKey(m, b), ds.maxPositionImpactFactorKey(m, b), 'maxPositionImpactFactor');
        same(k.minCollateralFactorForOpenInterestMultiplierKey(m, b), ds.minCollateralFactorForOpenInterest(m, b), 'minCollateralFactorForOpenInterest');
        same(k.borrowingFactorKey(m, b), ds.borrowingFactorKey(m, b), 'borrowingFactor');
        same(k.borrowingExponentFactorKey(m, b), ds.borrowingExponentFactorKey(m, b), 'borrowingExponentFactor');
        same(k.reserveFactorKey(m, b), ds.reserveFactorKey(m, b), 'reserveFactor');
        same(k.openInterestReserveFactorKey(m, b), ds.openInterestReserveFactorKey(m, b), 'openInterestReserveFactor');
        same(k.maxOpenInterestKey(m, b), ds.maxOpenInterestKey(m, b), 'maxOpenInterest');
        same(k.maxPnlFactorKey(k.MAX_PNL_FACTOR_FOR_TRADERS, m, b), ds.maxPnlFactorKey(ds.MAX_PNL_FACTOR_FOR_TRADERS_KEY, m, b), 'maxPnlFactor');
        for (const t of tokens) {
          same(k.openInterestKey(m, t, b), ds.openInterestKey(m, t, b), 'openInterest');
          same(k.openInterestInTokensKey(m, t, b), ds.openInterestInTokensKey(m, t, b), 'openInterestInTokens');
        }
      }
      for (const t of tokens) {
        same(k.poolAmountKey(m, t), ds.poolAmountKey(m, t), 'poolAmount');
        same(k.maxPoolAmountKey(m, t), ds.maxPoolAmountKey(m, t), 'maxPoolAmount');
        for (const a of accounts) same(k.claimableFundingAmountKey(m, t, a), ds.claimableFundingAmountKey(m, t, a), 'claimableFundingAmount');
        for (const a of accounts) for (const b of bools) same(k.positionKey(a, m, t, b), ds.hashedPositionKey(a, m, t, b), 'positionKey');
      }
    }
    for (const a of accounts) same(k.accountOrderListKey(a), ds.accountOrderListKey(a), 'accountOrderList');
    for (const n of [0n, 1n, 123_456_789n]) same(k.orderKeyAt(markets[0]!, n), ds.orderKey(markets[0]!, n), 'orderKey');
    expect(checked).toBe(3 * (7 + 2 * (11 + 2 * 2)) + 3 * 2 * (2 + 2 + 4) + 2 + 3);
  });
});
