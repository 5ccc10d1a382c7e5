import { encodeFunctionData, type Address, type Hex } from 'viem';
import type { Call } from '../../../api/v1alpha1/index.ts';
import { amountOf } from '../../common/amounts.ts';
import { approveCall, callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { boundsRecord, checkPriceImpact, swapBounds, swapInput, type SwapBounds } from '../../common/swap.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import { ADDRESS_THIS, swapRouter02Abi } from '../abi.ts';
import type { UniswapV3Config } from '../config.ts';
import { CHAINS, defineAction } from '../define.ts';
import { priceSwap, type PricedSwap } from '../quote.ts';
import { encodePath, routeFields } from '../route.ts';

export const swap = defineAction({
  path: 'swap',
  summary: 'Swap tokens or native ETH',
  description:
    'Swaps through SwapRouter02 in one operation with its exact approval: exact input (amount_in; amount_out_minimum from ' +
    'slippage_bps, default 50) or exact output (amount_out; amount_in_maximum), a deadline (default now + 600 s), and a ' +
    'price-impact bound (max_price_impact_bps, default 300). The first plan fixes these bounds; a retry or a re-plan at ' +
    "signing never loosens them. ETH in is wrapped, ETH out unwrapped. A revert is refused with the router's own reason.",
  input: swapInput(CHAINS, routeFields),
  replan: true,
  async plan(ctx, input) {
    const priced = await priceSwap(ctx, input);
    checkPriceImpact(input, priced.impactBps);
    const bounds = swapBounds(input, priced.quoted, await ctx.now());
    // Exact output pays at most what is approved, so a swap now dearer than the bound would fail on the transfer
    // (STF) before the router's own check: say it plainly instead. Exact input meets the router's check itself.
    if (priced.side === 'exact_out' && priced.quoted > bounds.limit) {
      const f = (x: bigint) => `${amountOf(x, priced.tokenIn.decimals).formatted} ${priced.tokenIn.symbol}`;
      throw new ProtocolError('slippage_exceeded', `the swap now costs ${f(priced.quoted)}, more than amount_in_maximum (${f(bounds.limit)}): Uniswap would refuse it (Too much requested)`, {
        field: 'amount_in_maximum',
        details: { quoted: priced.quoted.toString(), amount_in_maximum: bounds.limit.toString() },
      });
    }
    const pays = priced.side === 'exact_in' ? priced.exact : bounds.limit;
    const held = priced.tokenIn.native ? await ctx.nativeBalance() : (await ctx.read([balanceOfRead(priced.tokenIn.address, ctx.wallet)]))[0];
    if (held < pays) {
      const f = (x: bigint) => `${amountOf(x, priced.tokenIn.decimals).formatted} ${priced.tokenIn.symbol}`;
      throw new ProtocolError('insufficient_balance', `the wallet holds ${f(held)}, less than the ${f(pays)} this swap may pay`, {
        field: priced.side === 'exact_in' ? 'amount_in' : 'amount_out',
      });
    }
    return {
      calls: swapCalls(ctx.config as UniswapV3Config, ctx.wallet, priced, bounds),
      tokens: [priced.tokenIn, priced.tokenOut],
      bounds: boundsRecord(input, bounds),
    };
  },
});

/**
 * The batch: the exact approval (exact output: the maximum, taken back after), then SwapRouter02's
 * multicall(deadline, …) with the swap, the unwrap of WETH to the wallet for ETH out, and the refund of unspent
 * ETH for ETH in at exact output. ETH in is the call's value (the router wraps it).
 */
function swapCalls(config: UniswapV3Config, wallet: Address, p: PricedSwap, b: SwapBounds): Call[] {
  const router = config.swapRouter02;
  const recipient = p.tokenOut.native ? ADDRESS_THIS : wallet;
  const exactIn = p.side === 'exact_in';
  const pays = exactIn ? p.exact : b.limit;
  const receives = exactIn ? b.limit : p.exact;
  const inner: Hex[] = [swapData(p, recipient, b)];
  if (p.tokenOut.native) inner.push(encode('unwrapWETH9', [receives, wallet]));
  if (p.tokenIn.native && !exactIn) inner.push(encode('refundETH', []));
  const routerCall = callOf({ address: router, abi: swapRouter02Abi, functionName: 'multicall', args: [b.deadline, inner], value: p.tokenIn.native ? pays : 0n });
  if (p.tokenIn.native) return [routerCall];
  // Exact input spends exactly what is approved; exact output may spend less, so the rest is taken back.
  return exactIn ? [approveCall(p.tokenIn.address, router, pays), routerCall] : [approveCall(p.tokenIn.address, router, pays), routerCall, approveCall(p.tokenIn.address, router, 0n)];
}

function swapData(p: PricedSwap, recipient: Address, b: SwapBounds): Hex {
  const exactIn = p.side === 'exact_in';
  if (p.route.hops.length === 1) {
    const h = p.route.hops[0]!;
    const common = { tokenIn: h.tokenIn, tokenOut: h.tokenOut, fee: h.pool.fee, recipient, sqrtPriceLimitX96: 0n };
    return exactIn
      ? encode('exactInputSingle', [{ ...common, amountIn: p.exact, amountOutMinimum: b.limit }])
      : encode('exactOutputSingle', [{ ...common, amountOut: p.exact, amountInMaximum: b.limit }]);
  }
  const path = encodePath(p.route, p.side);
  return exactIn
    ? encode('exactInput', [{ path, recipient, amountIn: p.exact, amountOutMinimum: b.limit }])
    : encode('exactOutput', [{ path, recipient, amountOut: p.exact, amountInMaximum: b.limit }]);
}

/** One of SwapRouter02's calls inside its multicall. */
const encode = (functionName: string, args: readonly unknown[]): Hex => encodeFunctionData({ abi: swapRouter02Abi, functionName: functionName as never, args: args as never });
