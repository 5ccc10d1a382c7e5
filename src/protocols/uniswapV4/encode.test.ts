import { decodeAbiParameters, decodeFunctionData, encodeAbiParameters, parseAbiParameters, type Address, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import type { TokenInfo } from '../common/amounts.ts';
import { permit2Abi, universalRouterAbi } from './abi.ts';
import { MSG_SENDER, swapCalls, v4SwapInput, type SwapOrder } from './encode.ts';
import { NATIVE, poolIdOf, significant, type PoolKey, type V4Pool } from './pools.ts';
import { resolveRoute } from './route.ts';

const USDC: TokenInfo = { symbol: 'USDC', address: '0x5FbDB2315678afecb367f032d93F642f64180aa3', decimals: 6 };
const USDT: TokenInfo = { symbol: 'USDT', address: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512', decimals: 6 };
const NO_HOOKS: Address = '0x0000000000000000000000000000000000000000';
const poolOf = (t0: TokenInfo, t1: TokenInfo, fee: number, tickSpacing: number): V4Pool => {
  const key: PoolKey = { currency0: t0.address, currency1: t1.address, fee, tickSpacing, hooks: NO_HOOKS };
  return { id: poolIdOf(key), key, token0: t0, token1: t1 };
};
const ETH_USDC = poolOf(NATIVE, USDC, 3000, 60);
const USDC_USDT = poolOf(USDC, USDT, 500, 10);
const POOLS = [ETH_USDC, USDC_USDT];
const TOKENS = [NATIVE, USDC, USDT];
const ROUTER: Address = '0x00000000000000000000000000000000000000AA';
const PERMIT2: Address = '0x000000000022D473030F116dDEE9F6B43aC78BA3';

/**
 * The reference: the V4_SWAP input the devnet's own test (src/devnet/protocols/uniswapV4/uniswapV4.test.ts) sends
 * to the deployed UniversalRouter and sees succeed, written with explicit ABI components.
 */
function referenceExactInSingle(key: PoolKey, zeroForOne: boolean, amountIn: bigint, min: bigint): Hex {
  const POOL_KEY = { type: 'tuple', components: [{ name: 'currency0', type: 'address' }, { name: 'currency1', type: 'address' }, { name: 'fee', type: 'uint24' }, { name: 'tickSpacing', type: 'int24' }, { name: 'hooks', type: 'address' }] } as const;
  const [tokenIn, tokenOut] = zeroForOne ? [key.currency0, key.currency1] : [key.currency1, key.currency0];
  const swap = encodeAbiParameters(
    [{ type: 'tuple', components: [{ name: 'poolKey', ...POOL_KEY }, { name: 'zeroForOne', type: 'bool' }, { name: 'amountIn', type: 'uint128' }, { name: 'amountOutMinimum', type: 'uint128' }, { name: 'hookData', type: 'bytes' }] }],
    [{ poolKey: key, zeroForOne, amountIn, amountOutMinimum: min, hookData: '0x' }],
  );
  const settle = encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [tokenIn, amountIn]);
  const take = encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [tokenOut, min]);
  return encodeAbiParameters([{ type: 'bytes' }, { type: 'bytes[]' }], [`0x060c0f`, [swap, settle, take]]);
}

const order = (ask: { token_in: string; token_out: string; route?: string; fee?: string }, side: SwapOrder['side'], exact: bigint, limit: bigint): SwapOrder => ({
  route: resolveRoute(ask, POOLS, TOKENS),
  side,
  exact,
  limit,
});

describe('pool-b-v4 router encoding', () => {
  it('exact input, one pool: byte for byte the input the devnet test swaps with', () => {
    const o = order({ token_in: 'usdc', token_out: 'USDT' }, 'exact_in', 1_000_000n, 990_000n);
    expect(v4SwapInput(o)).toBe(referenceExactInSingle(USDC_USDT.key, true, 1_000_000n, 990_000n));
    const eth = order({ token_in: 'USDC', token_out: 'ETH' }, 'exact_in', 3_000_000n, 1n);
    expect(v4SwapInput(eth)).toBe(referenceExactInSingle(ETH_USDC.key, false, 3_000_000n, 1n)); // USDC is currency1: oneForZero
  });

  it('multi-hop exact input and output: SWAP_EXACT_IN / SWAP_EXACT_OUT with the PathKeys in the V4Router’s order', () => {
    const inOrder = order({ token_in: 'ETH', token_out: 'USDT', route: 'USDC' }, 'exact_in', 10n ** 18n, 2_900_000_000n);
    const [actions, params] = decodeAbiParameters(parseAbiParameters('bytes, bytes[]'), v4SwapInput(inOrder));
    expect(actions).toBe('0x070c0f');
    const [exactIn] = decodeAbiParameters(parseAbiParameters('(address currencyIn, (address intermediateCurrency, uint24 fee, int24 tickSpacing, address hooks, bytes hookData)[] path, uint128 amountIn, uint128 amountOutMinimum)'), params[0]!);
    expect(exactIn.currencyIn).toBe(NATIVE.address);
    expect(exactIn.path.map((p) => [p.intermediateCurrency, p.fee, p.tickSpacing])).toEqual([[USDC.address, 3000, 60], [USDT.address, 500, 10]]); // each hop's output
    expect(decodeAbiParameters(parseAbiParameters('address, uint256'), params[1]!)).toEqual([NATIVE.address, 10n ** 18n]);
    expect(decodeAbiParameters(parseAbiParameters('address, uint256'), params[2]!)).toEqual([USDT.address, 2_900_000_000n]);

    const outOrder = order({ token_in: 'ETH', token_out: 'USDT', route: 'USDC' }, 'exact_out', 3_000_000_000n, 11n * 10n ** 17n);
    const [outActions, outParams] = decodeAbiParameters(parseAbiParameters('bytes, bytes[]'), v4SwapInput(outOrder));
    expect(outActions).toBe('0x090c0f');
    const [exactOut] = decodeAbiParameters(parseAbiParameters('(address currencyOut, (address intermediateCurrency, uint24 fee, int24 tickSpacing, address hooks, bytes hookData)[] path, uint128 amountOut, uint128 amountInMaximum)'), outParams[0]!);
    expect(exactOut.currencyOut).toBe(USDT.address);
    expect(exactOut.path.map((p) => p.intermediateCurrency)).toEqual([NATIVE.address, USDC.address]); // each hop's input
    expect(decodeAbiParameters(parseAbiParameters('address, uint256'), outParams[1]!)).toEqual([NATIVE.address, 11n * 10n ** 17n]); // SETTLE_ALL at most the bound
  });

  it('an ERC-20 in: exact approvals to Permit2 and the router, reset after exact output; never unlimited', () => {
    const calls = swapCalls({ universalRouter: ROUTER, permit2: PERMIT2 }, order({ token_in: 'USDC', token_out: 'USDT' }, 'exact_out', 1_000_000n, 1_010_000n), 1_800_000_000n);
    expect(calls.map((c) => c.target)).toEqual([USDC.address, PERMIT2, ROUTER, PERMIT2, USDC.address]);
    expect(decodeFunctionData({ abi: permit2Abi, data: calls[1]!.data as Hex }).args).toEqual([USDC.address, ROUTER, 1_010_000n, 1_800_000_000]);
    expect(decodeFunctionData({ abi: permit2Abi, data: calls[3]!.data as Hex }).args).toEqual([USDC.address, ROUTER, 0n, 0]);
    expect(calls[4]!.data.endsWith('0'.repeat(64))).toBe(true); // approve(Permit2, 0)
    const exactIn = swapCalls({ universalRouter: ROUTER, permit2: PERMIT2 }, order({ token_in: 'USDC', token_out: 'USDT' }, 'exact_in', 1_000_000n, 990_000n), 1_800_000_000n);
    expect(exactIn).toHaveLength(3); // the swap spends both allowances to zero
    expect(calls.every((c) => !c.data.includes('f'.repeat(40)))).toBe(true);
  });

  it('native ETH in: the value; exact output sends the bound and sweeps the change back to the wallet', () => {
    const exactIn = swapCalls({ universalRouter: ROUTER, permit2: PERMIT2 }, order({ token_in: 'ETH', token_out: 'USDC' }, 'exact_in', 10n ** 18n, 1n), 1n);
    expect(exactIn).toHaveLength(1);
    expect(exactIn[0]!.value).toBe(String(10n ** 18n));
    expect(decodeFunctionData({ abi: universalRouterAbi, data: exactIn[0]!.data as Hex }).args[0]).toBe('0x10');
    const exactOut = swapCalls({ universalRouter: ROUTER, permit2: PERMIT2 }, order({ token_in: 'ETH', token_out: 'USDC' }, 'exact_out', 3_000_000n, 2n * 10n ** 15n), 1n);
    expect(exactOut[0]!.value).toBe(String(2n * 10n ** 15n));
    const [commands, inputs] = decodeFunctionData({ abi: universalRouterAbi, data: exactOut[0]!.data as Hex }).args;
    expect(commands).toBe('0x1004'); // V4_SWAP, SWEEP
    expect(decodeAbiParameters(parseAbiParameters('address, address, uint256'), inputs[1]!)).toEqual([NATIVE.address, MSG_SENDER, 0n]);
  });

  it('refuses routes that do not join the tokens through offered pools', () => {
    const code = (ask: Parameters<typeof resolveRoute>[0]) => {
      try {
        resolveRoute(ask, POOLS, TOKENS);
        return 'resolved';
      } catch (e) {
        return `${(e as { code: string }).code} ${(e as { field: string }).field}`;
      }
    };
    expect(code({ token_in: 'ETH', token_out: 'USDT' })).toBe('unknown_pool token_out');
    expect(code({ token_in: 'ETH', token_out: 'eth' })).toBe('same_token token_out');
    expect(code({ token_in: 'DAI', token_out: 'ETH' })).toBe('unknown_token token_in');
    expect(code({ token_in: 'ETH', token_out: 'USDT', route: 'USDT' })).toBe('invalid_route route');
    expect(code({ token_in: 'ETH', token_out: 'USDT', route: 'USDC', fee: '3000' })).toBe('invalid_route fee');
    expect(code({ token_in: 'ETH', token_out: 'USDT', route: 'USDC', fee: '3000,100' })).toBe('invalid_route fee');
    expect(code({ token_in: 'ETH', token_out: 'USDT', route: 'USDC', fee: '3000/60,500' })).toBe('resolved');
  });
});

describe('pool-b-v4 prices', () => {
  it('keeps 6 significant digits after the point, also below 1', () => {
    expect(significant(3000n * 10n ** 18n)).toBe('3000');
    expect(significant(10n ** 18n / 3000n)).toBe('0.000333333');
    expect(significant(15n * 10n ** 17n + 7n)).toBe('1.5');
    expect(significant(0n)).toBe('0');
  });
});
