import { z } from 'zod';
import { AgentId, REQUIRED } from '../../../api/http/index.ts';
import { actionFields, chainInput } from '../../common/inputs.ts';
import { DEFAULT_SLIPPAGE_BPS, MAX_SLIPPAGE_BPS } from '../../common/swap.ts';
import { FeeTier } from '../config.ts';
import { CHAINS } from '../define.ts';
import { pricesOrdered } from './range.ts';

/**
 * The bodies of the liquidity endpoints. A quote takes the same body as its action (so one body can be quoted,
 * simulated and sent), less the execute extras (strategy_id, callback_url). Cross-field rules (pool or position,
 * both prices or neither) are checked here, so a wrong combination is a 400 naming the field before anything is read.
 */

/**
 * A string field published with its pattern (so /openapi.json says what it takes); a mismatch's code is the field's
 * own, from FIELD_ERROR_CODES (src/api/http/common.ts).
 */
const patterned = (pattern: RegExp, message: string, description: string) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a string') })
    .regex(pattern, message)
    .meta({ description });

const DECIMAL = /^(?!0+(?:\.0+)?$)(?:0|[1-9][0-9]{0,59})(?:\.[0-9]{1,36})?$/;
const MAX_UINT256 = 2n ** 256n - 1n;

const positiveDecimal = (description: string) => patterned(DECIMAL, 'must be a positive decimal string, e.g. "1.5"', description);
const rawBound = (description: string) =>
  patterned(/^(?:0|[1-9][0-9]{0,77})$/, 'must be a non-negative integer in the smallest unit, as a decimal string', description).refine((v) => BigInt(v) <= MAX_UINT256, 'must fit in a uint256');

export const TokenIdInput = patterned(/^[1-9][0-9]{0,76}$/, 'must be a position NFT token id (a positive integer, as a decimal string)', 'Token id of a position NFT of the wallet');

export const PoolInput = patterned(
  /^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9._-]{1,32}\/[A-Za-z0-9._-]{1,32})$/,
  'must be a pool address or a pair of token symbols like USDC/WETH',
  'Pool address, or pair A/B (with fee)',
);

const UnixSeconds = z
  .int({ error: 'must be a unix time in seconds (an integer)' })
  .min(1, 'must be a unix time in seconds')
  .max(2 ** 40, 'must be a unix time in seconds')
  .meta({ description: 'Unix seconds (default now + 600)' });

const SlippageBps = z
  .int({ error: `must be an integer number of basis points from 0 to ${MAX_SLIPPAGE_BPS}` })
  .min(0, `must be from 0 to ${MAX_SLIPPAGE_BPS} basis points`)
  .max(MAX_SLIPPAGE_BPS, `must be at most ${MAX_SLIPPAGE_BPS} basis points (${MAX_SLIPPAGE_BPS / 100}%): give amount0_min / amount1_min to set the bounds yourself`)
  .meta({ description: `Default ${DEFAULT_SLIPPAGE_BPS}, max ${MAX_SLIPPAGE_BPS}` });

const boundFields = {
  slippage_bps: SlippageBps.optional(),
  deadline: UnixSeconds.optional(),
  amount0_min: rawBound('Raw; default from slippage_bps').optional(),
  amount1_min: rawBound('Raw; default from slippage_bps').optional(),
};

const addFields = {
  pool: PoolInput.optional(),
  fee: FeeTier.optional().meta({ description: 'Fee tier (500 = 0.05%)' }),
  position: TokenIdInput.optional().meta({ description: 'Add to this NFT instead of pool' }),
  price_lower: positiveDecimal('Range low, in quote_token (none: full range)').optional(),
  price_upper: positiveDecimal('Range high').optional(),
  quote_token: patterned(/^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9._-]{1,32})$/, 'must be a token symbol or address', 'Price unit (default token1)').optional(),
  native: z.boolean({ error: 'must be true or false' }).optional().meta({ description: 'Pay the WETH side in native ETH' }),
  amount0: positiveDecimal('Max token0, units (one side: other computed)').optional(),
  amount1: positiveDecimal('Max token1, units').optional(),
};

export interface AddAsk {
  pool?: string | undefined;
  fee?: number | undefined;
  position?: string | undefined;
  price_lower?: string | undefined;
  price_upper?: string | undefined;
  quote_token?: string | undefined;
  native?: boolean | undefined;
  amount0?: string | undefined;
  amount1?: string | undefined;
  slippage_bps?: number | undefined;
  deadline?: number | undefined;
  amount0_min?: string | undefined;
  amount1_min?: string | undefined;
}

type Issues = { addIssue(i: { code: 'custom'; message: string; path: string[]; params?: { code: string }; input: unknown }): void };
function checkAdd(v: AddAsk, ctx: Issues) {
  const issue = (path: string, message: string, code?: string) => ctx.addIssue({ code: 'custom', message, path: [path], ...(code && { params: { code } }), input: v });
  if (v.position === undefined && v.pool === undefined) issue('pool', `${REQUIRED} (or position: a position NFT of the wallet to add to)`);
  if (v.position !== undefined) {
    for (const f of ['pool', 'fee', 'price_lower', 'price_upper', 'quote_token'] as const) {
      if (v[f] !== undefined) issue(f, 'must be left out with position: the position’s own pool and range are used', 'invalid_request_shape');
    }
  }
  if ((v.price_lower === undefined) !== (v.price_upper === undefined)) issue(v.price_lower === undefined ? 'price_lower' : 'price_upper', `${REQUIRED} with the other price (give both, or neither for the full range)`);
  if (v.price_lower !== undefined && v.price_upper !== undefined && DECIMAL.test(v.price_lower) && DECIMAL.test(v.price_upper) && !pricesOrdered(v.price_lower, v.price_upper)) {
    issue('price_upper', 'must be above price_lower', 'invalid_price');
  }
  if (v.amount0 === undefined && v.amount1 === undefined) issue('amount0', `${REQUIRED} (or amount1, or both)`);
}

export const addInput = () => z.object({ ...actionFields(CHAINS), ...addFields, ...boundFields }).superRefine(checkAdd);
export const addQuoteInput = () =>
  z.object({ agent_id: AgentId, chain: chainInput(CHAINS), ...addFields, slippage_bps: SlippageBps.optional() }).superRefine(checkAdd);

const removeFields = {
  position: TokenIdInput,
  native: z.boolean({ error: 'must be true or false' }).optional().meta({ description: 'Receive the WETH side as native ETH' }),
  percentage: z
    .int({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be an integer from 1 to 100') })
    .min(1, 'must be an integer from 1 to 100')
    .max(100, 'must be an integer from 1 to 100')
    .meta({ description: '1–100' }),
};

export const removeInput = () => z.object({ ...actionFields(CHAINS), ...removeFields, ...boundFields });
export const removeQuoteInput = () => z.object({ agent_id: AgentId, chain: chainInput(CHAINS), ...removeFields, slippage_bps: SlippageBps.optional() });

export interface RemoveAsk {
  position: string;
  native?: boolean | undefined;
  percentage: number;
  slippage_bps?: number | undefined;
  deadline?: number | undefined;
  amount0_min?: string | undefined;
  amount1_min?: string | undefined;
}
