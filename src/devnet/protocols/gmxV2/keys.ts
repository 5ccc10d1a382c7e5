import { encodeAbiParameters, keccak256, type Address, type Hex } from 'viem';
import { hashName, ROLES as GMX_ROLES } from '../../../protocols/gmxV2/keys.ts';

/**
 * GMX's DataStore keys (Keys.sol) by name, as the devnet's deploy writes its whole configuration: the key scheme is
 * the service's (src/protocols/gmxV2/keys.ts, tested against the SDK's); this adds the generic composite forms and
 * the stores' field keys the devnet sets and the service never reads.
 */
export const keyOf = hashName;

type Part = { type: 'address'; value: Address } | { type: 'bool'; value: boolean } | { type: 'bytes32'; value: Hex };
const compose = (base: string, ...parts: Part[]): Hex =>
  keccak256(encodeAbiParameters([{ type: 'bytes32' }, ...parts.map((p) => ({ type: p.type }))], [keyOf(base), ...parts.map((p) => p.value)]));

export const addr = (value: Address): Part => ({ type: 'address', value });
export const flag = (value: boolean): Part => ({ type: 'bool', value });

export const dsKeys = {
  global: keyOf,
  market: (base: string, market: Address) => compose(base, addr(market)),
  /** Per-account lists: ACCOUNT_DEPOSIT_LIST, ACCOUNT_WITHDRAWAL_LIST (Keys.accountDepositListKey, …). */
  account: (base: string, account: Address) => compose(base, addr(account)),
  marketFlag: (base: string, market: Address, isPositive: boolean) => compose(base, addr(market), flag(isPositive)),
  marketToken: (base: string, market: Address, token: Address) => compose(base, addr(market), addr(token)),
  oracleProvider: (token: Address) => compose('ORACLE_PROVIDER_FOR_TOKEN', addr(token)),
  /** MarketStoreUtils: keccak256(abi.encode(marketToken, keccak256(abi.encode("FIELD")))). */
  marketField: (market: Address, field: string) => keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'bytes32' }], [market, keyOf(field)])),
  orderList: keyOf('ORDER_LIST'),
  depositList: keyOf('DEPOSIT_LIST'),
  withdrawalList: keyOf('WITHDRAWAL_LIST'),
  marketList: keyOf('MARKET_LIST'),
} as const;

/** GMX's role keys (Role.sol), with the admin role the devnet's deployer holds. */
export const ROLES = { ...GMX_ROLES, ROLE_ADMIN: keyOf('ROLE_ADMIN') } as const;
