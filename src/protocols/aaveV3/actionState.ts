import { getAddress, type Address } from 'viem';
import type { TokenInfo } from '../common/amounts.ts';
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
}

export async function actionState(ctx: AgentContext<'aaveV3'>, token: string): Promise<ActionState> {
  const reserves = await loadReserves(ctx.read, ctx.config);
  const named: TokenInfo = resolveToken(token, reserves.map((r) => r.token), 'token', 'the Aave v3 Pool');
  const index = reserves.findIndex((r) => r.token.address === named.address);
  const [walletBalance, ...account] = await ctx.read([balanceOfRead(named.address, ctx.wallet), ...accountReads(ctx.config, reserves, ctx.wallet)]);
  return { pool: getAddress(ctx.config.pool), reserves, reserve: reserves[index]!, user: accountOf(account).reserves[index]!, walletBalance: walletBalance as bigint };
}

/** The tokens an action moves in the wallet, and its receipt token (aToken or debt token), for the effects. */
export const effectTokens = (r: Reserve, receipt: 'aToken' | 'variableDebtToken'): TokenInfo[] => [
  r.token,
  { symbol: receipt === 'aToken' ? `a${r.token.symbol}` : `variableDebt${r.token.symbol}`, address: r[receipt], decimals: r.token.decimals },
];
