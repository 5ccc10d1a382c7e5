import { formatUnits } from 'viem';
import type { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';
import type { AgentWalletClient } from '../client/client.ts';
import { ApiError } from '../client/errors.ts';
import type { Journal } from '../client/journal.ts';
import { PayError, type Payer } from '../client/pay.ts';

/** What every tool may use: the API client (key and base URL from the environment), the journal, the payer. */
export interface ToolDeps {
  client: AgentWalletClient;
  journal: Journal;
  /** Configured with AGENT_WALLET_PAYER_KEY (or _FILE): then the `pay` tool can pay 402 quotes. */
  payer?: Payer | undefined;
}

/** Arguments the tool's published schema lets through but the chosen action does not take (a family tool's `action`). */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export type ToolError = ApiError | PayError | ToolInputError;
export type ToolOutcome<T> = { ok: true; value: T; summary: string } | { ok: false; error: ToolError };

/**
 * One MCP tool of agent-wallet: a client of one API call (or a small flow), with input and output schemas built
 * from the API's own zod schemas (src/api/http). `description` is written for a model: what the tool does,
 * when to use it, what comes back.
 */
export interface AgentWalletTool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  input: I;
  /** Published only where it helps a model read the answer: the text summary and the structured content carry it anyway. */
  output?: O;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  run(deps: ToolDeps, args: z.output<I>): Promise<ToolOutcome<z.output<O>>>;
}

/** Declares a tool with its argument and result types inferred from its schemas. */
export const defineTool = <I extends z.ZodObject, O extends z.ZodObject>(tool: AgentWalletTool<I, O>): AgentWalletTool<I, O> => tool;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of tools of different schemas
export type AnyTool = AgentWalletTool<any, any>;

/** Registers `tool` on `server`: results as structuredContent plus a one-line text summary; errors as tool errors. */
export function registerTool(server: McpServer, deps: ToolDeps, tool: AnyTool): void {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: withoutDialect(tool.input),
      ...(tool.output && { outputSchema: withoutDialect(tool.output) }),
      annotations: tool.annotations,
    },
    async (args: unknown) => {
      const outcome = await tool.run(deps, args);
      if (outcome.ok) return { content: [{ type: 'text' as const, text: outcome.summary }], structuredContent: outcome.value as Record<string, unknown> };
      return errorResult(outcome.error, deps);
    },
  );
}

/**
 * The schema as it is, published without its `$schema`: MCP reads a schema without one as JSON Schema 2020-12, what
 * zod emits, so the 56 bytes it costs every input and output schema buy nothing in tools/list (issue 18's 40 KB).
 */
function withoutDialect<T extends z.ZodType>(schema: T): T {
  const std = schema['~standard'];
  const strip = (json: Record<string, unknown>) => {
    const { $schema: _, ...rest } = json;
    return rest;
  };
  const jsonSchema = {
    input: (o: Parameters<typeof std.jsonSchema.input>[0]) => strip(std.jsonSchema.input(o)),
    output: (o: Parameters<typeof std.jsonSchema.output>[0]) => strip(std.jsonSchema.output(o)),
  };
  // Validation and types stay zod's: only the published JSON Schema changes.
  return new Proxy(schema, { get: (target, key, receiver) => (key === '~standard' ? { ...std, jsonSchema } : Reflect.get(target, key, receiver)) });
}

/**
 * A tool error carrying the API's own `error` code (or the payer's), its HTTP status and body. A 402 says exactly
 * what to pay, to whom, on which chain, and the two ways to do it.
 */
export function errorResult(e: ToolError, deps: Pick<ToolDeps, 'payer'>) {
  if (e instanceof ToolInputError) {
    return { isError: true, content: [{ type: 'text' as const, text: `Input validation error: ${e.message}` }], structuredContent: { error: 'invalid_arguments', message: e.message, ...(e.field && { field: e.field }) } };
  }
  const structured =
    e instanceof PayError
      ? { error: e.code, message: e.shortMessage, ...e.details }
      : { ...e.body, error: e.code, message: e.message, http_status: e.status, ...(e.paymentRequiredHeader && { x402_offered: true }) };
  const text = e instanceof PayError ? `payment failed: ${e.code}: ${e.shortMessage}` : e.status === 402 ? paymentText(e, deps) : apiErrorText(e);
  return { isError: true, content: [{ type: 'text' as const, text }], structuredContent: structured };
}

function apiErrorText(e: ApiError): string {
  const field = typeof e.body.field === 'string' ? ` (field ${e.body.field})` : '';
  const where = e.status === 0 ? 'the service did not answer' : `HTTP ${e.status}`;
  const request = typeof e.body.request_id === 'string' ? ` request_id ${e.body.request_id}.` : '';
  return `${e.code}${field}: ${e.message} [${where}].${request}`;
}

function paymentText(e: ApiError, deps: Pick<ToolDeps, 'payer'>): string {
  const q = e.payment!;
  const amounts = q.accepted_tokens
    .map((t) => `${formatUnits(BigInt(q.required_amount_raw[t] ?? '0'), 6)} ${t} (raw ${q.required_amount_raw[t]})`)
    .join(' or ');
  const refused = q.error === 'payment_verification_failed' ? `The payment sent was refused: ${String((q as { reason?: string }).reason)}: ${e.message}. ` : '';
  const how = deps.payer
    ? `Call the pay tool with request_id "${q.request_id}": this server pays from its configured payer and re-submits the request.`
    : `This server has no payer configured. Transfer the amount yourself, then call execute again with the same arguments plus ` +
      `payment_proof {request_id: "${q.request_id}", payer, token, tx_hash}.`;
  return `${refused}Payment required before request ${q.request_id} can run: pay ${q.amount_usd} USD as ${amounts} to ${q.payment_address} on ${q.chain}. ${how}`;
}
