import { z } from 'zod';
import { ExecutionResultSchema, PaymentRequiredSchema } from '../../api/http/index.ts';
import type { JournalRecord } from '../../client/journal.ts';
import { PayError } from '../../client/pay.ts';
import { payAndResubmit } from '../../client/payAndResubmit.ts';
import { defineTool, type ToolDeps } from '../tool.ts';
import { RequestIdInput } from './inputs.ts';

/** The execute this server sent for `requestId`: a quote is read, and a payment attached, by sending it again. */
function sentRequest(deps: ToolDeps, requestId: string): JournalRecord | PayError {
  return (
    deps.journal.find(requestId) ??
    new PayError('unknown_request', `request ${requestId} was not sent through this server, so its arguments are unknown here: pay it where it was sent`)
  );
}

export const getPaymentQuote = defineTool({
  name: 'get_payment_quote',
  title: 'Get the payment quote of a request',
  description:
    'For a request that answered payment_required: returns what to pay (amount in USD and per accepted token, raw), to which address, on ' +
    'which chain, whether x402 is offered, and whether this server can pay it itself (pay tool). Reading it never pays nor creates a ' +
    'request. If no payment is needed (any more), payment_required is false.',
  input: z.object({ request_id: RequestIdInput }),
  output: z.object({
    request_id: z.string(),
    payment_required: z.boolean(),
    quote: PaymentRequiredSchema.nullable(),
    x402_offered: z.boolean(),
    payer_configured: z.boolean(),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run(deps, args) {
    const sent = sentRequest(deps, args.request_id);
    if (sent instanceof PayError) return { ok: false, error: sent };
    // The same body and Idempotency-Key: the service answers the same request's 402 again (nothing new is made).
    const r = await deps.client.executeAt(sent.sent.path, sent.sent.body, { idempotencyKey: sent.sent.idempotency_key });
    const payer_configured = deps.payer !== undefined;
    if (r.ok) {
      return {
        ok: true,
        value: { request_id: args.request_id, payment_required: false, quote: null, x402_offered: false, payer_configured },
        summary: `${args.request_id} needs no payment: it is ${r.value.status}`,
      };
    }
    if (r.error.status !== 402 || !r.error.payment) return r;
    const q = r.error.payment;
    const quote = { ...PaymentRequiredSchema.parse({ ...q, error: 'payment_required' }) };
    return {
      ok: true,
      value: { request_id: args.request_id, payment_required: true, quote, x402_offered: r.error.paymentRequiredHeader !== undefined, payer_configured },
      summary:
        `${args.request_id}: pay ${q.amount_usd} USD (${q.accepted_tokens.map((t) => `${q.required_amount_raw[t]} raw ${t}`).join(' or ')}) ` +
        `to ${q.payment_address} on ${q.chain}${payer_configured ? '; the pay tool can pay it' : ''}`,
    };
  },
});

export const pay = defineTool({
  name: 'pay',
  title: 'Pay a request and run it',
  description:
    "Pays a payment_required request with this server's payer and re-submits it (queued). It pays exactly the quoted " +
    'amount to the quoted address: by x402 signature where offered (no gas), else by an on-chain transfer proven to the service. ' +
    'Returns the queued request and the payment made; follow it with get_status. Fails with no_payer without a payer.',
  input: z.object({
    request_id: RequestIdInput,
    method: z.enum(['x402', 'transfer']).optional().meta({ description: 'Default: x402 when offered, else transfer' }),
    token: z.string().min(1).max(16).optional().meta({ description: 'One of the accepted tokens (default: the first the payer can cover)' }),
  }),
  output: z.object({
    result: ExecutionResultSchema,
    payment: z
      .object({ method: z.enum(['x402', 'transfer']), token: z.string(), amount_raw: z.string(), tx_hash: z.string().nullable() })
      .nullable()
      .meta({ description: 'null: the request needed no payment (any more)' }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run(deps, args) {
    if (!deps.payer) {
      return { ok: false, error: new PayError('no_payer', 'no payer is configured on this server (AGENT_WALLET_PAYER_KEY): pay yourself and execute again with payment_proof') };
    }
    const sent = sentRequest(deps, args.request_id);
    if (sent instanceof PayError) return { ok: false, error: sent };
    const r = await payAndResubmit(
      deps.client,
      { path: sent.sent.path, body: sent.sent.body as { agent_id: string; chain: string }, idempotencyKey: sent.sent.idempotency_key },
      deps.payer,
      { method: args.method, token: args.token },
    );
    if (!r.ok) return r;
    const p = r.value.payment;
    return {
      ok: true,
      value: { result: r.value.result, payment: p ? { method: p.method, token: p.token, amount_raw: p.amountRaw, tx_hash: p.txHash ?? null } : null },
      summary: p
        ? `paid ${p.amountRaw} raw ${p.token} by ${p.method}${p.txHash ? ` (tx ${p.txHash})` : ''}; ${r.value.result.request_id} is ${r.value.result.status}`
        : `${r.value.result.request_id} needed no payment; it is ${r.value.result.status}`,
    };
  },
});
