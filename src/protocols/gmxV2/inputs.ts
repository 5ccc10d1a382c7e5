import { z } from 'zod';
import { REQUIRED } from '../../api/http/index.ts';
import { RawAmount } from '../common/inputs.ts';

/** Slippage when the caller names none, and the most perp-v2 accepts (past it, give acceptable_price yourself). */
export const DEFAULT_ORDER_SLIPPAGE_BPS = 50;
export const MAX_ORDER_SLIPPAGE_BPS = 500;

/** A positive USD amount or price (up to 30 decimals, GMX's precision), as a decimal string. */
export const UsdDecimal = (what: string) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a decimal string') })
    .regex(/^(?!0+(?:\.0+)?$)(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,30})?$/, `must be a positive decimal ${what}, e.g. "2800.5"`);

/** `slippage_bps`: how far the execution price may move past the expected (or trigger) price, in basis points. */
export const SlippageBps = z
  .int({ error: `must be an integer number of basis points from 0 to ${MAX_ORDER_SLIPPAGE_BPS}` })
  .min(0, `must be from 0 to ${MAX_ORDER_SLIPPAGE_BPS} basis points`)
  .max(MAX_ORDER_SLIPPAGE_BPS, `must be at most ${MAX_ORDER_SLIPPAGE_BPS} basis points: give acceptable_price to set the bound yourself`);

/** `market`: a served market by its market token's address, or its index symbol when one market has it. */
export const MarketRef = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a market address or an index symbol') })
  .regex(/^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9._-]{1,32}(?:\/USD)?)$/i, 'must be a market address or an index symbol like ETH (or ETH/USD)')
  .meta({ description: 'The market: its address (GET markets), or its index symbol (ETH, ETH/USD) when one market has it', examples: ['ETH'] });

/** `execution_fee`: wei of native ETH for GMX's keeper; a bound the first plan fixes. */
export const ExecutionFeeInput = RawAmount.optional().meta({
  description: "Wei of native ETH for GMX's keeper (default: its gas limit × the current gas price, plus headroom); what it does not spend is refunded",
});

/** A least amount in the smallest unit: 0 accepts anything (what slippage leaves of an expected 0). */
export const MinRawAmount = z
  .string({ error: 'must be a decimal string of an integer' })
  .regex(/^(?:0|[1-9][0-9]{0,76})$/, 'must be a non-negative integer in the smallest unit, e.g. "12500000"');
