import type { Address } from 'viem';
import type { TokenInfo } from '../common/amounts.ts';
import { resolveToken, balanceOfRead } from '../common/tokens.ts';
import type { AgentContext } from '../types.ts';
import { loadMarkets, marketTokens, selectMarket, type CometMarket } from './markets.ts';
import { accountOf, accountReads, type CometAccount } from './position.ts';

/** What an action checks its input against: the market, the token named, the account, the wallet's balance of it. */
export interface ActionState {
  market: CometMarket;
  token: TokenInfo;
  /** Index of the token among the market's collaterals; -1 for the base token. */
  collateralIndex: number;
  account: CometAccount;
  walletBalance: bigint;
}

export async function actionState(ctx: AgentContext<'compoundV3'>, input: { market?: string | undefined; token?: string | undefined }): Promise<ActionState> {
  const market = selectMarket(await loadMarkets(ctx.read, ctx.config), input.market);
  const token = input.token === undefined ? market.base : resolveToken(input.token, marketTokens(market), 'token', `${market.name}`);
  const [walletBalance, ...account] = await ctx.read([balanceOfRead(token.address, ctx.wallet), ...accountReads(market, ctx.wallet)]);
  const collateralIndex = market.collaterals.findIndex((c) => c.token.address === token.address);
  return { market, token, collateralIndex, account: accountOf(account), walletBalance };
}

export const isBase = (s: ActionState): boolean => s.collateralIndex < 0;
export const comet = (s: ActionState): Address => s.market.comet;
