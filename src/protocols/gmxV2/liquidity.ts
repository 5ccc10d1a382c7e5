import { encodeFunctionData, zeroAddress, type Address, type Hex } from 'viem';
import { z } from 'zod';
import type { Call } from '../../api/v1alpha1/index.ts';
import { AmountSchema, type TokenInfo } from '../common/amounts.ts';
import { approveCall, callOf } from '../common/calls.ts';
import { readOf } from '../common/reads.ts';
import type { AgentContext } from '../types.ts';
import { exchangeRouterAbi, readerAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { checkKeeperExecutes, simulatedOracleParams, simulationPricesOf } from './keeperSimulation.ts';
import { MAX_PNL_FACTOR_FOR_DEPOSITS, MAX_PNL_FACTOR_FOR_WITHDRAWALS } from './keys.ts';
import { marketProps } from './markets.ts';
import { BASIS_POINTS } from './math/units.ts';
import { Usd } from './present.ts';
import type { PerpMarket } from './snapshot.ts';

/** GM tokens have 18 decimals (GMX's MarketToken). */
export const GM_DECIMALS = 18;
/**
 * ISwapPricingUtils.SwapPricingType as GMX 2.1+ numbers it (Swap 0, Shift 1, Atomic 2, Deposit 3, Withdrawal 4; the
 * SDK 1.4.0's TypeScript enum still has the older TwoStep 0): the keeper executes a deposit as Deposit and a
 * withdrawal as Withdrawal, each charged its own fee factor, so a quote asked as anything else is not what it gets.
 */
const PRICING_DEPOSIT = 3;
const PRICING_WITHDRAWAL = 4;

export const LiquidityPreviewSchema = z
  .object({
    kind: z.enum(['deposit', 'withdrawal']),
    market_token_price: Usd.meta({ description: "USD per GM token now (the pool's value per token, as GMX prices a deposit or a withdrawal)" }),
    value_usd: Usd.meta({ description: 'What goes in (a deposit) or is redeemed (a withdrawal), in USD at the current prices' }),
    execution_fee: AmountSchema.meta({ description: 'Native ETH sent for the keeper (refunded in part)' }),
    receive: z
      .array(z.object({ token: z.string(), expected: z.string(), minimum: z.string() }))
      .meta({ description: 'What the wallet would receive at the current prices, fees and price impact included, and the least the keeper may give (from slippage_bps)' }),
  })
  .meta({ id: 'PerpLiquidityPreview' });
export type LiquidityPreview = z.infer<typeof LiquidityPreviewSchema>;

/** `expected` less `slippageBps`, rounded down: the least a request accepts. */
export const lessSlippage = (expected: bigint, slippageBps: number): bigint => (expected * (BASIS_POINTS - BigInt(slippageBps))) / BASIS_POINTS;

/** The Reader's price of one GM token (USD, 30 decimals), as a deposit (maximized) or a withdrawal (minimized) is priced. */
export async function marketTokenPrice(ctx: AgentContext<'gmxV2'>, m: PerpMarket, forDeposit: boolean): Promise<bigint> {
  const config = ctx.config as GmxV2Config;
  const p = m.contractPrices;
  const [[price]] = await ctx.read([
    readOf({
      address: config.reader,
      abi: readerAbi,
      functionName: 'getMarketTokenPrice',
      args: [config.dataStore, marketProps(m), p.indexTokenPrice, p.longTokenPrice, p.shortTokenPrice, forDeposit ? MAX_PNL_FACTOR_FOR_DEPOSITS : MAX_PNL_FACTOR_FOR_WITHDRAWALS, forDeposit],
    }),
  ]);
  return price < 0n ? 0n : price;
}

/** GM a deposit of these amounts would mint now (the Reader's getDepositAmountOut: fees and swap impact included). */
export async function depositAmountOut(ctx: AgentContext<'gmxV2'>, m: PerpMarket, longAmount: bigint, shortAmount: bigint): Promise<bigint> {
  const config = ctx.config as GmxV2Config;
  const [out] = await ctx.read([
    readOf({
      address: config.reader,
      abi: readerAbi,
      functionName: 'getDepositAmountOut',
      args: [config.dataStore, marketProps(m), m.contractPrices, longAmount, shortAmount, zeroAddress, PRICING_DEPOSIT, true],
    }),
  ]);
  return out;
}

/** The long and short tokens a withdrawal of `marketTokens` would pay now (the Reader's getWithdrawalAmountOut). */
export async function withdrawalAmountOut(ctx: AgentContext<'gmxV2'>, m: PerpMarket, marketTokens: bigint): Promise<readonly [bigint, bigint]> {
  const config = ctx.config as GmxV2Config;
  const [out] = await ctx.read([
    readOf({ address: config.reader, abi: readerAbi, functionName: 'getWithdrawalAmountOut', args: [config.dataStore, marketProps(m), m.contractPrices, marketTokens, zeroAddress, PRICING_WITHDRAWAL] }),
  ]);
  return out;
}

const encode = (functionName: string, args: readonly unknown[]): Hex => encodeFunctionData({ abi: exchangeRouterAbi, functionName: functionName as never, args: args as never });

/** One token a request sends to its vault: native ETH through sendWnt, an ERC-20 through sendTokens (approved exactly). */
export interface Sent {
  token: TokenInfo;
  amount: bigint;
}

/**
 * The ExchangeRouter batch of a deposit or withdrawal, as GMX's clients send it: the execution fee and any native
 * ETH to the vault through sendWnt, each ERC-20 through sendTokens (pulled by the Router, approved exactly), then
 * the create; `extra` calls go last in the multicall (the simulation's).
 */
function requestCalls(config: GmxV2Config, vault: Address, executionFee: bigint, sent: readonly Sent[], create: Hex, extra: Hex[]): Call[] {
  const nativeIn = sent.filter((s) => s.token.native).reduce((n, s) => n + s.amount, 0n);
  const erc20 = sent.filter((s) => !s.token.native && s.amount > 0n);
  const inner = [encode('sendWnt', [vault, executionFee + nativeIn]), ...erc20.map((s) => encode('sendTokens', [s.token.address, vault, s.amount])), create, ...extra];
  const router = callOf({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'multicall', args: [inner], value: executionFee + nativeIn });
  return [...erc20.map((s) => approveCall(s.token.address, config.router, s.amount)), router];
}

export interface DepositSpec {
  market: PerpMarket;
  /** The long token's and the short token's amounts (native ETH for WETH: sent through sendWnt and wrapped). */
  sent: Sent[];
  minMarketTokens: bigint;
  executionFee: bigint;
}

/** A deposit's batch: the wallet receives the GM and any refund; nothing is swapped. */
export function depositCalls(config: GmxV2Config, wallet: Address, d: DepositSpec, extra: Hex[] = []): Call[] {
  const create = encode('createDeposit', [
    {
      addresses: {
        receiver: wallet,
        callbackContract: zeroAddress,
        uiFeeReceiver: zeroAddress,
        market: d.market.address,
        // Without swap paths, the market's own tokens (GMX counts what the vault received of each).
        initialLongToken: d.market.long.address,
        initialShortToken: d.market.short.address,
        longTokenSwapPath: [],
        shortTokenSwapPath: [],
      },
      minMarketTokens: d.minMarketTokens,
      shouldUnwrapNativeToken: true,
      executionFee: d.executionFee,
      callbackGasLimit: 0n,
      dataList: [],
    },
  ]);
  return requestCalls(config, config.depositVault, d.executionFee, d.sent, create, extra);
}

export interface WithdrawalSpec {
  market: PerpMarket;
  marketTokens: bigint;
  minLongTokenAmount: bigint;
  minShortTokenAmount: bigint;
  executionFee: bigint;
}

/** A withdrawal's batch: GM to the WithdrawalVault, paid out to the wallet (WETH as native ETH). */
export function withdrawalCalls(config: GmxV2Config, wallet: Address, w: WithdrawalSpec, extra: Hex[] = []): Call[] {
  const gm: TokenInfo = { symbol: 'GM', address: w.market.address, decimals: GM_DECIMALS };
  const create = encode('createWithdrawal', [
    {
      addresses: { receiver: wallet, callbackContract: zeroAddress, uiFeeReceiver: zeroAddress, market: w.market.address, longTokenSwapPath: [], shortTokenSwapPath: [] },
      minLongTokenAmount: w.minLongTokenAmount,
      minShortTokenAmount: w.minShortTokenAmount,
      shouldUnwrapNativeToken: true,
      executionFee: w.executionFee,
      callbackGasLimit: 0n,
      dataList: [],
    },
  ]);
  return requestCalls(config, config.withdrawalVault, w.executionFee, [{ token: gm, amount: w.marketTokens }], create, extra);
}

/** GMX's own check before sending: the deposit created and executed at the current prices in one eth_call. */
export async function checkDepositExecutes(ctx: AgentContext<'gmxV2'>, d: DepositSpec): Promise<void> {
  const config = ctx.config as GmxV2Config;
  const simulate = encode('simulateExecuteLatestDeposit', [simulatedOracleParams(simulationPricesOf(d.market, await ctx.now()))]);
  const native = d.sent.some((s) => s.token.native && s.amount > 0n);
  await checkKeeperExecutes(ctx, depositCalls(config, ctx.wallet, d, [simulate]), { what: 'deposit', sendsNative: native ? 'execution fee and the ETH deposited' : 'execution fee' });
}

/** The same for a withdrawal. */
export async function checkWithdrawalExecutes(ctx: AgentContext<'gmxV2'>, w: WithdrawalSpec): Promise<void> {
  const config = ctx.config as GmxV2Config;
  const simulate = encode('simulateExecuteLatestWithdrawal', [simulatedOracleParams(simulationPricesOf(w.market, await ctx.now())), PRICING_WITHDRAWAL]);
  await checkKeeperExecutes(ctx, withdrawalCalls(config, ctx.wallet, w, [simulate]), { what: 'withdrawal', sendsNative: 'execution fee' });
}
