import { z } from 'zod';
import { REQUIRED } from '../../api/http/index.ts';
import { actionFields, chainInput, decimalAmount, RawAmount, type FamilyChains } from './inputs.ts';
import { amountOf, AmountSchema, TokenInfoSchema, type TokenInfo } from './amounts.ts';
import { ProtocolError } from './errors.ts';

/**
 * What the swap endpoints of every exchange family share (pool-a-v3, pool-b-v4): the body, the bounds a swap is
 * held to (made absolute at the first plan, never loosened by a re-plan), and the price impact against the pools'
 * mid prices. The families supply the quote (their own quoters) and the calls.
 */

/** Slippage when the caller names none, and the most a caller may ask for: past it the request is refused. */
export const DEFAULT_SLIPPAGE_BPS = 50;
export const MAX_SLIPPAGE_BPS = 500;
/** Price impact (the pools' price moved by the swap itself, fees apart) refused above this unless the caller allows more. */
export const DEFAULT_MAX_PRICE_IMPACT_BPS = 300;
/** A swap's deadline when the caller names none: this long after the chain's latest block. */
export const DEFAULT_DEADLINE_SECONDS = 600n;

/** The pseudo-token for the chain's native coin (wrapped by the router where the pool holds WETH). */
export const NATIVE_SYMBOL = 'ETH';

export const SwapTokenInput = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a token symbol or address') })
  .regex(/^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9._-]{1,32})$/, 'must be a token symbol (e.g. USDC), ETH for the native coin, or a 0x-prefixed address')
  .meta({ description: 'A token of the pools offered here: its symbol (any letter case) or address; ETH is the native coin', examples: ['USDC', 'ETH'] });

const Bps = (max: number, what: string) =>
  z
    .int({ error: `must be an integer number of basis points from 0 to ${max}` })
    .min(0, `must be from 0 to ${max} basis points`)
    .max(max, `must be at most ${max} basis points (${max / 100}%): ${what}`);

const UnixSeconds = z
  .int({ error: 'must be a unix time in seconds (an integer)' })
  .min(1, 'must be a unix time in seconds')
  .max(2 ** 40, 'must be a unix time in seconds')
  .meta({ description: "The swap reverts if mined after this unix time (seconds). Default: the chain's latest block + 600 s", examples: [1767225600] });

/** The fields that bound what a swap may cost: relative ones, and the absolute ones the first plan derives from them. */
const boundFields = {
  slippage_bps: Bps(MAX_SLIPPAGE_BPS, 'a wider tolerance is refused; give amount_out_minimum / amount_in_maximum to set the bound yourself')
    .optional()
    .meta({ description: `Tolerated slippage against the quote, in basis points (default ${DEFAULT_SLIPPAGE_BPS} = 0.5%, at most ${MAX_SLIPPAGE_BPS})`, examples: [50] }),
  deadline: UnixSeconds.optional(),
  max_price_impact_bps: Bps(10_000, 'the whole price')
    .optional()
    .meta({ description: `Refuse the swap if it moves the pools' price more than this, fees apart (default ${DEFAULT_MAX_PRICE_IMPACT_BPS} = 3%)`, examples: [100] }),
};

const absent = (description: string) => z.never().optional().meta({ description });

/** A swap's two alternatives over `common`: exact input (amount_in) or exact output (amount_out), exactly one. */
function exactInOrOut<S extends z.ZodRawShape, I extends z.ZodRawShape, O extends z.ZodRawShape>(common: S, inOnly: I, outOnly: O) {
  const exactIn = z.object({
    ...common,
    ...inOnly,
    amount_in: decimalAmount(false).meta({ description: 'Exact input: how much of token_in to sell, in token units' }),
    amount_out: absent('Give amount_in (exact input) or amount_out (exact output), not both'),
  });
  const exactOut = z.object({
    ...common,
    ...outOnly,
    amount_out: decimalAmount(false).meta({ description: 'Exact output: how much of token_out to buy, in token units' }),
    amount_in: absent('Give amount_in (exact input) or amount_out (exact output), not both'),
  });
  return z.xor([exactIn, exactOut], { error: 'must give one amount: amount_in (exact input) or amount_out (exact output)' });
}

/**
 * A quote's body: `chain`, `token_in`, `token_out`, exactly one of `amount_in` (exact input) or `amount_out` (exact
 * output), `slippage_bps` (for the bound the answer shows), and `extra` (a family's route fields).
 */
export const swapQuoteInput = <S extends z.ZodRawShape>(chains: FamilyChains, extra: S) =>
  exactInOrOut({ chain: chainInput(chains), token_in: SwapTokenInput, token_out: SwapTokenInput, ...extra, slippage_bps: boundFields.slippage_bps }, {}, {});

/**
 * A swap's body: the execute fields (agent_id, chain, strategy_id, callback_url), the quote's fields, and the
 * bounds: exact input's amount_out_minimum, exact output's amount_in_maximum, the deadline and max_price_impact_bps.
 */
export const swapInput = <S extends z.ZodRawShape>(chains: FamilyChains, extra: S) =>
  exactInOrOut(
    { ...actionFields(chains), token_in: SwapTokenInput, token_out: SwapTokenInput, ...extra, ...boundFields },
    {
      amount_out_minimum: RawAmount.optional().meta({ description: 'Exact input: the least token_out to accept, in the smallest unit (default: the quote less slippage_bps)' }),
      amount_in_maximum: absent('Only with amount_out (exact output)'),
    },
    {
      amount_in_maximum: RawAmount.optional().meta({ description: 'Exact output: the most token_in to pay, in the smallest unit (default: the quote plus slippage_bps)' }),
      amount_out_minimum: absent('Only with amount_in (exact input)'),
    },
  );

/** The fields every swap body has, whichever its alternative. */
export interface SwapAsk {
  token_in: string;
  token_out: string;
  amount_in?: string | undefined;
  amount_out?: string | undefined;
  slippage_bps?: number | undefined;
  deadline?: number | undefined;
  max_price_impact_bps?: number | undefined;
  amount_out_minimum?: string | undefined;
  amount_in_maximum?: string | undefined;
}

export type SwapSide = 'exact_in' | 'exact_out';
export const sideOf = (ask: Pick<SwapAsk, 'amount_in'>): SwapSide => (ask.amount_in !== undefined ? 'exact_in' : 'exact_out');

/** The exact amount of a swap in the smallest unit of the token it names (token_in for exact input, else token_out). */
export function exactAmount(ask: Pick<SwapAsk, 'amount_in' | 'amount_out'>, token: TokenInfo): bigint {
  const field = ask.amount_in !== undefined ? 'amount_in' : 'amount_out';
  const text = ask[field]!;
  const [, fraction = ''] = text.split('.');
  if (fraction.length > token.decimals) {
    throw new ProtocolError('invalid_amount', `${field} has ${fraction.length} decimals; ${token.symbol} has ${token.decimals}`, { field });
  }
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * 10n ** BigInt(token.decimals) + BigInt(frac.padEnd(token.decimals, '0') || '0');
}

/** The absolute bounds a swap is held to, as stored on the request (strings: the action input's own form). */
export interface SwapBounds {
  /** Exact input: the least out. Exact output: the most in. */
  limit: bigint;
  deadline: bigint;
}

/**
 * The bounds of a swap: those the caller (or the first plan) made absolute, else the quote less (exact input) or
 * plus (exact output) the slippage, and the deadline given or the chain's time + DEFAULT_DEADLINE_SECONDS. A
 * re-plan gets the stored absolute ones, so the quote it makes moves nothing.
 */
export function swapBounds(ask: SwapAsk, quoted: bigint, chainNow: bigint): SwapBounds {
  const slippage = BigInt(ask.slippage_bps ?? DEFAULT_SLIPPAGE_BPS);
  const deadline = ask.deadline !== undefined ? BigInt(ask.deadline) : chainNow + DEFAULT_DEADLINE_SECONDS;
  if (sideOf(ask) === 'exact_in') {
    const given = ask.amount_out_minimum;
    return { limit: given !== undefined ? BigInt(given) : (quoted * (10_000n - slippage)) / 10_000n, deadline };
  }
  const given = ask.amount_in_maximum;
  // Rounded up: the bound never tolerates less than the slippage asked.
  return { limit: given !== undefined ? BigInt(given) : (quoted * (10_000n + slippage) + 9_999n) / 10_000n, deadline };
}

/** The bounds as the request's action input stores them (ActionPlan.bounds): the fields a caller could have given, in their types. */
export function boundsRecord(ask: SwapAsk, b: SwapBounds): Record<string, string | number> {
  const limitField = sideOf(ask) === 'exact_in' ? 'amount_out_minimum' : 'amount_in_maximum';
  return { [limitField]: b.limit.toString(), deadline: Number(b.deadline) };
}

/** One pool a swap crosses, as its mid price sees it: √P (Q64.96, token1 per token0 in raw units), the direction, the fee. */
export interface HopPrice {
  sqrtPriceX96: bigint;
  /** Selling token0 for token1. */
  zeroForOne: boolean;
  /** In hundredths of a bip (3000 = 0.3%). */
  fee: number;
}

const Q192 = 2n ** 192n;
const PIPS = 1_000_000n;

/**
 * What `amountIn` would buy at the pools' current mid prices, after their fees but with no price impact: the
 * reference a quote's price impact is measured against (exact integer arithmetic, rounded down per hop).
 */
export function midPriceOut(amountIn: bigint, hops: readonly HopPrice[]): bigint {
  let amount = amountIn;
  for (const h of hops) {
    const p2 = h.sqrtPriceX96 * h.sqrtPriceX96;
    amount = h.zeroForOne ? (amount * p2) / Q192 : (amount * Q192) / p2;
    amount = (amount * (PIPS - BigInt(h.fee))) / PIPS;
  }
  return amount;
}

/** What buying `amountOut` would cost at the mid prices after fees, with no price impact (rounded up). */
export function midPriceIn(amountOut: bigint, hops: readonly HopPrice[]): bigint {
  let amount = amountOut;
  for (const h of [...hops].reverse()) {
    amount = (amount * PIPS + (PIPS - BigInt(h.fee)) - 1n) / (PIPS - BigInt(h.fee));
    const p2 = h.sqrtPriceX96 * h.sqrtPriceX96;
    amount = h.zeroForOne ? (amount * Q192 + p2 - 1n) / p2 : (amount * p2 + Q192 - 1n) / Q192;
  }
  return amount;
}

/**
 * The price impact of a quote in basis points (rounded up, never negative): how much worse than the mid price,
 * fees apart, it trades. Exact input compares what comes out, exact output what goes in.
 */
export function priceImpactBps(side: SwapSide, exact: bigint, quoted: bigint, hops: readonly HopPrice[]): number {
  if (side === 'exact_in') {
    const ideal = midPriceOut(exact, hops);
    if (ideal === 0n || quoted >= ideal) return 0;
    return Number(((ideal - quoted) * 10_000n + ideal - 1n) / ideal);
  }
  const ideal = midPriceIn(exact, hops);
  if (ideal === 0n || quoted <= ideal) return 0;
  return Number(((quoted - ideal) * 10_000n + quoted - 1n) / quoted);
}

/** 400 price_impact_too_high when a swap would move the price past the caller's bound (or the default). */
export function checkPriceImpact(ask: Pick<SwapAsk, 'max_price_impact_bps'>, impactBps: number): void {
  const max = ask.max_price_impact_bps ?? DEFAULT_MAX_PRICE_IMPACT_BPS;
  if (impactBps <= max) return;
  throw new ProtocolError('price_impact_too_high', `the swap would move the price ${(impactBps / 100).toFixed(2)}%, more than the ${(max / 100).toFixed(2)}% allowed (max_price_impact_bps)`, {
    field: 'max_price_impact_bps',
    details: { price_impact_bps: impactBps, max_price_impact_bps: max },
  });
}

/** A quote's answer, the same for every exchange family. */
export const SwapQuoteSchema = z.object({
  chain: z.string(),
  side: z.enum(['exact_in', 'exact_out']),
  token_in: TokenInfoSchema,
  token_out: TokenInfoSchema,
  amount_in: AmountSchema.meta({ description: 'What goes in: exact (exact input) or quoted (exact output)' }),
  amount_out: AmountSchema.meta({ description: 'What comes out: exact (exact output) or quoted (exact input)' }),
  price: z.string().meta({ description: 'token_out per token_in at this quote (after fees and price impact)', examples: ['2991.02'] }),
  mid_price: z.string().meta({ description: "token_out per token_in at the pools' current prices, fees apart" }),
  price_impact_bps: z.int().meta({ description: 'How much worse than the mid price (fees apart) the swap trades, in basis points' }),
  route: z.array(z.object({ token_in: z.string(), token_out: z.string(), fee: z.int(), pool: z.string() })).meta({ description: 'The pools crossed, in order' }),
  estimated_gas: z.string().meta({ description: "The quoter's own gas estimate of the swap (the router call, not the whole UserOperation)" }),
  minimum_received: AmountSchema.nullable().meta({ description: 'Exact input: the least out at slippage_bps (default 50): what swap would set as amount_out_minimum now; null for exact output' }),
  maximum_paid: AmountSchema.nullable().meta({ description: 'Exact output: the most in at slippage_bps (default 50): amount_in_maximum; null for exact input' }),
});
export type SwapQuote = z.infer<typeof SwapQuoteSchema>;

/** `out / in` as a decimal in whole tokens with 6 significant places after the point (rounded down). */
export function priceOf(amountIn: bigint, tokenIn: TokenInfo, amountOut: bigint, tokenOut: TokenInfo): string {
  if (amountIn === 0n) return '0';
  const scaled = (amountOut * 10n ** BigInt(tokenIn.decimals) * 10n ** 18n) / (amountIn * 10n ** BigInt(tokenOut.decimals));
  return amountOf(scaled, 18).formatted.replace(/(\.\d{0,6})\d*$/, '$1').replace(/\.$/, '');
}
