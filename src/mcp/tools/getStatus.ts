import { z } from 'zod';
import { MAX_STATUS_WAIT_SECONDS, type StatusRecord } from '../../api/http/index.ts';
import { defineTool } from '../tool.ts';
import { RequestIdInput } from './inputs.ts';

/**
 * A bounded wait, well below a host's own tool timeout (60 s in the MCP SDK clients and in common hosts): the
 * answer comes before the host gives up on the call. The client's waiting GETs (the service answers each change
 * as it happens) never run past this deadline.
 */
const MAX_WAIT_SECONDS = MAX_STATUS_WAIT_SECONDS;

/** States only the caller can move on: waiting for them would only burn the host's timeout. */
const CALLER_MUST_ACT: Readonly<Record<string, string>> = {
  payment_required:
    'it waits for a payment only you can make: get_payment_quote says what to pay; pay pays it (when this server has a payer), ' +
    'or transfer it yourself and call execute again with the same arguments plus payment_proof',
};

export const getStatus = defineTool({
  name: 'get_status',
  title: 'Get the status of a request',
  description:
    'Returns the state of an execution request: pending, payment_required, payment_verified, queued, broadcasting, or a final state ' +
    `confirmed, reverted or failed (with tx_hash, gas and, when it failed, why). With wait_seconds (up to ${MAX_WAIT_SECONDS}) it waits for a ` +
    'final state and returns the state reached by then; call it again if the request is still moving. payment_required answers at once, ' +
    'saying what to do.',
  input: z.object({
    request_id: RequestIdInput,
    wait_seconds: z
      .number()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .optional()
      .meta({ description: `Wait up to this many seconds for confirmed, reverted or failed (0 to ${MAX_WAIT_SECONDS}; default 0: answer at once)` }),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  async run({ client }, args) {
    const wait = args.wait_seconds ?? 0;
    const r =
      wait > 0
        ? await client.waitForTerminal(args.request_id, { timeoutMs: wait * 1000, until: (s) => s.status in CALLER_MUST_ACT })
        : await client.status(args.request_id);
    if (!r.ok) {
      // Still moving when the wait ran out: that is an answer, not an error.
      if (r.error.code === 'wait_timeout') return done(r.error.body as unknown as StatusRecord, wait);
      return r;
    }
    return done(r.value, wait);
  },
});

function done(s: StatusRecord, waited: number) {
  const final = ['confirmed', 'reverted', 'failed'].includes(s.status);
  const why = s.failure ? ` (${s.failure.code}: ${s.failure.message})` : '';
  const act = CALLER_MUST_ACT[s.status];
  const more = final ? '' : act ? `: ${act}` : waited > 0 ? ` after waiting ${waited} s; call again to keep waiting` : '; not final yet';
  return { ok: true as const, value: s, summary: `${s.request_id} is ${s.status}${s.tx_hash ? `, tx ${s.tx_hash}` : ''}${why}${more}` };
}
