import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { RequestIdInput } from './inputs.ts';

export const cancelRequest = defineTool({
  name: 'cancel_request',
  title: 'Cancel a request',
  description:
    'Cancels a request not signed yet: it ends failed (cancelled), nothing is sent, a payment taken stays a credit. ' +
    'Signed or finished: error not_cancellable, saying why. Safe to repeat.',
  input: z.object({ request_id: RequestIdInput }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  async run({ client }, args) {
    const r = await client.cancel(args.request_id);
    if (!r.ok) return r;
    const s = r.value;
    const summary =
      s.status === 'failed'
        ? `${s.request_id} is cancelled: ${s.failure?.message ?? 'nothing was sent'}`
        : `${s.request_id}: cancel recorded, nothing will be signed; still ${s.status} until the service ends it (get_status)`;
    return { ok: true as const, value: s, summary };
  },
});
