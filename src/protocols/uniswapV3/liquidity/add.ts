import { encodeFunctionData, getAddress, isAddress, type Address } from 'viem';
import { z } from 'zod';
import type { Call } from '../../../api/v1alpha1/index.ts';
import { amountOf, AmountSchema, TokenInfoSchema, type TokenInfo } from '../../common/amounts.ts';
import { approveCall, callOf } from '../../common/calls.ts';
import type { Observation } from '../../common/effects.ts';
import { ProtocolError } from '../../common/errors.ts';
import { DEFAULT_DEADLINE_SECONDS, DEFAULT_SLIPPAGE_BPS } from '../../common/swap.ts';
import { balanceOfRead } from '../../common/tokens.ts';
import type { AgentContext } from '../../types.ts';
import type { UniswapV3Config } from '../config.ts';
import { loadPools, presentPool, PoolSchema, priceOfPool, type Pool, type PoolSet } from '../pools.ts';
import { positionManagerAbi } from '../positionManagerAbi.ts';
import { mintObservation, positionObservation, walletPositionsDetailed, type NftPosition, type Position } from '../positions.ts';
import type { AddAsk } from './inputs.ts';
import { amountsForLiquidity, liquidityForAmount0, liquidityForAmount1, liquidityForAmounts } from './liquidityAmounts.ts';
import { rangeOf } from './range.ts';
import { sqrtRatioAtTick, usableTickBounds } from './tickMath.ts';

/** The pool `pool` names among the listed ones: its address, or a pair (either order) with `fee` where the pair has several. */
export function selectPool(set: PoolSet, input: string, fee: number | undefined): Pool {
  const listed = set.pools.map((p) => `${p.token0.symbol}/${p.token1.symbol} ${p.fee} (${p.address})`).join(', ');
  if (isAddress(input, { strict: false })) {
    const found = set.pools.find((p) => p.address.toLowerCase() === input.toLowerCase());
    if (!found) throw new ProtocolError('unknown_pool', `${input} is not a pool offered here; the pools are: ${listed}`, { field: 'pool' });
    if (fee !== undefined && fee !== found.fee) throw new ProtocolError('unknown_pool', `the pool ${input} has fee ${found.fee}, not ${fee}`, { field: 'fee' });
    return found;
  }
  const [a, b] = input.split('/').map((s) => s.toLowerCase()) as [string, string];
  const names = (t: TokenInfo) => [t.symbol.toLowerCase(), t.address.toLowerCase()];
  const pair = set.pools.filter((p) => (names(p.token0).includes(a) && names(p.token1).includes(b)) || (names(p.token0).includes(b) && names(p.token1).includes(a)));
  if (pair.length === 0) throw new ProtocolError('unknown_pool', `no pool of ${input} is offered here; the pools are: ${listed}`, { field: 'pool' });
  const tiers = pair.map((p) => p.fee).join(', ');
  if (fee === undefined) {
    if (pair.length > 1) throw new ProtocolError('unknown_pool', `${input} has pools at fee tiers ${tiers}: give fee`, { field: 'fee' });
    return pair[0]!;
  }
  const found = pair.find((p) => p.fee === fee);
  if (!found) throw new ProtocolError('unknown_pool', `${input} has no pool at fee ${fee} here; its fee tiers: ${tiers}`, { field: 'fee' });
  return found;
}

/** An amount in token units as the smallest unit; more decimals than the token has is refused, never rounded. */
function rawAmount(text: string, token: TokenInfo, field: string): bigint {
  const [whole, frac = ''] = text.split('.');
  if (frac.length > token.decimals) throw new ProtocolError('invalid_amount', `${field} has ${frac.length} decimals; ${token.symbol} has ${token.decimals}`, { field });
  return BigInt(whole!) * 10n ** BigInt(token.decimals) + BigInt(frac.padEnd(token.decimals, '0') || '0');
}

/** What an add would do at the pool's price now: the range, the liquidity and the amounts taken, and the bounds. */
export interface AddQuote {
  pool: Pool;
  /** The position added to (increaseLiquidity), or none: a mint. */
  nft: NftPosition | undefined;
  tickLower: number;
  tickUpper: number;
  quoteToken: TokenInfo;
  amount0Desired: bigint;
  amount1Desired: bigint;
  liquidity: bigint;
  amount0: bigint;
  amount1: bigint;
  amount0Min: bigint;
  amount1Min: bigint;
  slippageBps: number;
  /** The wallet's position NFT count now (a mint makes it one more). */
  nftCount: bigint;
}

/**
 * The amounts to offer: both as given, or one given and the other what the liquidity it buys needs (the pool's
 * rounding up), so the manager's min(L0, L1) is that liquidity. A side the range does not hold is refused.
 */
function desiredAmounts(ask: AddAsk, pool: Pool, sqrtP: bigint, tickLower: number, tickUpper: number): { d0: bigint; d1: bigint } {
  const a = sqrtRatioAtTick(tickLower);
  const b = sqrtRatioAtTick(tickUpper);
  const given0 = ask.amount0 === undefined ? undefined : rawAmount(ask.amount0, pool.token0, 'amount0');
  const given1 = ask.amount1 === undefined ? undefined : rawAmount(ask.amount1, pool.token1, 'amount1');
  if (given0 !== undefined && given1 !== undefined) return { d0: given0, d1: given1 };
  const price = { sqrtPriceX96: sqrtP, tick: pool.tick };
  if (given0 !== undefined) {
    if (sqrtP >= b) throw new ProtocolError('invalid_amount', `the range is below the price: it holds only ${pool.token1.symbol} (token1): give amount1`, { field: 'amount0' });
    const l = liquidityForAmount0(sqrtP > a ? sqrtP : a, b, given0);
    return { d0: given0, d1: amountsForLiquidity(price, tickLower, tickUpper, l, 'add').amount1 };
  }
  if (sqrtP <= a) throw new ProtocolError('invalid_amount', `the range is above the price: it holds only ${pool.token0.symbol} (token0): give amount0`, { field: 'amount1' });
  const l = liquidityForAmount1(a, sqrtP < b ? sqrtP : b, given1!);
  return { d0: amountsForLiquidity(price, tickLower, tickUpper, l, 'add').amount0, d1: given1! };
}

const lessSlippage = (x: bigint, bps: number) => (x * (10_000n - BigInt(bps))) / 10_000n;

/** The quote of an add: the pool (or the wallet's position) now, the range, the liquidity the manager would add and what the pool would take. */
export async function quoteAdd(ctx: AgentContext<'uniswapV3'>, ask: AddAsk): Promise<AddQuote> {
  const npm = getAddress((ctx.config as UniswapV3Config).positionManager);
  let pool: Pool;
  let nft: NftPosition | undefined;
  let nftCount: bigint;
  if (ask.position !== undefined) {
    const mine = await walletPositionsDetailed(ctx, ctx.wallet);
    const found = mine.positions.find((p) => p.nft.tokenId === BigInt(ask.position!));
    if (!found) throw unknownPosition(ask.position, ctx.wallet, mine.unlisted);
    // The range's price at the same block as the record: the pool's state read with it.
    pool = { ...found.pool, sqrtPriceX96: found.state.sqrtPriceX96, tick: found.state.tick };
    nft = found.nft;
    nftCount = BigInt(mine.positions.length + mine.unlisted.length);
  } else {
    const [set, [count]] = await Promise.all([
      loadPools(ctx),
      ctx.read([{ ...balanceOfRead(npm, ctx.wallet), label: `position NFTs of ${ctx.wallet}` }]),
    ]);
    pool = selectPool(set, ask.pool!, ask.fee);
    nftCount = count;
  }
  const prices = ask.price_lower !== undefined && ask.price_upper !== undefined ? { lower: ask.price_lower, upper: ask.price_upper, quoteToken: ask.quote_token } : undefined;
  const range = nft ? { tickLower: nft.tickLower, tickUpper: nft.tickUpper, quoteToken: pool.token1 } : rangeOf(pool, prices);
  const { d0, d1 } = desiredAmounts(ask, pool, pool.sqrtPriceX96, range.tickLower, range.tickUpper);
  const liquidity = liquidityForAmounts(pool.sqrtPriceX96, sqrtRatioAtTick(range.tickLower), sqrtRatioAtTick(range.tickUpper), d0, d1);
  if (liquidity === 0n) throw new ProtocolError('invalid_amount', 'the amounts are too small to add any liquidity in this range', { field: ask.amount0 !== undefined ? 'amount0' : 'amount1' });
  const taken = amountsForLiquidity(pool, range.tickLower, range.tickUpper, liquidity, 'add');
  const slippageBps = ask.slippage_bps ?? DEFAULT_SLIPPAGE_BPS;
  return {
    pool,
    nft,
    ...range,
    amount0Desired: d0,
    amount1Desired: d1,
    liquidity,
    ...taken,
    amount0Min: ask.amount0_min !== undefined ? BigInt(ask.amount0_min) : lessSlippage(taken.amount0, slippageBps),
    amount1Min: ask.amount1_min !== undefined ? BigInt(ask.amount1_min) : lessSlippage(taken.amount1, slippageBps),
    slippageBps,
    nftCount,
  };
}

/** Which of the pool's tokens is WETH, for `native`: the side paid (or received) as native ETH. */
export function wethSide(pool: Pool, weth: Address): 0 | 1 {
  if (pool.token0.address === getAddress(weth)) return 0;
  if (pool.token1.address === getAddress(weth)) return 1;
  throw new ProtocolError('unknown_token', `native: the pool ${pool.token0.symbol}/${pool.token1.symbol} holds no WETH, so no side can be native ETH`, { field: 'native' });
}

/** A pool's WETH as the native coin it stands for (balances read as the account's own). */
export const asNative = (t: TokenInfo): TokenInfo => ({ ...t, symbol: 'ETH', native: true });

export const unknownPosition = (tokenId: string, wallet: Address, unlisted: readonly string[]) =>
  new ProtocolError(
    'unknown_position',
    unlisted.includes(tokenId)
      ? `position ${tokenId} is in a pool this deployment does not list`
      : `the wallet ${wallet} holds no Uniswap v3 position ${tokenId} (GET balances lists its positions)`,
    { field: 'position' },
  );

const rangeView = (pool: Pool, tick: number) => priceOfPool({ sqrtPriceX96: sqrtRatioAtTick(tick), token0: pool.token0, token1: pool.token1 });

export const AddQuoteSchema = z.object({
  chain: z.string(),
  action: z.enum(['mint', 'increase']).meta({ description: 'mint: a new position NFT to the wallet; increase: liquidity added to `position`' }),
  position: z.string().nullable().meta({ description: 'The position added to (increase); null for a mint' }),
  pool: PoolSchema,
  quote_token: TokenInfoSchema.meta({ description: 'The token the range’s prices were given in' }),
  tick_lower: z.int(),
  tick_upper: z.int(),
  price_lower: z.object({ token1_per_token0: z.string(), token0_per_token1: z.string() }).meta({ description: 'The price at tick_lower, both ways' }),
  price_upper: z.object({ token1_per_token0: z.string(), token0_per_token1: z.string() }),
  full_range: z.boolean(),
  in_range: z.boolean().meta({ description: "The pool's price is inside the range (both tokens are taken)" }),
  liquidity: z.string().meta({ description: 'The liquidity the position manager would add (LiquidityAmounts, rounded down)' }),
  amount0_desired: AmountSchema.meta({ description: 'What the action offers of token0 (approved exactly, the rest of the approval taken back after)' }),
  amount1_desired: AmountSchema,
  amount0: AmountSchema.meta({ description: 'token0 the pool would take for that liquidity at the price now (rounded up, as the pool does)' }),
  amount1: AmountSchema,
  amount0_min: AmountSchema.meta({ description: 'The least token0 the add may take (amount0 less slippage_bps): below it the position manager reverts (PriceSlippageCheck)' }),
  amount1_min: AmountSchema,
  slippage_bps: z.int(),
});

export function presentAddQuote(chain: string, q: AddQuote): z.output<typeof AddQuoteSchema> {
  const bounds = usableTickBounds(q.pool.tickSpacing);
  const t0 = (x: bigint) => amountOf(x, q.pool.token0.decimals);
  const t1 = (x: bigint) => amountOf(x, q.pool.token1.decimals);
  return {
    chain,
    action: q.nft ? 'increase' : 'mint',
    position: q.nft ? q.nft.tokenId.toString() : null,
    pool: presentPool(q.pool),
    quote_token: q.quoteToken,
    tick_lower: q.tickLower,
    tick_upper: q.tickUpper,
    price_lower: rangeView(q.pool, q.tickLower),
    price_upper: rangeView(q.pool, q.tickUpper),
    full_range: q.tickLower === bounds.min && q.tickUpper === bounds.max,
    in_range: q.pool.tick >= q.tickLower && q.pool.tick < q.tickUpper,
    liquidity: q.liquidity.toString(),
    amount0_desired: t0(q.amount0Desired),
    amount1_desired: t1(q.amount1Desired),
    amount0: t0(q.amount0),
    amount1: t1(q.amount1),
    amount0_min: t0(q.amount0Min),
    amount1_min: t1(q.amount1Min),
    slippage_bps: q.slippageBps,
  };
}

/**
 * The batch of an add: exact approvals of the desired amounts to the position manager, mint (a new NFT to the
 * wallet) or increaseLiquidity, then each approval set back to zero (the manager may take less than offered:
 * nothing stays approved). The bounds are the quote's minimums and the deadline, absolute.
 */
export async function planAdd(ctx: AgentContext<'uniswapV3'>, ask: AddAsk) {
  const npm = getAddress((ctx.config as UniswapV3Config).positionManager);
  const [q, now] = await Promise.all([quoteAdd(ctx, ask), ask.deadline === undefined ? ctx.now() : Promise.resolve(0n)]);
  const deadline = ask.deadline !== undefined ? BigInt(ask.deadline) : now + DEFAULT_DEADLINE_SECONDS;
  const { pool } = q;
  const side = ask.native ? wethSide(pool, (ctx.config as UniswapV3Config).weth) : undefined;
  const [[balance0, balance1], native] = await Promise.all([
    ctx.read([balanceOfRead(pool.token0.address, ctx.wallet), balanceOfRead(pool.token1.address, ctx.wallet)]),
    side === undefined ? Promise.resolve(0n) : ctx.nativeBalance(),
  ]);
  const held = [side === 0 ? native : balance0, side === 1 ? native : balance1] as const;
  const shown = [side === 0 ? asNative(pool.token0) : pool.token0, side === 1 ? asNative(pool.token1) : pool.token1] as const;
  for (const [balance, desired, token, field] of [[held[0], q.amount0Desired, shown[0], 'amount0'], [held[1], q.amount1Desired, shown[1], 'amount1']] as const) {
    if (balance < desired) {
      throw new ProtocolError('insufficient_balance', `the wallet holds ${amountOf(balance, token.decimals).formatted} ${token.symbol}; the add offers ${amountOf(desired, token.decimals).formatted}`, { field });
    }
  }
  const params = q.nft
    ? encodeFunctionData({
        abi: positionManagerAbi,
        functionName: 'increaseLiquidity',
        args: [{ tokenId: q.nft.tokenId, amount0Desired: q.amount0Desired, amount1Desired: q.amount1Desired, amount0Min: q.amount0Min, amount1Min: q.amount1Min, deadline }],
      })
    : encodeFunctionData({
        abi: positionManagerAbi,
        functionName: 'mint',
        args: [
          {
            token0: pool.token0.address,
            token1: pool.token1.address,
            fee: pool.fee,
            tickLower: q.tickLower,
            tickUpper: q.tickUpper,
            amount0Desired: q.amount0Desired,
            amount1Desired: q.amount1Desired,
            amount0Min: q.amount0Min,
            amount1Min: q.amount1Min,
            recipient: ctx.wallet,
            deadline,
          },
        ],
      });
  // Native ETH: the WETH side is the call's value, which the manager wraps as it pays the pool; what it did not
  // need comes back with refundETH in the same multicall.
  const nativeValue = side === undefined ? 0n : side === 0 ? q.amount0Desired : q.amount1Desired;
  const add: Call =
    side === undefined
      ? { target: npm, data: params, value: '0' }
      : callOf({ address: npm, abi: positionManagerAbi, functionName: 'multicall', args: [[params, encodeFunctionData({ abi: positionManagerAbi, functionName: 'refundETH' })]], value: nativeValue });
  const offered = ([[pool.token0, q.amount0Desired, 0], [pool.token1, q.amount1Desired, 1]] as const).filter(([, d, i]) => d > 0n && i !== side);
  const calls = [...offered.map(([t, d]) => approveCall(t.address, npm, d)), add, ...offered.map(([t]) => approveCall(t.address, npm, 0n))];
  const position: Observation<Position | null> = q.nft
    ? positionObservation(npm, pool, q.nft)
    : mintObservation(npm, pool, ctx.wallet, q.nftCount, { tickLower: q.tickLower, tickUpper: q.tickUpper, amount0Desired: q.amount0Desired, amount1Desired: q.amount1Desired });
  return {
    quote: q,
    calls,
    tokens: [...shown],
    position,
    bounds: { amount0_min: q.amount0Min.toString(), amount1_min: q.amount1Min.toString(), deadline: Number(deadline) },
  };
}
