import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { IdempotencyKey } from './fields.ts';
import { agentFields, BatchCallInput, callFields, executeFields, PaymentProofInput } from './inputs.ts';

const ExecuteInput = z.object({
  ...agentFields,
  target_contract: callFields.target_contract.optional(),
  calldata: callFields.calldata.optional(),
  value: callFields.value,
  batch_calls: z
    .array(BatchCallInput)
    .min(1)
    .optional()
    .meta({ description: 'Several calls run atomically, in order, in one operation. Give either batch_calls or target_contract + calldata.' }),
  ...executeFields,
  idempotency_key: IdempotencyKey.optional(),
  payment_proof: PaymentProofInput.optional().meta({
    description:
      'After a payment_required error, if you paid yourself: {request_id, payer, token, chain, tx_hash} of your on-chain transfer of exactly required_amount_raw, and optionally the payer’s signature (docs/payments.md). Send it with exactly the same other arguments.',
  }),
});

export const execute = defineTool({
  name: 'execute',
  title: 'Execute a call or a batch',
  description:
    "Executes one contract call (target_contract + calldata + value) or a batch (batch_calls) from the agent's smart wallet. It is simulated " +
    'first, then queued; the result has the request_id and status "queued". Execution is asynchronous: follow it with get_status ' +
    '(wait_seconds) until confirmed, reverted or failed. If this API key pays per execution, the error payment_required says what to ' +
    'pay and how (the pay tool, or payment_proof). Calls that would fail are refused with their revert reason and nothing runs.',
  input: ExecuteInput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  async run({ client, journal }, args) {
    const { idempotency_key, payment_proof, ...body } = args;
    // A proof for a request this server sent goes with that request's own Idempotency-Key: the same request, paid.
    const known = payment_proof?.request_id !== undefined ? journal.find(payment_proof.request_id) : undefined;
    const idempotencyKey = idempotency_key ?? known?.sent.idempotency_key ?? randomUUID();
    const r = await client.execute({ ...body, chain: body.chain ?? 'ethereum' } as never, {
      idempotencyKey,
      ...(payment_proof && { paymentProof: payment_proof }),
    });
    if (!r.ok) return r;
    return { ok: true, value: r.value, summary: `${r.value.request_id} is ${r.value.status}: ${r.value.message}. Follow it with get_status.` };
  },
});
