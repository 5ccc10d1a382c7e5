import { encodeAbiParameters, keccak256, type Address, type Hex } from 'viem';

/**
 * GMX v2's DataStore keys, as its Keys.sol derives them: a name is keccak256(abi.encode(string)), a per-market (or
 * per-account) value is keccak256(abi.encode(NAME_KEY, market, …)). Everything perp-v2 reads from the DataStore or
 * checks in the RoleStore goes through here, so one table can be compared with GMX's SDK (keys.test.ts).
 */

type AbiType = 'string' | 'bytes32' | 'address' | 'bool' | 'uint256';

function hashOf(types: readonly AbiType[], values: readonly unknown[]): Hex {
  return keccak256(encodeAbiParameters(types.map((type) => ({ type })), values as never));
}

/** keccak256(abi.encode(name)): a DataStore key's base, and a RoleStore role (Role.sol hashes the same way). */
export function hashName(name: string): Hex {
  return hashOf(['string'], [name]);
}

// Names (Keys.sol constants).
export const NONCE = hashName('NONCE');
export const MARKET_LIST = hashName('MARKET_LIST');
export const ACCOUNT_ORDER_LIST = hashName('ACCOUNT_ORDER_LIST');
export const ACCOUNT_POSITION_LIST = hashName('ACCOUNT_POSITION_LIST');
export const ACCOUNT_DEPOSIT_LIST = hashName('ACCOUNT_DEPOSIT_LIST');
export const ACCOUNT_WITHDRAWAL_LIST = hashName('ACCOUNT_WITHDRAWAL_LIST');
/** Seconds after its last update before an account may cancel its pending market order, deposit or withdrawal. */
export const REQUEST_EXPIRATION_TIME = hashName('REQUEST_EXPIRATION_TIME');
/** The pnlFactorType a GM token is priced with for a deposit (maximized) and a withdrawal (minimized). */
export const MAX_PNL_FACTOR_FOR_DEPOSITS = hashName('MAX_PNL_FACTOR_FOR_DEPOSITS');
export const MAX_PNL_FACTOR_FOR_WITHDRAWALS = hashName('MAX_PNL_FACTOR_FOR_WITHDRAWALS');

export const ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1 = hashName('ESTIMATED_GAS_FEE_BASE_AMOUNT_V2_1');
export const ESTIMATED_GAS_FEE_PER_ORACLE_PRICE = hashName('ESTIMATED_GAS_FEE_PER_ORACLE_PRICE');
export const ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR = hashName('ESTIMATED_GAS_FEE_MULTIPLIER_FACTOR');
export const INCREASE_ORDER_GAS_LIMIT = hashName('INCREASE_ORDER_GAS_LIMIT');
export const DECREASE_ORDER_GAS_LIMIT = hashName('DECREASE_ORDER_GAS_LIMIT');
export const SWAP_ORDER_GAS_LIMIT = hashName('SWAP_ORDER_GAS_LIMIT');
export const SINGLE_SWAP_GAS_LIMIT = hashName('SINGLE_SWAP_GAS_LIMIT');
export const DEPOSIT_GAS_LIMIT = hashName('DEPOSIT_GAS_LIMIT');
export const WITHDRAWAL_GAS_LIMIT = hashName('WITHDRAWAL_GAS_LIMIT');

export const POSITION_FEE_FACTOR = hashName('POSITION_FEE_FACTOR');
export const POSITION_IMPACT_FACTOR = hashName('POSITION_IMPACT_FACTOR');
export const POSITION_IMPACT_EXPONENT_FACTOR = hashName('POSITION_IMPACT_EXPONENT_FACTOR');
export const MAX_POSITION_IMPACT_FACTOR = hashName('MAX_POSITION_IMPACT_FACTOR');
export const MAX_POSITION_IMPACT_FACTOR_FOR_LIQUIDATIONS = hashName('MAX_POSITION_IMPACT_FACTOR_FOR_LIQUIDATIONS');
export const MIN_COLLATERAL_FACTOR = hashName('MIN_COLLATERAL_FACTOR');
export const MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION = hashName('MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION');
export const MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER = hashName('MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER');
export const MIN_COLLATERAL_USD = hashName('MIN_COLLATERAL_USD');
export const MIN_POSITION_SIZE_USD = hashName('MIN_POSITION_SIZE_USD');
export const BORROWING_FACTOR = hashName('BORROWING_FACTOR');
export const BORROWING_EXPONENT_FACTOR = hashName('BORROWING_EXPONENT_FACTOR');
export const FUNDING_FACTOR = hashName('FUNDING_FACTOR');
export const FUNDING_EXPONENT_FACTOR = hashName('FUNDING_EXPONENT_FACTOR');
export const RESERVE_FACTOR = hashName('RESERVE_FACTOR');
export const OPEN_INTEREST_RESERVE_FACTOR = hashName('OPEN_INTEREST_RESERVE_FACTOR');
export const MAX_OPEN_INTEREST = hashName('MAX_OPEN_INTEREST');
export const MAX_POOL_AMOUNT = hashName('MAX_POOL_AMOUNT');
export const MAX_PNL_FACTOR = hashName('MAX_PNL_FACTOR');
export const MAX_PNL_FACTOR_FOR_TRADERS = hashName('MAX_PNL_FACTOR_FOR_TRADERS');
export const IS_MARKET_DISABLED = hashName('IS_MARKET_DISABLED');

export const OPEN_INTEREST = hashName('OPEN_INTEREST');
export const OPEN_INTEREST_IN_TOKENS = hashName('OPEN_INTEREST_IN_TOKENS');
export const POOL_AMOUNT = hashName('POOL_AMOUNT');
export const POSITION_IMPACT_POOL_AMOUNT = hashName('POSITION_IMPACT_POOL_AMOUNT');
export const CLAIMABLE_FUNDING_AMOUNT = hashName('CLAIMABLE_FUNDING_AMOUNT');
export const USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE = hashName('USE_OPEN_INTEREST_IN_TOKENS_FOR_BALANCE');

/** RoleStore roles (Role.sol): who may call the routers' handlers, execute orders, and pull tokens. */
export const ROLES = {
  CONTROLLER: hashName('CONTROLLER'),
  ORDER_KEEPER: hashName('ORDER_KEEPER'),
  ROUTER_PLUGIN: hashName('ROUTER_PLUGIN'),
  MARKET_KEEPER: hashName('MARKET_KEEPER'),
  CONFIG_KEEPER: hashName('CONFIG_KEEPER'),
} as const;

// Composite keys (Keys.sol functions), by what they key.
const byMarket = (base: Hex, market: Address) => hashOf(['bytes32', 'address'], [base, market]);
const byMarketSide = (base: Hex, market: Address, flag: boolean) => hashOf(['bytes32', 'address', 'bool'], [base, market, flag]);
const byMarketToken = (base: Hex, market: Address, token: Address) => hashOf(['bytes32', 'address', 'address'], [base, market, token]);

/** `forPositiveImpact`: GMX charges the lower fee when the order improves the long/short balance. */
export const positionFeeFactorKey = (market: Address, forPositiveImpact: boolean) => byMarketSide(POSITION_FEE_FACTOR, market, forPositiveImpact);
export const positionImpactFactorKey = (market: Address, isPositive: boolean) => byMarketSide(POSITION_IMPACT_FACTOR, market, isPositive);
export const positionImpactExponentFactorKey = (market: Address, isPositive: boolean) => byMarketSide(POSITION_IMPACT_EXPONENT_FACTOR, market, isPositive);
export const maxPositionImpactFactorKey = (market: Address, isPositive: boolean) => byMarketSide(MAX_POSITION_IMPACT_FACTOR, market, isPositive);
export const maxPositionImpactFactorForLiquidationsKey = (market: Address) => byMarket(MAX_POSITION_IMPACT_FACTOR_FOR_LIQUIDATIONS, market);
export const minCollateralFactorKey = (market: Address) => byMarket(MIN_COLLATERAL_FACTOR, market);
export const minCollateralFactorForLiquidationKey = (market: Address) => byMarket(MIN_COLLATERAL_FACTOR_FOR_LIQUIDATION, market);
export const minCollateralFactorForOpenInterestMultiplierKey = (market: Address, isLong: boolean) =>
  byMarketSide(MIN_COLLATERAL_FACTOR_FOR_OPEN_INTEREST_MULTIPLIER, market, isLong);
export const borrowingFactorKey = (market: Address, isLong: boolean) => byMarketSide(BORROWING_FACTOR, market, isLong);
export const borrowingExponentFactorKey = (market: Address, isLong: boolean) => byMarketSide(BORROWING_EXPONENT_FACTOR, market, isLong);
export const fundingFactorKey = (market: Address) => byMarket(FUNDING_FACTOR, market);
export const fundingExponentFactorKey = (market: Address) => byMarket(FUNDING_EXPONENT_FACTOR, market);
export const reserveFactorKey = (market: Address, isLong: boolean) => byMarketSide(RESERVE_FACTOR, market, isLong);
export const openInterestReserveFactorKey = (market: Address, isLong: boolean) => byMarketSide(OPEN_INTEREST_RESERVE_FACTOR, market, isLong);
export const maxOpenInterestKey = (market: Address, isLong: boolean) => byMarketSide(MAX_OPEN_INTEREST, market, isLong);
export const maxPoolAmountKey = (market: Address, token: Address) => byMarketToken(MAX_POOL_AMOUNT, market, token);
/** `pnlFactorType`: MAX_PNL_FACTOR_FOR_TRADERS caps the PnL a trader can realise (the SDK's pool-PnL cap). */
export const maxPnlFactorKey = (pnlFactorType: Hex, market: Address, isLong: boolean) =>
  hashOf(['bytes32', 'bytes32', 'address', 'bool'], [MAX_PNL_FACTOR, pnlFactorType, market, isLong]);
export const isMarketDisabledKey = (market: Address) => byMarket(IS_MARKET_DISABLED, market);

/** Open interest of one side held with one collateral token (a market's OI is the sum over its two tokens). */
export const openInterestKey = (market: Address, collateralToken: Address, isLong: boolean) =>
  hashOf(['bytes32', 'address', 'address', 'bool'], [OPEN_INTEREST, market, collateralToken, isLong]);
export const openInterestInTokensKey = (market: Address, collateralToken: Address, isLong: boolean) =>
  hashOf(['bytes32', 'address', 'address', 'bool'], [OPEN_INTEREST_IN_TOKENS, market, collateralToken, isLong]);
export const poolAmountKey = (market: Address, token: Address) => byMarketToken(POOL_AMOUNT, market, token);
export const positionImpactPoolAmountKey = (market: Address) => byMarket(POSITION_IMPACT_POOL_AMOUNT, market);
export const claimableFundingAmountKey = (market: Address, token: Address, account: Address) =>
  hashOf(['bytes32', 'address', 'address', 'address'], [CLAIMABLE_FUNDING_AMOUNT, market, token, account]);
export const accountOrderListKey = (account: Address) => hashOf(['bytes32', 'address'], [ACCOUNT_ORDER_LIST, account]);
export const accountPositionListKey = (account: Address) => hashOf(['bytes32', 'address'], [ACCOUNT_POSITION_LIST, account]);
export const accountDepositListKey = (account: Address) => hashOf(['bytes32', 'address'], [ACCOUNT_DEPOSIT_LIST, account]);
export const accountWithdrawalListKey = (account: Address) => hashOf(['bytes32', 'address'], [ACCOUNT_WITHDRAWAL_LIST, account]);

/** A position's key (Position.getPositionKey): keccak256(abi.encode(account, market, collateralToken, isLong)). */
export const positionKey = (account: Address, market: Address, collateralToken: Address, isLong: boolean) =>
  hashOf(['address', 'address', 'address', 'bool'], [account, market, collateralToken, isLong]);

/** The key the next created order gets (NonceUtils.getKey): keccak256(abi.encode(dataStore, nonce)) of the incremented NONCE. */
export const orderKeyAt = (dataStore: Address, nonce: bigint) => hashOf(['address', 'uint256'], [dataStore, nonce]);
