import { encodeFunctionData, getAddress, zeroAddress } from 'viem';
import { z } from 'zod';
import { amountOf, AmountSchema } from '../../common/amounts.ts';
import { callOf } from '../../common/calls.ts';
import { ProtocolError } from '../../common/errors.ts';
import { DEFAULT_DEADLINE_SECONDS, DEFAULT_SLIPPAGE_BPS } from '../../common/swap.ts';
import type { AgentContext } from '../../types.ts';
import type { UniswapV3Config } from '../config.ts';
import type { Pool } from '../pools.ts';
import { positionManagerAbi } from '../positionManagerAbi.ts';
import { feesOwed, positionObservation, PositionSchema, walletPositionsDetailed, type NftPosition, type Position } from '../positions.ts';
import { asNative, unknownPosition, wethSide } from './add.ts';
import type { RemoveAsk } from './inputs.ts';
import { amountsForLiquidity } from './liquidityAmounts.ts';

const MAX_UINT128 = (1n << 128n) - 1n;

export interface RemoveQuote {
  pool: Pool;
  nft: NftPosition;
  position: Position;
  percentage: number;
  liquidity: bigint;
  /** What decreaseLiquidity pays back (the pool's burn, rounded down). */
  amount0: bigint;
  amount1: bigint;
  /** What the manager owes besides: fees earned, and any tokens removed before but not collected. */
  fees0: bigint;
  fees1: bigint;
  amount0Min: bigint;
  amount1Min: bigint;
  slippageBps: number;
}

/** The quote of a remove: the wallet's position now, the liquidity `percentage` of it is, and what decrease + collect would pay. */
export async function quoteRemove(ctx: AgentContext<'uniswapV3'>, ask: RemoveAsk): Promise<RemoveQuote> {
  const mine = await walletPositionsDetailed(ctx, ctx.wallet);
  const found = mine.positions.find((p) => p.nft.tokenId === BigInt(ask.position));
  if (!found) throw unknownPosition(ask.position, ctx.wallet, mine.unlisted);
  const { nft, pool, state } = found;
  const liquidity = (nft.liquidity * BigInt(ask.percentage)) / 100n;
  const out = amountsForLiquidity(state, nft.tickLower, nft.tickUpper, liquidity, 'remove');
  const { fees0, fees1 } = feesOwed(nft, state);
  if (liquidity === 0n && fees0 === 0n && fees1 === 0n) {
    throw new ProtocolError('nothing_to_withdraw', `position ${ask.position} holds no liquidity and is owed nothing`, { field: nft.liquidity === 0n ? 'position' : 'percentage' });
  }
  const slippageBps = ask.slippage_bps ?? DEFAULT_SLIPPAGE_BPS;
  const less = (x: bigint) => (x * (10_000n - BigInt(slippageBps))) / 10_000n;
  return {
    pool: { ...pool, sqrtPriceX96: state.sqrtPriceX96, tick: state.tick },
    nft,
    position: found.position,
    percentage: ask.percentage,
    liquidity,
    ...out,
    fees0,
    fees1,
    amount0Min: ask.amount0_min !== undefined ? BigInt(ask.amount0_min) : less(out.amount0),
    amount1Min: ask.amount1_min !== undefined ? BigInt(ask.amount1_min) : less(out.amount1),
    slippageBps,
  };
}

export const RemoveQuoteSchema = z.object({
  chain: z.string(),
  position: PositionSchema.meta({ description: 'The position now' }),
  percentage: z.int(),
  liquidity: z.string().meta({ description: 'The liquidity removed: the position’s × percentage / 100, rounded down' }),
  amount0: AmountSchema.meta({ description: 'token0 the removed liquidity pays back at the price now (rounded down, as the pool does)' }),
  amount1: AmountSchema,
  fees0: AmountSchema.meta({ description: 'token0 owed besides (fees earned; tokens removed earlier and not collected), all collected too' }),
  fees1: AmountSchema,
  total0: AmountSchema.meta({ description: 'amount0 + fees0: what the collect pays the wallet' }),
  total1: AmountSchema,
  amount0_min: AmountSchema.meta({ description: 'The least token0 decreaseLiquidity may pay back (amount0 less slippage_bps), else PriceSlippageCheck' }),
  amount1_min: AmountSchema,
  slippage_bps: z.int(),
});

export function presentRemoveQuote(chain: string, q: RemoveQuote): z.output<typeof RemoveQuoteSchema> {
  const t0 = (x: bigint) => amountOf(x, q.pool.token0.decimals);
  const t1 = (x: bigint) => amountOf(x, q.pool.token1.decimals);
  return {
    chain,
    position: q.position,
    percentage: q.percentage,
    liquidity: q.liquidity.toString(),
    amount0: t0(q.amount0),
    amount1: t1(q.amount1),
    fees0: t0(q.fees0),
    fees1: t1(q.fees1),
    total0: t0(q.amount0 + q.fees0),
    total1: t1(q.amount1 + q.fees1),
    amount0_min: t0(q.amount0Min),
    amount1_min: t1(q.amount1Min),
    slippage_bps: q.slippageBps,
  };
}

/**
 * The batch of a remove: one call, the position manager's own multicall of decreaseLiquidity (the liquidity,
 * with the minimums and deadline) and collect (everything owed, to the wallet). The NFT is never burned: at 100%
 * it stays in the wallet, empty, and can be added to again.
 */
export async function planRemove(ctx: AgentContext<'uniswapV3'>, ask: RemoveAsk) {
  const npm = getAddress((ctx.config as UniswapV3Config).positionManager);
  const [q, now] = await Promise.all([quoteRemove(ctx, ask), ask.deadline === undefined ? ctx.now() : Promise.resolve(0n)]);
  const deadline = ask.deadline !== undefined ? BigInt(ask.deadline) : now + DEFAULT_DEADLINE_SECONDS;
  const tokenId = q.nft.tokenId;
  const side = ask.native ? wethSide(q.pool, (ctx.config as UniswapV3Config).weth) : undefined;
  const inner = [
    ...(q.liquidity > 0n
      ? [encodeFunctionData({ abi: positionManagerAbi, functionName: 'decreaseLiquidity', args: [{ tokenId, liquidity: q.liquidity, amount0Min: q.amount0Min, amount1Min: q.amount1Min, deadline }] })]
      : []),
    // Native ETH: collected to the manager itself (recipient 0), then its WETH unwrapped and the other token swept to the wallet.
    encodeFunctionData({ abi: positionManagerAbi, functionName: 'collect', args: [{ tokenId, recipient: side === undefined ? ctx.wallet : zeroAddress, amount0Max: MAX_UINT128, amount1Max: MAX_UINT128 }] }),
    ...(side === undefined
      ? []
      : [
          encodeFunctionData({ abi: positionManagerAbi, functionName: 'unwrapWETH9', args: [0n, ctx.wallet] }),
          encodeFunctionData({ abi: positionManagerAbi, functionName: 'sweepToken', args: [(side === 0 ? q.pool.token1 : q.pool.token0).address, 0n, ctx.wallet] }),
        ]),
  ];
  return {
    quote: q,
    calls: [callOf({ address: npm, abi: positionManagerAbi, functionName: 'multicall', args: [inner] })],
    tokens: [side === 0 ? asNative(q.pool.token0) : q.pool.token0, side === 1 ? asNative(q.pool.token1) : q.pool.token1],
    position: positionObservation(npm, q.pool, q.nft),
    bounds: { amount0_min: q.amount0Min.toString(), amount1_min: q.amount1Min.toString(), deadline: Number(deadline) },
  };
}
