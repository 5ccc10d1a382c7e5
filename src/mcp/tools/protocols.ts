import { z } from 'zod';
import { ExecutionResultSchema } from '../../api/http/index.ts';
import { effectsSchema } from '../../protocols/common/effects.ts';
import { flatObject } from '../../protocols/common/inputs.ts';
import { FAMILIES } from '../../protocols/index.ts';
import type { ActionEndpoint, AnyFamily, ReadEndpoint } from '../../protocols/types.ts';
import { defineTool, type AnyTool } from '../tool.ts';

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- endpoints of every schema

/** `lend-b-v3` + `borrow-capacity` → `lend_b_v3_borrow_capacity` (MCP tool names: letters, digits, `_`). */
export const toolName = (slug: string, path: string) => `${slug}_${path}`.replace(/[^A-Za-z0-9]+/g, '_');

/**
 * The MCP tools of the protocol families, generated from their declarations (src/protocols): a read is a read-only
 * tool; an action is one tool that executes, or with `simulate: true` only simulates and returns what it would change.
 */
export function protocolTools(families: readonly AnyFamily[] = FAMILIES): AnyTool[] {
  return families.flatMap((family) => family.endpoints.map((e) => (e.kind === 'read' ? readTool(family, e) : actionTool(family, e))));
}

function readTool(family: AnyFamily, e: ReadEndpoint<never, Any, Any, boolean>): AnyTool {
  return defineTool({
    name: toolName(family.slug, e.path),
    title: `${family.protocol}: ${e.summary}`,
    description: `${e.description} (${family.protocol} on ${family.chain}; GET /protocols/${family.slug}/${e.path})`,
    input: e.query as z.ZodObject,
    output: e.output as z.ZodObject,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    async run({ client }, args) {
      const query = Object.fromEntries(Object.entries(args as Record<string, unknown>).map(([k, v]) => [k, v === undefined ? undefined : String(v)]));
      const r = await client.protocols.read(family.slug, e.path, query);
      if (!r.ok) return r;
      return { ok: true, value: r.value, summary: `${family.protocol} ${e.path}: ${summarize(r.value)}` };
    },
  });
}

function actionTool(family: AnyFamily, e: ActionEndpoint<never, Any>): AnyTool {
  const input = flatObject(e.input).extend({
    simulate: z.boolean().optional().meta({ description: 'true: only simulate (nothing is broadcast) and return the calls and their effects' }),
    idempotency_key: z.string().min(1).max(255).optional().meta({ description: 'Retry-safety key: the same key and arguments return the first request' }),
  });
  const output = ExecutionResultSchema.extend({
    calls: z.array(z.object({ target_contract: z.string(), calldata: z.string(), value: z.string() })).optional(),
    effects: effectsSchema(family.position).optional(),
  });
  return defineTool({
    name: toolName(family.slug, e.path),
    title: `${family.protocol}: ${e.summary}`,
    description:
      `${e.description} With simulate: true nothing is broadcast, and the answer shows the calls and their effects (balances and the ` +
      `position before and after). Otherwise it executes like execute: the result has the request_id; follow it with get_status. ` +
      `Give the amount as amount (token units, e.g. "12.5") or amount_raw (smallest unit). (${family.protocol} on ${family.chain}.)`,
    input,
    output,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    async run({ client }, args) {
      const { simulate, idempotency_key, ...body } = args as Record<string, unknown> & { simulate?: boolean; idempotency_key?: string };
      if (simulate) {
        const r = await client.protocols.simulate<z.output<typeof output>>(family.slug, e.path, body);
        if (!r.ok) return r;
        const changes = r.value.effects?.balance_changes.map((c) => `${c.change.formatted} ${c.token.symbol}`).join(', ');
        const hf = (r.value.effects?.position_after as { health_factor?: string | null } | null | undefined)?.health_factor;
        return {
          ok: true,
          value: r.value,
          summary: `simulated ${e.path}: ${r.value.estimated_gas} gas${changes ? `; wallet ${changes}` : ''}${hf !== undefined ? `; health factor after ${hf ?? 'n/a (no debt)'}` : ''}; nothing was broadcast`,
        };
      }
      const r = await client.protocols.execute(family.slug, e.path, body, { ...(idempotency_key && { idempotencyKey: idempotency_key }) });
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
