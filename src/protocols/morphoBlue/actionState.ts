import { getAddress, type Address } from 'viem';
import { MarketInput } from '../common/inputs.ts';
import { balanceOfRead } from '../common/tokens.ts';
import type { AgentContext } from '../types.ts';
import { loadMarkets, selectMarket, type MorphoMarket } from './markets.ts';
import { assetsOf, positionRead, type MorphoAccount } from './position.ts';

/** What an action checks its input against: the market, the account, its assets, the wallet's balance of one token. */
export interface ActionState {
  morpho: Address;
  market: MorphoMarket;
  account: MorphoAccount;
  supplied: bigint;
  borrowed: bigint;
  walletBalance: bigint;
}

export async function actionState(ctx: AgentContext<'morphoBlue'>, marketInput: string | undefined, token: 'loan' | 'collateral'): Promise<ActionState> {
  const morpho = getAddress(ctx.config.morpho);
  const market = selectMarket(await loadMarkets(ctx), marketInput);
  const held = token === 'loan' ? market.loan : market.collateral;
  const [account, walletBalance] = await ctx.read([positionRead(morpho, market, ctx.wallet), balanceOfRead(held.address, ctx.wallet)]);
  return { morpho, market, account, walletBalance, ...assetsOf(market.state, account) };
}

/** `market`: optional where the deployment has one market. */
export const marketField = { market: MarketInput.optional() };
