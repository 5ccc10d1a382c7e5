import { encodeFunctionData, zeroAddress, zeroHash, type Address, type Hex } from 'viem';
import type { Call } from '../../api/v1alpha1/index.ts';
import { approveCall, callOf } from '../common/calls.ts';
import type { AgentContext } from '../types.ts';
import { exchangeRouterAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { checkKeeperExecutes, simulatedOracleParams, type SimulatedPrices } from './keeperSimulation.ts';

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

/**
 * GMX's check of an order before it is sent, as its own clients make it: the same batch with
 * `simulateExecuteLatestOrder(prices)` appended to the multicall, run from the wallet (nothing is signed).
 */
export async function checkOrderExecutes(ctx: AgentContext<'gmxV2'>, o: OrderSpec, prices: SimulatedPrices): Promise<void> {
  const config = ctx.config as GmxV2Config;
  const simulate = encodeFunctionData({ abi: exchangeRouterAbi, functionName: 'simulateExecuteLatestOrder', args: [simulatedOracleParams(prices)] });
  await checkKeeperExecutes(ctx, orderCalls(config, ctx.wallet, o, [simulate]), { what: 'order', sendsNative: o.send?.native ? 'execution fee and collateral' : 'execution fee' });
}
