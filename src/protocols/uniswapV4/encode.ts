import { concatHex, encodeAbiParameters, parseAbiParameters, toHex, type Address, type Hex } from 'viem';
import type { Call } from '../../api/v1alpha1/index.ts';
import { approveCall, callOf } from '../common/calls.ts';
import type { SwapSide } from '../common/swap.ts';
import { permit2Abi, universalRouterAbi, V4_ROUTER_PARAMS } from './abi.ts';
import { isNative } from './pools.ts';
import type { Route } from './route.ts';

/** UniversalRouter 2.0.0 command bytes (contracts/libraries/Commands.sol). */
export const COMMANDS = { SWEEP: 0x04, V4_SWAP: 0x10 } as const;

/** V4Router action bytes (v4-periphery 1.0.3 src/libraries/Actions.sol). */
export const ACTIONS = { SWAP_EXACT_IN_SINGLE: 0x06, SWAP_EXACT_IN: 0x07, SWAP_EXACT_OUT_SINGLE: 0x08, SWAP_EXACT_OUT: 0x09, SETTLE_ALL: 0x0c, TAKE_ALL: 0x0f } as const;

/** ActionConstants.MSG_SENDER: the router reads address(1) as the caller (here, the agent's wallet). */
export const MSG_SENDER: Address = '0x0000000000000000000000000000000000000001';

const NO_HOOK_DATA: Hex = '0x';
const currencyAndAmount = parseAbiParameters('address currency, uint256 amount');

/** The swap a router call makes: the route, the side, the exact amount, and the bound (least out / most in). */
export interface SwapOrder {
  route: Route;
  side: SwapSide;
  exact: bigint;
  limit: bigint;
}

/** One hop's PathKey: for exact input the hop's output currency, for exact output its input (IV4Router, PathKey.sol). */
const pathKeys = (route: Route, side: SwapSide) =>
  route.hops.map((h) => ({
    intermediateCurrency: side === 'exact_in' ? h.tokenOut.address : h.tokenIn.address,
    fee: h.pool.key.fee,
    tickSpacing: h.pool.key.tickSpacing,
    hooks: h.pool.key.hooks,
    hookData: NO_HOOK_DATA,
  }));

/**
 * The V4_SWAP command's input: abi.encode(bytes actions, bytes[] params). The swap action (single pool or a path),
 * then SETTLE_ALL (pay the input, at most the bound for exact output) and TAKE_ALL (take the output, at least the
 * bound for exact input): the router checks both, so the bound holds even if the pool moved since the quote.
 */
export function v4SwapInput(o: SwapOrder): Hex {
  const { route, side, exact, limit } = o;
  const single = route.hops.length === 1;
  const h = route.hops[0]!;
  let swap: [number, Hex];
  if (single) {
    const params = { poolKey: h.pool.key, zeroForOne: h.zeroForOne, hookData: NO_HOOK_DATA };
    swap =
      side === 'exact_in'
        ? [ACTIONS.SWAP_EXACT_IN_SINGLE, encodeAbiParameters(parseAbiParameters(`(${V4_ROUTER_PARAMS.exactInSingle})`), [{ ...params, amountIn: exact, amountOutMinimum: limit }])]
        : [ACTIONS.SWAP_EXACT_OUT_SINGLE, encodeAbiParameters(parseAbiParameters(`(${V4_ROUTER_PARAMS.exactOutSingle})`), [{ ...params, amountOut: exact, amountInMaximum: limit }])];
  } else {
    const path = pathKeys(route, side);
    swap =
      side === 'exact_in'
        ? [ACTIONS.SWAP_EXACT_IN, encodeAbiParameters(parseAbiParameters(`(${V4_ROUTER_PARAMS.exactIn})`), [{ currencyIn: route.tokenIn.address, path, amountIn: exact, amountOutMinimum: limit }])]
        : [ACTIONS.SWAP_EXACT_OUT, encodeAbiParameters(parseAbiParameters(`(${V4_ROUTER_PARAMS.exactOut})`), [{ currencyOut: route.tokenOut.address, path, amountOut: exact, amountInMaximum: limit }])];
  }
  const maxIn = side === 'exact_in' ? exact : limit;
  const minOut = side === 'exact_in' ? limit : exact;
  const actions = concatHex([swap[0], ACTIONS.SETTLE_ALL, ACTIONS.TAKE_ALL].map((a) => toHex(a, { size: 1 })));
  const params = [swap[1], encodeAbiParameters(currencyAndAmount, [route.tokenIn.address, maxIn]), encodeAbiParameters(currencyAndAmount, [route.tokenOut.address, minOut])];
  return encodeAbiParameters(parseAbiParameters('bytes actions, bytes[] params'), [actions, params]);
}

/**
 * The router call: V4_SWAP, and for native ETH paid into an exact-output swap a SWEEP of the router's ETH back to
 * the wallet (the call sends the most it may pay; the router keeps no change by itself). ETH in travels as the
 * call's value (exact input: the amount; exact output: the bound).
 */
export function routerCall(router: Address, o: SwapOrder, deadline: bigint): Call {
  const nativeIn = isNative(o.route.tokenIn);
  const sweep = nativeIn && o.side === 'exact_out';
  const commands = concatHex([toHex(COMMANDS.V4_SWAP, { size: 1 }), ...(sweep ? [toHex(COMMANDS.SWEEP, { size: 1 })] : [])]);
  const inputs = [v4SwapInput(o), ...(sweep ? [encodeAbiParameters(parseAbiParameters('address token, address recipient, uint256 amountMin'), [o.route.tokenIn.address, MSG_SENDER, 0n])] : [])];
  const value = nativeIn ? (o.side === 'exact_in' ? o.exact : o.limit) : 0n;
  return callOf({ address: router, abi: universalRouterAbi, functionName: 'execute', args: [commands, inputs, deadline], value });
}

/**
 * The whole batch. An ERC-20 in is paid through Permit2 (the router pulls with Permit2.transferFrom): approve
 * Permit2 for exactly the most the swap may take, and give the router a Permit2 allowance of that amount expiring
 * at the deadline; no signed permit (the wallets have no ERC-1271). Exact input spends both allowances to zero;
 * exact output may spend less, so both are set back to zero after the swap. Never an unlimited approval.
 */
export function swapCalls(c: { universalRouter: Address; permit2: Address }, o: SwapOrder, deadline: bigint): Call[] {
  const swap = routerCall(c.universalRouter, o, deadline);
  const token = o.route.tokenIn;
  if (isNative(token)) return [swap];
  const most = o.side === 'exact_in' ? o.exact : o.limit;
  const permit2Approve = (amount: bigint, expiration: bigint) =>
    callOf({ address: c.permit2, abi: permit2Abi, functionName: 'approve', args: [token.address, c.universalRouter, amount, Number(expiration)] });
  const grant = [approveCall(token.address, c.permit2, most), permit2Approve(most, deadline)];
  if (o.side === 'exact_in') return [...grant, swap];
  return [...grant, swap, permit2Approve(0n, 0n), approveCall(token.address, c.permit2, 0n)];
}
