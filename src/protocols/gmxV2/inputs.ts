import { z } from 'zod';
import { REQUIRED } from '../../api/http/index.ts';

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
