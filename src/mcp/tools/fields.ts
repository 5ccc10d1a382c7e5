import { z } from 'zod';
import { LIMITS } from '../../api/http/index.ts';
import { canonicalChain, CHAIN_NAMES, type ChainName } from '../../config/chains.ts';

/**
 * Field schemas as a model reads them in `tools/list`: short patterns and enums. The API validates every argument
 * again with its own schemas (src/api/http), whose published patterns must match its validator exactly and are
 * long for it (a uint256's range digit by digit, a chain name in any letter case letter by letter); here the
 * range is the server's to check, and its refusal comes back as a tool error with the API's code and field.
 */

/** A chain by name: an enum for the model; an alias or another letter case is still taken (as the API takes it). */
export const chainEnum = <const C extends readonly [ChainName, ...ChainName[]]>(chains: C) =>
  z.preprocess((v) => (typeof v === 'string' ? (canonicalChain(v) ?? v) : v), z.enum(chains));

export const ModelChain = chainEnum(CHAIN_NAMES).optional().meta({ description: 'Default: ethereum' });

/** A non-negative integer of at most 78 digits (a uint256's length); the server refuses one above 2^256-1. */
export const decimalUint = (positive: boolean) =>
  z.string().regex(positive ? /^[1-9][0-9]{0,77}$/ : /^(0|[1-9][0-9]{0,77})$/, `must be a decimal string of a ${positive ? 'positive' : 'non-negative'} integer`);

export const ModelAgentId = z
  .string()
  .min(1)
  .max(LIMITS.agentIdMaxLength)
  .meta({ description: 'Your agent identity, any label: one smart wallet per agent_id' });

export const ModelStrategyId = z.string().min(1).max(LIMITS.strategyIdMaxLength).meta({ description: 'Optional label, echoed by get_status' });

export const ModelCallbackUrl = z
  .string()
  .regex(/^https:\/\//, 'must be an https:// URL')
  .max(LIMITS.callbackUrlMaxLength)
  .meta({ description: 'https URL that receives the signed completion webhook' });

export const IdempotencyKey = z
  .string()
  .min(1)
  .max(LIMITS.idempotencyKeyMaxLength)
  .meta({ description: 'Retry-safety key: the same key and arguments return the first request instead of running twice' });
