import { encodeAbiParameters, getAddress, getContractAddress, isAddress, keccak256, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { amountOf, TokenInfoSchema, type TokenInfo } from '../common/amounts.ts';
import { ProtocolError } from '../common/errors.ts';
import { readOf, type Read } from '../common/reads.ts';
import { NATIVE_SYMBOL } from '../common/swap.ts';
import { tokenInfoReads } from '../common/tokens.ts';
import type { ProtocolContext } from '../types.ts';
import { poolAbi } from './abi.ts';
import type { UniswapV3Config } from './config.ts';

/** keccak256 of UniswapV3Pool's init code (v3-core 1.0.1): every canonical factory's pools are at CREATE2 addresses from it. */
export const POOL_INIT_CODE_HASH: Hex = '0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54';

/** A pool's address, as the factory deploys it (PoolAddress.computeAddress): no read needed. */
export function poolAddress(factory: Address, tokenA: Address, tokenB: Address, fee: number): Address {
  const [token0, token1] = sortTokens(tokenA, tokenB);
  const salt = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'address' }, { type: 'uint24' }], [token0, token1, fee]));
  return getContractAddress({ opcode: 'CREATE2', from: factory, salt, bytecodeHash: POOL_INIT_CODE_HASH });
}

export const sortTokens = (a: Address, b: Address): [Address, Address] => (BigInt(a) < BigInt(b) ? [getAddress(a), getAddress(b)] : [getAddress(b), getAddress(a)]);

/** A pool the deployment lists, with its tokens and its state at one block. */
export interface Pool {
  address: Address;
  token0: TokenInfo;
  token1: TokenInfo;
  fee: number;
  tickSpacing: number;
  sqrtPriceX96: bigint;
  tick: number;
  liquidity: bigint;
}

/** The listed pools and every token they hold, read in two batches (token infos, then each pool's state). */
export interface PoolSet {
  pools: Pool[];
  tokens: TokenInfo[];
  /** The chain's WETH9 (the router wraps native ETH into it). */
  weth: TokenInfo;
}

export async function loadPools(ctx: ProtocolContext<'uniswapV3'>): Promise<PoolSet> {
  const config = ctx.config as UniswapV3Config;
  const addresses = [...new Set([config.weth, ...config.pools.flatMap((p) => [p.tokenA, p.tokenB])].map((a) => getAddress(a)))];
  const infos = await ctx.read(addresses.flatMap((a) => tokenInfoReads(a)));
  const tokens = addresses.map((address, i) => ({ address, symbol: infos[2 * i] as string, decimals: Number(infos[2 * i + 1]) }));
  const byAddress = new Map(tokens.map((t) => [t.address.toLowerCase(), t]));
  const listed = config.pools.map((p) => {
    const [token0, token1] = sortTokens(p.tokenA, p.tokenB);
    return { address: poolAddress(config.factory, token0, token1, p.fee), token0: byAddress.get(token0.toLowerCase())!, token1: byAddress.get(token1.toLowerCase())!, fee: p.fee };
  });
  const reads: Read<unknown>[] = listed.flatMap((p) => [
    readOf({ address: p.address, abi: poolAbi, functionName: 'slot0', label: `slot0 of the ${p.token0.symbol}/${p.token1.symbol} ${p.fee} pool ${p.address}` }),
    readOf({ address: p.address, abi: poolAbi, functionName: 'liquidity', label: `liquidity of ${p.address}` }),
    readOf({ address: p.address, abi: poolAbi, functionName: 'tickSpacing', label: `tickSpacing of ${p.address}` }),
  ]);
  const state = await ctx.read(reads);
  const pools = listed.map((p, i) => {
    const slot0 = state[3 * i] as readonly [bigint, number, ...unknown[]];
    return { ...p, sqrtPriceX96: slot0[0], tick: Number(slot0[1]), liquidity: state[3 * i + 1] as bigint, tickSpacing: Number(state[3 * i + 2]) };
  });
  return { pools, tokens, weth: byAddress.get(getAddress(config.weth).toLowerCase())! };
}

/**
 * A token as a swap names it: one of the pools' tokens, or the native coin (`native`, which the pools see as WETH:
 * paid as the call's value and wrapped by the router, or unwrapped to the wallet).
 */
export type SwapToken = TokenInfo;

/** `ETH` (the native coin), or a token of the listed pools by symbol or address; else 400 unknown_token with the list. */
export function resolveSwapToken(input: string, set: PoolSet, field: string): SwapToken {
  if (input.toUpperCase() === NATIVE_SYMBOL) return { ...set.weth, symbol: NATIVE_SYMBOL, native: true };
  const inPools = set.tokens.filter((t) => set.pools.some((p) => p.token0.address === t.address || p.token1.address === t.address));
  const found = isAddress(input, { strict: false })
    ? inPools.find((t) => t.address.toLowerCase() === input.toLowerCase())
    : inPools.find((t) => t.symbol.toLowerCase() === input.toLowerCase());
  if (found) return found;
  const known = [NATIVE_SYMBOL, ...inPools.map((t) => `${t.symbol} (${t.address})`)].join(', ');
  throw new ProtocolError('unknown_token', `${input} is not a token of the pools offered here; they take: ${known}`, { field });
}

/** The pools of a pair (either order), every fee tier listed. */
export const poolsOfPair = (set: PoolSet, a: Address, b: Address): Pool[] => {
  const [t0, t1] = sortTokens(a, b);
  return set.pools.filter((p) => p.token0.address === t0 && p.token1.address === t1);
};

/** A pool as the answers show it: its tokens, fee, state, and its price both ways. */
export const PoolSchema = z.object({
  address: z.string(),
  token0: TokenInfoSchema,
  token1: TokenInfoSchema,
  fee: z.int().meta({ description: 'Fee tier in hundredths of a bip (3000 = 0.3%)' }),
  tick_spacing: z.int(),
  sqrt_price_x96: z.string(),
  tick: z.int(),
  liquidity: z.string().meta({ description: 'In-range liquidity (L)' }),
  price: z.object({
    token1_per_token0: z.string().meta({ description: 'How much token1 one whole token0 is worth at the current price' }),
    token0_per_token1: z.string(),
  }),
});

/** token1 per whole token0 at √P, in whole tokens (10 significant decimals). */
export function priceOfPool(p: Pick<Pool, 'sqrtPriceX96' | 'token0' | 'token1'>): { token1_per_token0: string; token0_per_token1: string } {
  const Q192 = 2n ** 192n;
  const p2 = p.sqrtPriceX96 * p.sqrtPriceX96;
  const scale = 18;
  // raw price × 10^(d0 − d1), with 18 decimals of precision.
  const oneToZero = (p2 * 10n ** BigInt(p.token0.decimals + scale)) / (Q192 * 10n ** BigInt(p.token1.decimals));
  const zeroToOne = p2 === 0n ? 0n : (Q192 * 10n ** BigInt(p.token1.decimals + scale)) / (p2 * 10n ** BigInt(p.token0.decimals));
  const cut = (x: bigint) => amountOf(x, scale).formatted.replace(/(\.\d{0,10})\d*$/, '$1');
  return { token1_per_token0: cut(oneToZero), token0_per_token1: cut(zeroToOne) };
}

export function presentPool(p: Pool) {
  return {
    address: p.address,
    token0: p.token0,
    token1: p.token1,
    fee: p.fee,
    tick_spacing: p.tickSpacing,
    sqrt_price_x96: p.sqrtPriceX96.toString(),
    tick: p.tick,
    liquidity: p.liquidity.toString(),
    price: priceOfPool(p),
  };
}
