import { encodeAbiParameters, formatUnits, getAddress, keccak256, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { TokenInfoSchema, type TokenInfo } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf, type Read } from '../common/reads.ts';
import { NATIVE_SYMBOL } from '../common/swap.ts';
import { resolveToken, tokenInfoReads } from '../common/tokens.ts';
import type { ProtocolContext } from '../types.ts';
import { stateViewAbi } from './abi.ts';
import { NATIVE_CURRENCY, type UniswapV4PoolKey } from './config.ts';

/** Native ETH as a token: a v4 pool's currency 0x0. */
export const NATIVE: TokenInfo = { symbol: NATIVE_SYMBOL, address: NATIVE_CURRENCY, decimals: 18, native: true };
export const isNative = (t: Pick<TokenInfo, 'address'>) => BigInt(t.address) === 0n;

export interface PoolKey {
  currency0: Address;
  currency1: Address;
  fee: number;
  tickSpacing: number;
  hooks: Address;
}

/** A listed pool with its tokens (currency0, currency1). */
export interface V4Pool {
  id: Hex;
  key: PoolKey;
  token0: TokenInfo;
  token1: TokenInfo;
}

/** A pool as read now: √P (Q64.96), the tick, the in-range liquidity, the LP fee in force. */
export interface V4PoolState extends V4Pool {
  sqrtPriceX96: bigint;
  tick: number;
  liquidity: bigint;
  lpFee: number;
}

/** A pool's id: keccak256 of its ABI-encoded PoolKey (v4-core PoolIdLibrary.toId). */
export const poolIdOf = (k: PoolKey): Hex =>
  keccak256(
    encodeAbiParameters(
      [{ type: 'address' }, { type: 'address' }, { type: 'uint24' }, { type: 'int24' }, { type: 'address' }],
      [k.currency0, k.currency1, k.fee, k.tickSpacing, k.hooks],
    ),
  );

const keyOf = (k: UniswapV4PoolKey): PoolKey => ({
  currency0: getAddress(k.currency0),
  currency1: getAddress(k.currency1),
  fee: k.fee,
  tickSpacing: k.tickSpacing,
  hooks: getAddress(k.hooks),
});

/** `A/B` as pools name a pair: token0's symbol first. */
export const pairOf = (p: Pick<V4Pool, 'token0' | 'token1'>) => `${p.token0.symbol}/${p.token1.symbol}`;

/** The configured pools and every token they hold, in one batched read (symbols and decimals of the ERC-20s). */
export async function loadPools(ctx: ProtocolContext<'uniswapV4'>): Promise<{ pools: V4Pool[]; tokens: TokenInfo[] }> {
  const keys = ctx.config.pools.map(keyOf);
  const erc20s = [...new Set(keys.flatMap((k) => [k.currency0, k.currency1]).filter((a) => BigInt(a) !== 0n))];
  const infos = await ctx.read(erc20s.flatMap((a) => tokenInfoReads(a)));
  const tokens: TokenInfo[] = erc20s.map((address, i) => ({ address, symbol: infos[2 * i] as string, decimals: Number(infos[2 * i + 1]) }));
  const byAddress = (a: Address) => (BigInt(a) === 0n ? NATIVE : tokens.find((t) => t.address === a)!);
  const pools = keys.map((key) => ({ id: poolIdOf(key), key, token0: byAddress(key.currency0), token1: byAddress(key.currency1) }));
  const native = keys.some((k) => BigInt(k.currency0) === 0n);
  return { pools, tokens: native ? [NATIVE, ...tokens] : tokens };
}

export const slot0Read = (stateView: Address, id: Hex): Read<readonly [bigint, number, number, number]> =>
  readOf({ address: stateView, abi: stateViewAbi, functionName: 'getSlot0', args: [id], label: `StateView.getSlot0(${id})` });

/** The state of `pools` now, in one batched read. A pool the PoolManager has not initialized is a 502 naming it. */
export async function poolStates(ctx: ProtocolContext<'uniswapV4'>, pools: readonly V4Pool[]): Promise<V4PoolState[]> {
  const sv = getAddress(ctx.config.stateView);
  const reads = pools.flatMap((p) => [slot0Read(sv, p.id), readOf({ address: sv, abi: stateViewAbi, functionName: 'getLiquidity', args: [p.id] })] as const);
  const values = await ctx.read(reads);
  return pools.map((p, i) => {
    const [sqrtPriceX96, tick, , lpFee] = values[2 * i] as readonly [bigint, number, number, number];
    if (sqrtPriceX96 === 0n) throw new ProtocolError('protocol_read_failed', `the listed pool ${pairOf(p)} (${p.id}) is not initialized in the PoolManager`);
    return { ...p, sqrtPriceX96, tick, lpFee, liquidity: values[2 * i + 1] as bigint };
  });
}

/** A token input (symbol, any case, ETH for native, or address) among the pools' tokens; else 400 unknown_token. */
export const resolvePoolToken = (input: string, tokens: readonly TokenInfo[], field: string): TokenInfo =>
  resolveToken(input, tokens, field, 'the pools offered here (GET .../pools lists them)');

/** The listed pools joining two tokens (either order). */
export const poolsOfPair = (pools: readonly V4Pool[], a: TokenInfo, b: TokenInfo) =>
  pools.filter((p) => (p.token0.address === a.address && p.token1.address === b.address) || (p.token0.address === b.address && p.token1.address === a.address));

/** token1 per token0 in whole tokens, and the inverse, at √P (Q64.96). */
export function pricesOf(p: V4PoolState): { price0: string; price1: string } {
  // √P² / 2^192 is token1 per token0 in raw units; priceOf scales by the decimals. A large "amount" keeps precision.
  const one0 = 10n ** BigInt(p.token0.decimals + 18);
  const out1 = (one0 * p.sqrtPriceX96 * p.sqrtPriceX96) >> 192n;
  const one1 = 10n ** BigInt(p.token1.decimals + 18);
  const out0 = (one1 << 192n) / (p.sqrtPriceX96 * p.sqrtPriceX96);
  return { price0: significant(priceRaw(one0, p.token0, out1, p.token1)), price1: significant(priceRaw(one1, p.token1, out0, p.token0)) };
}

/** `out / in` in whole tokens, scaled by 1e18. */
const priceRaw = (amountIn: bigint, tIn: TokenInfo, amountOut: bigint, tOut: TokenInfo) =>
  (amountOut * 10n ** BigInt(tIn.decimals) * 10n ** 18n) / (amountIn * 10n ** BigInt(tOut.decimals));

/** A 1e18-scaled value as a decimal with 6 significant digits after the point (a price below 1 keeps its precision). */
export function significant(scaled: bigint, digits = 6): string {
  const s = formatUnits(scaled, 18);
  const [whole, fraction = ''] = s.split('.');
  const cut = (f: string) => f.replace(/0+$/, '');
  if (whole !== '0') return cut(fraction.slice(0, digits)) ? `${whole}.${cut(fraction.slice(0, digits))}` : whole!;
  const lead = fraction.search(/[1-9]/);
  return lead < 0 ? '0' : `0.${cut(fraction.slice(0, lead + digits))}`;
}

export const PoolSchema = z.object({
  id: z.string().meta({ description: "The pool's id: keccak256 of its PoolKey (give it as `pool`)" }),
  pair: z.string().meta({ description: 'TOKEN0/TOKEN1 (currency0 sorts first; native ETH is 0x0, so always first)', examples: ['ETH/USDC'] }),
  currency0: TokenInfoSchema,
  currency1: TokenInfoSchema,
  fee: z.int().meta({ description: 'The LP fee in hundredths of a bip (3000 = 0.3%)' }),
  tick_spacing: z.int(),
  hooks: z.string().meta({ description: 'The hooks contract (0x0: none)' }),
});

export const PoolStateSchema = PoolSchema.extend({
  sqrt_price_x96: z.string().meta({ description: '√P as Q64.96 (currency1 per currency0, raw units)' }),
  tick: z.int(),
  liquidity: z.string().meta({ description: 'The in-range liquidity L' }),
  price: z.object({
    token0_in_token1: z.string().meta({ description: 'One currency0 in currency1 (whole tokens)', examples: ['3000'] }),
    token1_in_token0: z.string().meta({ description: 'One currency1 in currency0', examples: ['0.000333'] }),
  }),
});

export const presentPool = (p: V4Pool): z.infer<typeof PoolSchema> => ({
  id: p.id,
  pair: pairOf(p),
  currency0: p.token0,
  currency1: p.token1,
  fee: p.key.fee,
  tick_spacing: p.key.tickSpacing,
  hooks: p.key.hooks,
});

export function presentPoolState(p: V4PoolState): z.infer<typeof PoolStateSchema> {
  const { price0, price1 } = pricesOf(p);
  return { ...presentPool(p), sqrt_price_x96: p.sqrtPriceX96.toString(), tick: p.tick, liquidity: p.liquidity.toString(), price: { token0_in_token1: price0, token1_in_token0: price1 } };
}
