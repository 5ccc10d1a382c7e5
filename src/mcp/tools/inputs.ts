import { z } from 'zod';
import { Calldata, PaymentProofHeaderSchema, TargetContract } from '../../api/http/index.ts';
import { CHAIN_NAMES } from '../../config/chains.ts';
import { chainEnum, decimalUint, ModelAgentId, ModelCallbackUrl, ModelChain, ModelStrategyId } from './fields.ts';

/** Tool inputs: the API's field names, in the short forms of fields.ts where the API's published ones are long. */
export const agentFields = {
  agent_id: ModelAgentId,
  chain: ModelChain,
};

export const callFields = {
  target_contract: TargetContract.meta({ description: 'Contract address, 0x + 40 hex (a mixed-case one must carry its EIP-55 checksum)' }),
  calldata: Calldata.meta({ description: 'ABI-encoded call data, 0x-prefixed' }),
  value: decimalUint(false).optional().meta({ description: 'Native amount in wei, at most 2^256-1. Default "0"' }),
};

export const BatchCallInput = z.object(callFields);

export const executeFields = {
  strategy_id: ModelStrategyId.optional(),
  callback_url: ModelCallbackUrl.optional(),
};

/** The X-Payment-Proof of a transfer you made yourself, with the chain as an enum. */
export const PaymentProofInput = PaymentProofHeaderSchema.extend({
  chain: chainEnum(CHAIN_NAMES),
  signature: PaymentProofHeaderSchema.shape.signature.meta({ description: "Optional: the payer's signature over the proof message (docs/payments.md)" }),
});

export const RequestIdInput = z.string().min(1).max(253).meta({ description: 'The request_id an execute answered (req-…)' });
