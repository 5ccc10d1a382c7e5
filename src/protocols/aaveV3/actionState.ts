import { erc20Abi, getAddress, type Address } from 'viem';
import type { TokenInfo } from '../common/amounts.ts';
import { readOf } from '../common/reads.ts';
import { balanceOfRead, resolveToken } from '../common/tokens.ts';
import type { AgentContext } from '../types.ts';
import { accountOf, accountReads, type UserReserve } from './position.ts';
import { loadReserves, type Reserve } from './reserves.ts';

/** What an action checks its input against: the reserves, the one named, the account in it, the wallet's balance. */
export interface ActionState {
  pool: Address;
  reserves: Reserve[];
  reserve: Reserve;
  user: UserReserve;
  walletBalance: bigint;
  /** The reserve's aToken and variable debt token, as their contracts name them (for the effects). */
  aToken: TokenInfo;
  debtToken: TokenInfo;
}

export async function actionState(ctx: AgentContext<'aaveV3'>, token: string): Promise<ActionState> {
  const reserves = await loadReserves(ctx.read, ctx.config);
  const named: TokenInfo = resolveToken(token, reserves.map((r) => r.token), 'token', 'the Aave v3 Pool');
  const index = reserves.findIndex((r) => r.token.address === named.address);
  const reserve = reserves[index]!;
  const [walletBalance, aSymbol, debtSymbol, ...account] = await ctx.read([
    balanceOfRead(named.address, ctx.wallet),
    readOf({ address: reserve.aToken, abi: erc20Abi, functionName: 'symbol' }),
    readOf({ address: reserve.variableDebtToken, abi: erc20Abi, functionName: 'symbol' }),
    ...accountReads(ctx.config, reserves, ctx.wallet),
  ]);
  const decimals = reserve.token.decimals;
  return {
    pool: getAddress(ctx.config.pool),
    reserves,
    reserve,
    user: accountOf(account).reserves[index]!,
    walletBalance: walletBalance as bigint,
    aToken: { symbol: aSymbol as string, address: reserve.aToken, decimals },
    debtToken: { symbol: debtSymbol as string, address: reserve.variableDebtToken, decimals },
  };
}

/** What an action moves in the wallet: the reserve's token, and its aToken (supply, withdraw) or debt token (borrow, repay). */
export const effectTokens = (s: ActionState, receipt: 'aToken' | 'debtToken'): TokenInfo[] => [s.reserve.token, s[receipt]];
