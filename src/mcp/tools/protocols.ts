import { z } from 'zod';
import { flatObject } from '../../protocols/common/inputs.ts';
import { DEFAULT_MAX_PRICE_IMPACT_BPS, DEFAULT_SLIPPAGE_BPS, MAX_SLIPPAGE_BPS } from '../../protocols/common/swap.ts';
import { FAMILIES } from '../../protocols/index.ts';
import type { AnyEndpoint, AnyFamily } from '../../protocols/types.ts';
import { defineTool, ToolInputError, type AnyTool } from '../tool.ts';
import { chainEnum, decimalUint, IdempotencyKey, ModelAgentId, ModelCallbackUrl, ModelStrategyId } from './fields.ts';

/** `lend-b-v3` + `read` → `lend_b_v3_read` (MCP tool names: letters, digits, `_`). */
export const toolName = (slug: string, suffix: string) => `${slug}_${suffix}`.replace(/[^A-Za-z0-9]+/g, '_');

/**
 * The MCP tools of the protocol families, generated from their declarations (src/protocols): two per family, whatever
 * its number of endpoints (docs/mcp.md says why): `<slug>_read`, read-only, for its GET endpoints, and `<slug>_act`
 * for its actions, which executes or, with `simulate: true`, only simulates and returns what it would change. The
 * endpoint is the `action` argument.
 */
export function protocolTools(families: readonly AnyFamily[] = FAMILIES): AnyTool[] {
  return families.flatMap((family) => {
    const reads = family.endpoints.filter((e) => e.kind === 'read');
    const actions = family.endpoints.filter((e) => e.kind === 'action');
    return [...(reads.length > 0 ? [familyTool(family, 'read', reads)] : []), ...(actions.length > 0 ? [familyTool(family, 'act', actions)] : [])];
  });
}

/**
 * The fields every family shares, in their short forms: the core tools (execute) describe them in full, so a
 * family tool names them only; any other field is the endpoint's own.
 */
const shortField = (family: AnyFamily, key: string): z.ZodType | undefined =>
  ({
    agent_id: ModelAgentId.meta({ description: 'As in execute' }),
    chain: chainEnum(family.chains).meta({ description: family.chains.length === 1 ? `${family.chains[0]} only (the default)` : `Default ${family.chains[0]}` }),
    strategy_id: ModelStrategyId.meta({ description: 'As in execute' }),
    callback_url: ModelCallbackUrl.meta({ description: 'As in execute' }),
    amount_raw: decimalUint(true).meta({ description: 'Or the amount in the smallest unit (integer string)' }),
    ...SWAP_FIELDS,
    ...family.toolFields,
  })[key];

/**
 * The swap body's fields (src/protocols/common/swap.ts), short: their API schemas carry long patterns (a uint256's
 * range) and descriptions written for /openapi.json; the API checks each argument again with those.
 */
const SWAP_FIELDS: Record<string, z.ZodType> = {
  token_in: z.string().max(42).meta({ description: 'Sold: symbol or address; ETH is native' }),
  token_out: z.string().max(42).meta({ description: 'Token bought' }),
  amount_in: z.string().meta({ description: 'Exact input (token units)' }),
  amount_out: z.string().meta({ description: 'Or exact output' }),
  amount_out_minimum: decimalUint(true).meta({ description: 'Least out, raw (default: quote − slippage)' }),
  amount_in_maximum: decimalUint(true).meta({ description: 'Most in, raw (default: quote + slippage)' }),
  slippage_bps: z.int().min(0).max(MAX_SLIPPAGE_BPS).meta({ description: `Default ${DEFAULT_SLIPPAGE_BPS}` }),
  max_price_impact_bps: z.int().min(0).max(10_000).meta({ description: `Refused above (default ${DEFAULT_MAX_PRICE_IMPACT_BPS})` }),
  deadline: z.int().min(1).max(2 ** 40).meta({ description: 'Unix seconds (default: now + 600)' }),
};

/** An endpoint's arguments as one flat object (its query, or its body with either amount), with the short shared fields. */
export function endpointInput(family: AnyFamily, e: AnyEndpoint<never>): z.ZodObject {
  const shape = flatObject(e.kind === 'read' ? e.query : e.input).shape as Record<string, z.ZodType>;
  return z.object(
    Object.fromEntries(
      Object.entries(shape).map(([key, field]) => {
        const short = shortField(family, key);
        const optional = field.safeParse(undefined).success;
        return [key, short ? (optional ? short.optional() : short) : field];
      }),
    ),
  );
}

const isOptional = (field: z.ZodType) => field.safeParse(undefined).success;

/** `supply (agent_id, market, amount|amount_raw)`: what a model must give, the shared optional fields left out. */
function signature(e: AnyEndpoint<never>, input: z.ZodObject): string {
  const shape = input.shape as Record<string, z.ZodType>;
  const keys = Object.keys(shape).filter((k) => !['chain', 'strategy_id', 'callback_url', 'amount_raw'].includes(k));
  const fields = keys.map((k) => (k === 'amount' && 'amount_raw' in shape ? 'amount|amount_raw' : isOptional(shape[k]!) ? `${k}?` : k));
  return `${e.path} (${fields.join(', ')})`;
}

function familyTool(family: AnyFamily, kind: 'read' | 'act', endpoints: AnyEndpoint<never>[]): AnyTool {
  const inputs = new Map(endpoints.map((e) => [e.path, endpointInput(family, e)]));
  // One field per name across the actions, optional here: each action checks its own fields below (and the API again).
  const fields: Record<string, z.ZodType> = {};
  for (const input of inputs.values()) {
    for (const [key, field] of Object.entries(input.shape as Record<string, z.ZodType>)) {
      const known = fields[key];
      // Where actions differ (an amount that may be "max" or not), the wider one: the action's own check is exact.
      if (!known || JSON.stringify(z.toJSONSchema(field, { io: 'input', unrepresentable: 'any' })).length > JSON.stringify(z.toJSONSchema(known, { io: 'input', unrepresentable: 'any' })).length) {
        fields[key] = isOptional(field) ? field : field.optional();
      }
    }
  }
  const paths = endpoints.map((e) => e.path) as [string, ...string[]];
  const input = z.object({
    action: z.enum(paths).meta({ description: kind === 'read' ? 'What to read' : 'What to do' }),
    ...fields,
    ...(kind === 'act' && {
      simulate: z.boolean().optional().meta({ description: 'Only simulate' }),
      idempotency_key: IdempotencyKey.optional().meta({ description: 'As in execute' }),
    }),
  }).strict(); // a misspelt field is refused, not dropped
  const list = endpoints.map((e) => `- ${signature(e, inputs.get(e.path)!)}: ${e.summary}`).join('\n');
  const description =
    kind === 'read'
      ? `Reads ${family.protocol} on ${family.chains.join(', ')} (nothing changes). action, with its arguments:\n${list}`
      : `Acts on ${family.protocol} on ${family.chains.join(', ')} from the agent's smart wallet (approvals included). action, with its arguments:\n${list}\n` +
        (endpoints.some((e) => e.kind === 'action' && 'amount' in endpointInput(family, e).shape)
          ? 'Amounts: amount in token units ("12.5"; "max" where the action allows it) or amount_raw (smallest unit), one of them. '
          : '') +
        `simulate: true broadcasts nothing and answers the calls and their effects (balances${family.position instanceof z.ZodNull ? '' : ', the position before and after: health factor'}). ` +
        'Otherwise it executes like execute: the answer has the request_id; follow it with get_status.';

  return defineTool({
    name: toolName(family.slug, kind),
    title: kind === 'read' ? `${family.protocol}: reads` : `${family.protocol}: actions`,
    description,
    input,
    annotations:
      kind === 'read'
        ? { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true }
        : { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run({ client }, args) {
      const { action, simulate, idempotency_key, ...rest } = args as Record<string, unknown> & { action: string; simulate?: boolean; idempotency_key?: string };
      const e = endpoints.find((x) => x.path === action)!;
      const given = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
      const checked = inputs.get(action)!.strict().safeParse(given);
      if (!checked.success) {
        const issue = checked.error.issues[0]!;
        const field = issue.code === 'unrecognized_keys' ? issue.keys[0] : issue.path.map(String).join('.');
        return { ok: false, error: new ToolInputError(`${action}: ${field ? `${field}: ` : ''}${issue.message}; it takes ${signature(e, inputs.get(action)!)}`, field) };
      }
      if (e.kind === 'read') {
        const query = Object.fromEntries(Object.entries(given).map(([k, v]) => [k, String(v)]));
        const r =
          e.method === 'POST'
            ? await client.protocols.compute<Record<string, unknown>>(family.slug, e.path, given)
            : await client.protocols.read<Record<string, unknown>>(family.slug, e.path, query);
        if (!r.ok) return r;
        return { ok: true, value: r.value, summary: `${family.protocol} ${e.path}: ${summarize(r.value)}` };
      }
      if (simulate) {
        type Simulated = { estimated_gas: number; effects?: { balance_changes: { change: { formatted: string }; token: { symbol: string } }[]; position_after?: unknown } };
        const r = await client.protocols.simulate<Simulated>(family.slug, e.path, given);
        if (!r.ok) return r;
        const changes = r.value.effects?.balance_changes.map((c) => `${c.change.formatted} ${c.token.symbol}`).join(', ');
        const hf = (r.value.effects?.position_after as { health_factor?: string | null } | null | undefined)?.health_factor;
        return {
          ok: true,
          value: r.value,
          summary: `simulated ${e.path}: ${r.value.estimated_gas} gas${changes ? `; wallet ${changes}` : ''}${hf !== undefined ? `; health factor after ${hf ?? 'n/a (no debt)'}` : ''}; nothing was broadcast`,
        };
      }
      const r = await client.protocols.execute(family.slug, e.path, given, { ...(idempotency_key && { idempotencyKey: idempotency_key }) });
      if (!r.ok) return r;
      return { ok: true, value: r.value, summary: `${r.value.request_id} is ${r.value.status}: ${e.path} on ${family.protocol}. Follow it with get_status.` };
    },
  });
}

/** A one-line gist of a read's answer: its lists and their sizes. */
function summarize(value: Record<string, unknown>): string {
  const parts = Object.entries(value).flatMap(([k, v]) => (Array.isArray(v) ? [`${v.length} ${k}`] : []));
  return parts.join(', ') || 'see the structured content';
}
