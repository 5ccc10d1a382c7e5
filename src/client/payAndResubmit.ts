import type { Address } from 'viem';
import type { ExecutionResult } from '../api/http/index.ts';
import { err, ok, type Result } from '../lib/result.ts';
import type { AgentWalletClient } from './client.ts';
import { ApiError } from './errors.ts';
import { payQuote, PayError, type MadePayment, type Payer, type PaymentChoice } from './pay.ts';

/** What was executed and must be paid for: the same path, body and Idempotency-Key as the first attempt. */
export interface PayableCall {
  path: string;
  body: { agent_id: string; chain: string } & Record<string, unknown>;
  idempotencyKey: string;
}

export interface Paid {
  result: ExecutionResult;
  /** Undefined when the request needed no payment after all (already paid, or the key does not take payments). */
  payment?: MadePayment;
  /** The answer was an Idempotency-Key replay (Idempotent-Replayed: true): the request existed already. */
  replayed: boolean;
}

/** How long a payment that is not deep enough yet may be re-sent (spec 4.2 rule 2: confirmations). */
const CONFIRMATION_WAIT_MS = 120_000;

/**
 * Pays for `call` and re-submits it with the payment, as spec 4.2 describes: the same request (same body, same
 * Idempotency-Key, so nothing new is created) first answers its 402 again, with the quote; the payer pays it;
 * the re-submission carries the proof (or the x402 signature). A refusal that may pass later (confirmations
 * not yet sufficient) is re-sent after its Retry-After, within CONFIRMATION_WAIT_MS; any other is returned.
 */
export async function payAndResubmit(
  client: AgentWalletClient,
  call: PayableCall,
  payer: Payer,
  choice: PaymentChoice = {},
  onProgress: (line: string) => void = () => undefined,
): Promise<Result<Paid, ApiError | PayError>> {
  const first = await client.executeAt<ExecutionResult>(call.path, call.body, { idempotencyKey: call.idempotencyKey });
  if (first.ok) return ok({ result: first.value, replayed: first.replayed });
  if (first.error.status !== 402) return err(first.error);

  // Where the accepted tokens live on the chain: the service's own token list (GET /wallet/balance).
  const balance = await client.balance(call.body.agent_id, call.body.chain);
  const addresses = new Map<string, Address>(balance.ok ? balance.value.tokens.map((t) => [t.symbol, t.address as Address]) : []);
  const quote = first.error.payment!;
  onProgress(`quote: ${quote.amount_usd} USD in ${quote.accepted_tokens.join(' or ')} to ${quote.payment_address} on ${quote.chain}`);
  const paid = await payQuote(first.error, payer, choice, (s) => addresses.get(s), client.clientId);
  if (!paid.ok) return paid;
  const payment = paid.value;
  onProgress(
    payment.method === 'x402'
      ? `signed an x402 authorization of ${payment.amountRaw} ${payment.token} (raw units)`
      : `sent ${payment.amountRaw} ${payment.token} (raw units): ${payment.txHash}`,
  );

  const deadline = Date.now() + CONFIRMATION_WAIT_MS;
  for (;;) {
    const r = await client.executeAt<ExecutionResult>(call.path, call.body, { idempotencyKey: call.idempotencyKey, ...payment.attach });
    if (r.ok) return ok({ result: r.value, payment, replayed: r.replayed });
    const retryable = r.error.status === 402 && r.error.body.retryable === true;
    if (!retryable || Date.now() > deadline) return err(r.error);
    onProgress(`not accepted yet (${String(r.error.body.reason)}): sending it again in ${r.error.retryAfterSeconds ?? 2} s`);
    await new Promise((resolve) => setTimeout(resolve, (r.error.retryAfterSeconds ?? 2) * 1000));
  }
}
