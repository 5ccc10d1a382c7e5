import { encodeFunctionData, zeroAddress, zeroHash, type Address, type Hex } from 'viem';
import type { Call } from '../../api/v1alpha1/index.ts';
import { approveCall, callOf } from '../common/calls.ts';
import { ProtocolError } from '../common/errors.ts';
import type { AgentContext } from '../types.ts';
import { exchangeRouterAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { decodeGmxRevert } from './errors.ts';
import type { ContractMarketPrices } from './marketParams.ts';

/** What one order creates (GMX's CreateOrderParams, the fields perp-v2 sets). */
export interface OrderSpec {
  market: Address;
  /** The collateral token (WETH when the wallet pays or is paid native ETH). */
  collateralToken: Address;
  /** What the wallet sends with it: an increase's collateral; none for a decrease. */
  send?: { native: boolean; amount: bigint };
  orderType: number;
  isLong: boolean;
  sizeDeltaUsd: bigint;
  /** A decrease's collateral to withdraw; ignored for an increase (GMX counts what the vault received). */
  initialCollateralDeltaAmount: bigint;
  triggerPrice: bigint;
  /** Contract format (USD per smallest unit of the index token, 30 − decimals). */
  acceptablePrice: bigint;
  executionFee: bigint;
  /** Pay out (and refund a cancelled increase) in native ETH rather than WETH. */
  unwrap: boolean;
}

/**
 * The ExchangeRouter's inner calls, as GMX's own clients batch them: the execution fee (and native collateral) to
 * the OrderVault through sendWnt, token collateral through sendTokens (pulled by the Router, which the batch
 * approves exactly), then createOrder. The wallet is receiver and cancellation receiver: every payout and refund
 * comes back to it.
 */
function innerCalls(config: GmxV2Config, wallet: Address, o: OrderSpec): Hex[] {
  const encode = (functionName: string, args: readonly unknown[]): Hex => encodeFunctionData({ abi: exchangeRouterAbi, functionName: functionName as never, args: args as never });
  const nativeIn = o.send?.native ? o.send.amount : 0n;
  const inner: Hex[] = [encode('sendWnt', [config.orderVault, o.executionFee + nativeIn])];
  if (o.send && !o.send.native && o.send.amount > 0n) inner.push(encode('sendTokens', [o.collateralToken, config.orderVault, o.send.amount]));
  inner.push(
    encode('createOrder', [
      {
        addresses: {
          receiver: wallet,
          cancellationReceiver: wallet,
          callbackContract: zeroAddress,
          uiFeeReceiver: zeroAddress,
          market: o.market,
          initialCollateralToken: o.collateralToken,
          swapPath: [],
        },
        numbers: {
          sizeDeltaUsd: o.sizeDeltaUsd,
          initialCollateralDeltaAmount: o.initialCollateralDeltaAmount,
          triggerPrice: o.triggerPrice,
          acceptablePrice: o.acceptablePrice,
          executionFee: o.executionFee,
          callbackGasLimit: 0n,
          minOutputAmount: 0n,
          validFromTime: 0n,
        },
        orderType: o.orderType,
        decreasePositionSwapType: 0,
        isLong: o.isLong,
        shouldUnwrapNativeToken: o.unwrap,
        autoCancel: false,
        referralCode: zeroHash,
        dataList: [],
      },
    ]),
  );
  return inner;
}

/** The batch that creates the order: [approve,] ExchangeRouter.multicall with the ETH it sends. */
export function orderCalls(config: GmxV2Config, wallet: Address, o: OrderSpec, extra: Hex[] = []): Call[] {
  const value = o.executionFee + (o.send?.native ? o.send.amount : 0n);
  const router = callOf({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'multicall', args: [[...innerCalls(config, wallet, o), ...extra]], value });
  const token = o.send && !o.send.native && o.send.amount > 0n ? o.send : undefined;
  return token ? [approveCall(o.collateralToken, config.router, token.amount), router] : [router];
}

const END_OF_SIMULATION = 'EndOfOracleSimulation';

/**
 * GMX's check of an order before it is sent, as its own clients make it: the same batch with
 * `simulateExecuteLatestOrder(prices)` appended to the multicall, run from the wallet (nothing is signed). The
 * router creates the order, executes it at those prices, and reverts with EndOfOracleSimulation when the execution
 * succeeded; any other revert is why the keeper would cancel it (or why the create itself fails).
 */
export async function checkOrderExecutes(ctx: AgentContext<'gmxV2'>, o: OrderSpec, prices: { tokens: Address[]; prices: ContractMarketPrices[keyof ContractMarketPrices][]; at: bigint }): Promise<void> {
  const config = ctx.config as GmxV2Config;
  const simulate = encodeFunctionData({
    abi: exchangeRouterAbi,
    functionName: 'simulateExecuteLatestOrder',
    args: [{ primaryTokens: prices.tokens, primaryPrices: prices.prices, minTimestamp: prices.at, maxTimestamp: prices.at }],
  });
  const result = await ctx.simulate(orderCalls(config, ctx.wallet, o, [simulate]));
  if (result.ok) throw new ProtocolError('protocol_read_failed', "GMX's simulateExecuteLatestOrder returned instead of ending the simulation: this ExchangeRouter is not a GMX v2 one");
  const e = result.error;
  if (e.code === 'insufficient_funds') throw new ProtocolError('insufficient_balance', `the wallet cannot pay the ETH this order sends (execution fee${o.send?.native ? ' and collateral' : ''}): ${e.message}`);
  if (e.code === 'rpc_unavailable') throw new ProtocolError('protocol_read_failed', `the chain did not answer the order's simulation: ${e.message}`);
  const decoded = e.revertData ? decodeGmxRevert(e.revertData) : undefined;
  if (decoded?.name === END_OF_SIMULATION) return;
  const why = decoded ? `${decoded.name}: ${decoded.message}` : (e.revertReason ?? e.message);
  throw new ProtocolError('order_not_executable', `GMX's keeper would not execute this order now (${why})`, {
    details: { ...(decoded && { protocol_error: { protocol: 'GMX v2', ...decoded } }), ...(e.revertData && { revert_data: e.revertData }) },
  });
}
