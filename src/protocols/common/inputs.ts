import { z } from 'zod';
import { AgentId, CallbackUrl, onlyChains, REQUIRED, StrategyId, decimalAtMostPattern, queryParam } from '../../api/http/index.ts';
import type { ChainName } from '../../config/chains.ts';

/**
 * The inputs of the protocol endpoints, built from the API's own field schemas (src/api/http) where they exist:
 * the same rules, messages and error codes as the core endpoints (FIELD_ERROR_CODES there names the codes of
 * the fields added here).
 */

const MAX_UINT256 = 2n ** 256n - 1n;

/** The chains a family runs on, the first its default (see ProtocolFamily.chains); one chain may be given alone. */
export type FamilyChains = ChainName | readonly [ChainName, ...ChainName[]];
const chainList = (chains: FamilyChains): readonly ChainName[] => (typeof chains === 'string' ? [chains] : chains);

/** `chain`, optional: the family's first chain by default; any chain it does not run on is 400 unsupported_chain. */
export const chainInput = (chains: FamilyChains) => {
  const list = chainList(chains);
  const runs = list.length === 1 ? `runs on ${list[0]} only` : `runs on ${list.join(', ')}: the chain picks its deployment there (default ${list[0]})`;
  return onlyChains(list).optional().meta({ description: `Optional: the family ${runs} (an alias, in any letter case, is accepted too).` });
};

export const TokenInput = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a token symbol or address') })
  .regex(/^(?:0x[0-9a-fA-F]{40}|[A-Za-z0-9._-]{1,32})$/, 'must be a token symbol (e.g. USDC) or a 0x-prefixed address')
  .meta({ description: 'A token the protocol lists here: its symbol (any letter case) or its address', examples: ['USDC', 'WETH'] });

export const MarketInput = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a market id or COLLATERAL/LOAN') })
  .regex(/^(?:0x[0-9a-fA-F]{64}|[A-Za-z0-9._-]{1,32}\/[A-Za-z0-9._-]{1,32})$/, 'must be a 0x-prefixed 32-byte market id or a pair like WETH/USDC')
  .meta({ description: 'A market: its 32-byte id, or COLLATERAL/LOAN symbols (e.g. WETH/USDC) when one market has that pair', examples: ['WETH/USDC'] });

const DECIMAL = '(?:0|[1-9][0-9]{0,59})(?:\\.[0-9]{1,36})?';
/** A positive decimal in token units; `max` only where the protocol supports it. */
export const decimalAmount = (allowMax: boolean) => {
  const pattern = `^(?!0+(?:\\.0+)?$)${DECIMAL}$${allowMax ? '|^max$' : ''}`;
  return z
    .string({ error: (iss) => (iss.input === undefined ? `${REQUIRED} (or amount_raw, in the smallest unit)` : 'must be a decimal string') })
    .regex(new RegExp(pattern), allowMax ? 'must be a positive decimal amount in token units, e.g. "12.5", or "max"' : 'must be a positive decimal amount in token units, e.g. "12.5"')
    .meta({
      description: allowMax
        ? 'Amount in token units as a decimal string (at most the token\'s decimals), or "max": all of it (the whole debt, supply or collateral)'
        : "Amount in token units as a decimal string (at most the token's decimals)",
      examples: allowMax ? ['12.5', 'max'] : ['12.5'],
    });
};

export const RawAmount = z
  .string({ error: (iss) => (iss.input === undefined ? REQUIRED : 'must be a decimal string of an integer') })
  .regex(/^[1-9][0-9]*$/, 'must be a positive integer in the smallest unit, e.g. "12500000"')
  .refine((v) => !/^[0-9]+$/.test(v) || BigInt(v) <= MAX_UINT256, 'must fit in a uint256')
  .meta({ description: 'Amount in the smallest unit, a positive integer as a decimal string', pattern: decimalAtMostPattern(MAX_UINT256, { positive: true }), examples: ['12500000'] });

const absent = (description: string) => z.never().optional().meta({ description });

/**
 * An action body with its amount: `amount` (token units, or `max` where allowed) or `amount_raw`, exactly one
 * (`oneOf` in /openapi.json; both is 400 invalid_request_shape, neither 400 missing_field on amount).
 */
export function withAmount<S extends z.ZodRawShape>(shape: S, opts: { max: boolean }) {
  const inUnits = z.object({ ...shape, amount: decimalAmount(opts.max), amount_raw: absent('Give amount or amount_raw, not both') });
  const raw = z.object({ ...shape, amount_raw: RawAmount, amount: absent('Give amount or amount_raw, not both') });
  return z.xor([inUnits, raw], { error: 'must give the amount once: amount (token units) or amount_raw (smallest unit), not both' });
}

/** What every action takes besides its own fields: the agent, the chain, and the execute extras of spec 2.4. */
export const actionFields = (chains: FamilyChains) => ({
  agent_id: AgentId,
  chain: chainInput(chains),
  strategy_id: StrategyId.optional(),
  callback_url: CallbackUrl.optional(),
});

/** The query of a read about an agent's wallet. */
export const agentQueryFields = (chains: FamilyChains) => ({
  agent_id: queryParam(AgentId),
  chain: queryParam(chainInput(chains)),
});

/**
 * The same input as one object, every alternative's fields optional: for the MCP tools and the CLI, which take
 * flat arguments (the API validates the exact shape and answers which field is wrong).
 */
export function flatObject(schema: z.ZodType): z.ZodObject {
  if (schema instanceof z.ZodObject) return schema;
  const options = (schema as unknown as { options?: z.ZodType[] }).options;
  if (!options) throw new Error('flatObject: an object or a union of objects');
  const shapes = options.map((o) => flatObject(o).shape);
  const merged: Record<string, z.ZodType> = {};
  for (const shape of shapes) {
    for (const [key, field] of Object.entries(shape)) {
      if ((field as z.ZodType).def.type === 'optional' && ((field as z.ZodOptional).unwrap() as z.ZodType).def.type === 'never') continue;
      const everywhere = shapes.every((s) => key in s && (s[key] as z.ZodType).def.type !== 'optional');
      merged[key] ??= everywhere ? (field as z.ZodType) : (field as z.ZodType).optional();
    }
  }
  return z.object(merged);
}
