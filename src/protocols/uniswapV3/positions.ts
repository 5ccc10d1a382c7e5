import { getAddress, type Address } from 'viem';
import { z } from 'zod';
import { amountOf, AmountSchema, TokenInfoSchema } from '../common/amounts.ts';
import type { Observation } from '../common/effects.ts';
import { readOf, type Read } from '../common/reads.ts';
import type { ProtocolContext } from '../types.ts';
import { poolAbi } from './abi.ts';
import type { UniswapV3Config } from './config.ts';
import { amountsForLiquidity, liquidityForAmounts, type PoolPrice } from './liquidity/liquidityAmounts.ts';
import { Q128, sqrtRatioAtTick, usableTickBounds } from './liquidity/tickMath.ts';
import { loadPools, priceOfPool, type Pool, type PoolSet } from './pools.ts';
import { poolFeeAbi, positionManagerAbi } from './positionManagerAbi.ts';

/** A position NFT as NonfungiblePositionManager.positions answers it. */
export interface NftPosition {
  tokenId: bigint;
  token0: Address;
  token1: Address;
  fee: number;
  tickLower: number;
  tickUpper: number;
  liquidity: bigint;
  feeGrowthInside0LastX128: bigint;
  feeGrowthInside1LastX128: bigint;
  tokensOwed0: bigint;
  tokensOwed1: bigint;
}

/** What a position's fees are computed from, read at one block: the pool's price and fee growth, and its two ticks'. */
export interface RangeState extends PoolPrice {
  feeGrowthGlobal0X128: bigint;
  feeGrowthGlobal1X128: bigint;
  /** feeGrowthOutside{0,1}X128 of the lower and upper tick. */
  lower: [bigint, bigint];
  upper: [bigint, bigint];
}

export const PositionSchema = z
  .object({
    token_id: z.string().nullable().meta({ description: 'The position NFT; null in a simulated mint (the manager assigns it at mint: read it from GET balances after)' }),
    pool: z.string(),
    token0: TokenInfoSchema,
    token1: TokenInfoSchema,
    fee: z.int().meta({ description: 'Fee tier in hundredths of a bip (3000 = 0.3%)' }),
    tick_lower: z.int(),
    tick_upper: z.int(),
    price_lower: z.string().meta({ description: 'token1 per whole token0 at tick_lower' }),
    price_upper: z.string().meta({ description: 'token1 per whole token0 at tick_upper' }),
    full_range: z.boolean().meta({ description: 'The range spans every price the pool allows' }),
    in_range: z.boolean().meta({ description: "The pool's price is inside the range: the position earns fees and holds both tokens" }),
    liquidity: z.string().meta({ description: 'The position’s liquidity (L)' }),
    amount0: AmountSchema.meta({ description: "token0 the position holds at the pool's current price: what removing all of it pays back, fees apart" }),
    amount1: AmountSchema,
    fees_owed0: AmountSchema.meta({
      description: 'token0 a collect would pay now: the manager’s tokensOwed0 plus the fees earned since its last update, computed exactly from the pool’s fee growth',
    }),
    fees_owed1: AmountSchema,
  })
  .meta({ id: 'UniswapV3Position' });
export type Position = z.output<typeof PositionSchema>;

const MOD256 = 1n << 256n;
const sub256 = (a: bigint, b: bigint) => (((a - b) % MOD256) + MOD256) % MOD256;

/** Tick.getFeeGrowthInside: the fee growth per unit of liquidity inside the range, wrapping as the pool's uint256s do. */
function feeGrowthInside(s: RangeState, tickLower: number, tickUpper: number, which: 0 | 1): bigint {
  const global = which === 0 ? s.feeGrowthGlobal0X128 : s.feeGrowthGlobal1X128;
  const below = s.tick >= tickLower ? s.lower[which] : sub256(global, s.lower[which]);
  const above = s.tick < tickUpper ? s.upper[which] : sub256(global, s.upper[which]);
  return sub256(sub256(global, below), above);
}

/** What a collect would pay: tokensOwed plus L × (fee growth inside − its last) / 2^128, truncated to uint128 as the manager does. */
export function feesOwed(p: NftPosition, s: RangeState): { fees0: bigint; fees1: bigint } {
  const earned = (which: 0 | 1, last: bigint) => ((p.liquidity * sub256(feeGrowthInside(s, p.tickLower, p.tickUpper, which), last)) / Q128) % (1n << 128n);
  return { fees0: p.tokensOwed0 + earned(0, p.feeGrowthInside0LastX128), fees1: p.tokensOwed1 + earned(1, p.feeGrowthInside1LastX128) };
}

const priceAtTick = (pool: Pool, tick: number) => priceOfPool({ sqrtPriceX96: sqrtRatioAtTick(tick), token0: pool.token0, token1: pool.token1 }).token1_per_token0;

/** A position as the answers show it, from the manager's record and the pool's state at one block. */
export function positionOf(pool: Pool, p: Omit<NftPosition, 'tokenId'> & { tokenId: bigint | null }, s: RangeState): Position {
  const held = amountsForLiquidity(s, p.tickLower, p.tickUpper, p.liquidity, 'remove');
  const { fees0, fees1 } = feesOwed({ ...p, tokenId: p.tokenId ?? 0n }, s);
  const bounds = usableTickBounds(pool.tickSpacing);
  return {
    token_id: p.tokenId === null ? null : p.tokenId.toString(),
    pool: pool.address,
    token0: pool.token0,
    token1: pool.token1,
    fee: pool.fee,
    tick_lower: p.tickLower,
    tick_upper: p.tickUpper,
    price_lower: priceAtTick(pool, p.tickLower),
    price_upper: priceAtTick(pool, p.tickUpper),
    full_range: p.tickLower === bounds.min && p.tickUpper === bounds.max,
    in_range: s.tick >= p.tickLower && s.tick < p.tickUpper,
    liquidity: p.liquidity.toString(),
    amount0: amountOf(held.amount0, pool.token0.decimals),
    amount1: amountOf(held.amount1, pool.token1.decimals),
    fees_owed0: amountOf(fees0, pool.token0.decimals),
    fees_owed1: amountOf(fees1, pool.token1.decimals),
  };
}

const positionManager = (ctx: ProtocolContext<'uniswapV3'>): Address => getAddress((ctx.config as UniswapV3Config).positionManager);

export const nftPositionRead = (npm: Address, tokenId: bigint): Read<NftPosition> => {
  const r = readOf({ address: npm, abi: positionManagerAbi, functionName: 'positions', args: [tokenId], label: `positions(${tokenId}) on the position manager ${npm}` });
  return {
    ...r,
    decode: (data) => {
      const [, , token0, token1, fee, tickLower, tickUpper, liquidity, fg0, fg1, owed0, owed1] = r.decode(data);
      return { tokenId, token0, token1, fee: Number(fee), tickLower: Number(tickLower), tickUpper: Number(tickUpper), liquidity, feeGrowthInside0LastX128: fg0, feeGrowthInside1LastX128: fg1, tokensOwed0: owed0, tokensOwed1: owed1 };
    },
  };
};

const slot0Read = (pool: Address): Read<PoolPrice> => {
  const r = readOf({ address: pool, abi: poolAbi, functionName: 'slot0', label: `slot0 of ${pool}` });
  return { ...r, decode: (data) => { const [sqrtPriceX96, tick] = r.decode(data); return { sqrtPriceX96, tick: Number(tick) }; } };
};

const tickReads = (pool: Address, tick: number): Read<[bigint, bigint]> => {
  const r = readOf({ address: pool, abi: poolFeeAbi, functionName: 'ticks', args: [tick], label: `ticks(${tick}) of ${pool}` });
  return { ...r, decode: (data) => { const t = r.decode(data); return [t[2], t[3]]; } };
};

/** The reads of a range's state (6 calls), and its decoding: the price, the fee growths, the two ticks'. */
export function rangeStateReads(pool: Address, tickLower: number, tickUpper: number): Read<unknown>[] {
  return [
    slot0Read(pool),
    readOf({ address: pool, abi: poolFeeAbi, functionName: 'feeGrowthGlobal0X128', label: `feeGrowthGlobal0X128 of ${pool}` }),
    readOf({ address: pool, abi: poolFeeAbi, functionName: 'feeGrowthGlobal1X128', label: `feeGrowthGlobal1X128 of ${pool}` }),
    tickReads(pool, tickLower),
    tickReads(pool, tickUpper),
  ];
}
export function rangeStateOf(values: readonly unknown[]): RangeState {
  const [price, g0, g1, lower, upper] = values as [PoolPrice, bigint, bigint, [bigint, bigint], [bigint, bigint]];
  return { ...price, feeGrowthGlobal0X128: g0, feeGrowthGlobal1X128: g1, lower, upper };
}

/** The listed pool a manager position is in (same tokens and fee), if the deployment lists it. */
export const poolOfPosition = (set: PoolSet, p: Pick<NftPosition, 'token0' | 'token1' | 'fee'>): Pool | undefined =>
  set.pools.find((pool) => pool.token0.address === getAddress(p.token0) && pool.token1.address === getAddress(p.token1) && pool.fee === p.fee);

/** One read per call but in batches of at most `size` (the chain worker's bound on one read). */
async function readChunked<T>(ctx: ProtocolContext<'uniswapV3'>, reads: Read<T>[], size = 200): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < reads.length; i += size) out.push(...((await ctx.read(reads.slice(i, i + size))) as T[]));
  return out;
}

export interface WalletPositions {
  set: PoolSet;
  /** The wallet's positions in the pools the deployment lists, by token id (ascending). */
  positions: { position: Position; nft: NftPosition; pool: Pool; state: RangeState }[];
  /** Position NFTs of the wallet in pools the deployment does not list (not shown: their tokens are not known here). */
  unlisted: string[];
}

/**
 * The wallet's v3 positions: the manager's ERC-721 enumeration (balanceOf, then every tokenOfOwnerByIndex in one
 * batch), every positions(tokenId) in one batch, then the price, fee growth and tick state of each range in one
 * batch, so amounts and fees are computed at one block. With the listed pools (read meanwhile), four round trips.
 */
export async function walletPositionsDetailed(ctx: ProtocolContext<'uniswapV3'>, wallet: Address, pools?: PoolSet): Promise<WalletPositions> {
  const npm = positionManager(ctx);
  const [set, [count]] = await Promise.all([
    pools ?? loadPools(ctx),
    ctx.read([readOf({ address: npm, abi: positionManagerAbi, functionName: 'balanceOf', args: [wallet], label: `balanceOf(${wallet}) on the position manager ${npm}` })]),
  ]);
  const ids = await readChunked(
    ctx,
    Array.from({ length: Number(count) }, (_, i) => readOf({ address: npm, abi: positionManagerAbi, functionName: 'tokenOfOwnerByIndex', args: [wallet, BigInt(i)] })),
  );
  const nfts = (await readChunked(ctx, ids.map((id) => nftPositionRead(npm, id)))).sort((a, b) => (a.tokenId < b.tokenId ? -1 : 1));
  const listed = nfts.flatMap((nft) => {
    const pool = poolOfPosition(set, nft);
    return pool ? [{ nft, pool }] : [];
  });
  const states = await readChunked(ctx, listed.flatMap(({ nft, pool }) => rangeStateReads(pool.address, nft.tickLower, nft.tickUpper)));
  const positions = listed.map(({ nft, pool }, i) => {
    const state = rangeStateOf(states.slice(5 * i, 5 * i + 5));
    return { nft, pool, state, position: positionOf(pool, nft, state) };
  });
  return { set, positions, unlisted: nfts.filter((n) => !poolOfPosition(set, n)).map((n) => n.tokenId.toString()) };
}

/** The wallet's v3 positions in the listed pools, as GET balances shows them. */
export async function walletPositions(ctx: ProtocolContext<'uniswapV3'>, wallet: Address): Promise<Position[]> {
  return (await walletPositionsDetailed(ctx, wallet)).positions.map((p) => p.position);
}

/** What a simulation observes of an existing position: the manager's record and its range's state, before and after. */
export const positionObservation = (npm: Address, pool: Pool, nft: NftPosition): Observation<Position> => ({
  reads: [nftPositionRead(npm, nft.tokenId), ...rangeStateReads(pool.address, nft.tickLower, nft.tickUpper)],
  summarize: ([record, ...state]) => positionOf(pool, record as NftPosition, rangeStateOf(state)),
});

/**
 * What a simulation observes of a mint. Its token id is not known before it is minted (the manager's counter is
 * private), so it reads the wallet's NFT count (one more after: the mint happened) and the pool's price, and
 * computes the new position as the manager does: the liquidity the desired amounts buy at that price (a mint
 * does not move it), fees none yet. Before the mint: no position (null).
 */
export const mintObservation = (
  npm: Address,
  pool: Pool,
  wallet: Address,
  countNow: bigint,
  range: { tickLower: number; tickUpper: number; amount0Desired: bigint; amount1Desired: bigint },
): Observation<Position | null> => ({
  reads: [readOf({ address: npm, abi: positionManagerAbi, functionName: 'balanceOf', args: [wallet] }), slot0Read(pool.address)],
  summarize: ([count, price]) => {
    if ((count as bigint) === countNow) return null;
    const p = price as PoolPrice;
    const liquidity = liquidityForAmounts(p.sqrtPriceX96, sqrtRatioAtTick(range.tickLower), sqrtRatioAtTick(range.tickUpper), range.amount0Desired, range.amount1Desired);
    const fresh = { tokenId: null, token0: pool.token0.address, token1: pool.token1.address, fee: pool.fee, tickLower: range.tickLower, tickUpper: range.tickUpper, liquidity };
    const zero = { feeGrowthInside0LastX128: 0n, feeGrowthInside1LastX128: 0n, tokensOwed0: 0n, tokensOwed1: 0n };
    // Fee growth inside a fresh position is its own baseline: a zero state makes what it earned zero.
    return positionOf(pool, { ...fresh, ...zero }, { ...p, feeGrowthGlobal0X128: 0n, feeGrowthGlobal1X128: 0n, lower: [0n, 0n], upper: [0n, 0n] });
  },
});
