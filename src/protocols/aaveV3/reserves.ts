import { getAddress, maxUint256, type Address } from 'viem';
import type { AaveV3Config } from './config.ts';
import { fixed, type TokenInfo } from '../common/amounts.ts';
import { readOf, type Reader } from '../common/reads.ts';
import { dataProviderAbi, oracleAbi } from './abi.ts';

/** Aave's scales: rates in ray (1e27, per year), risk parameters in basis points, prices in the base currency (8 decimals). */
export const RAY = 10n ** 27n;
export const BPS = 10_000n;
export const BASE_DECIMALS = 8;
/** getUserAccountData's health factor without debt. */
export const NO_DEBT_HEALTH_FACTOR = maxUint256;

/** One reserve of the Pool, as read now. */
export interface Reserve {
  token: TokenInfo;
  aToken: Address;
  variableDebtToken: Address;
  /** In the base currency, 8 decimals. */
  price: bigint;
  ltv: bigint;
  liquidationThreshold: bigint;
  liquidationBonus: bigint;
  collateralEnabled: boolean;
  borrowingEnabled: boolean;
  active: boolean;
  frozen: boolean;
  supplyRate: bigint;
  variableBorrowRate: bigint;
  totalSupplied: bigint;
  totalBorrowed: bigint;
}

/** Every reserve of the Pool, in two batched round trips whatever their number: the list, then everything about them. */
export async function loadReserves(read: Reader, config: AaveV3Config): Promise<Reserve[]> {
  const provider = getAddress(config.protocolDataProvider);
  const oracle = getAddress(config.oracle);
  const [listed] = await read([readOf({ address: provider, abi: dataProviderAbi, functionName: 'getAllReservesTokens' })]);
  const values = await read(
    listed.flatMap((t) => [
      readOf({ address: provider, abi: dataProviderAbi, functionName: 'getReserveConfigurationData', args: [t.tokenAddress] }),
      readOf({ address: provider, abi: dataProviderAbi, functionName: 'getReserveTokensAddresses', args: [t.tokenAddress] }),
      readOf({ address: provider, abi: dataProviderAbi, functionName: 'getReserveData', args: [t.tokenAddress] }),
      readOf({ address: oracle, abi: oracleAbi, functionName: 'getAssetPrice', args: [t.tokenAddress] }),
    ]) as never[],
  );
  return listed.map((t, i) => {
    const [conf, tokens, data, price] = values.slice(i * 4, i * 4 + 4) as [
      readonly [bigint, bigint, bigint, bigint, bigint, boolean, boolean, boolean, boolean, boolean],
      readonly [Address, Address, Address],
      readonly bigint[],
      bigint,
    ];
    return {
      token: { symbol: t.symbol, address: getAddress(t.tokenAddress), decimals: Number(conf[0]) },
      aToken: getAddress(tokens[0]),
      variableDebtToken: getAddress(tokens[2]),
      price,
      ltv: conf[1],
      liquidationThreshold: conf[2],
      liquidationBonus: conf[3],
      collateralEnabled: conf[5],
      borrowingEnabled: conf[6],
      active: conf[8],
      frozen: conf[9],
      supplyRate: data[5]!,
      variableBorrowRate: data[6]!,
      totalSupplied: data[2]!,
      totalBorrowed: data[3]! + data[4]!,
    };
  });
}

export const aprOf = (ray: bigint) => fixed(ray, 27, 6);
export const usdOf = (amount: bigint, r: Reserve) => (amount * r.price) / 10n ** BigInt(r.token.decimals);
