import { z } from 'zod';
import { AgentId, Calldata, CallbackUrl, ChainSchema, StrategyId, TargetContract, Value } from '../../api/http/index.ts';

/** Tool inputs built from the API's own field schemas (src/api/http): the same rules, messages and descriptions. */
export const agentFields = {
  agent_id: AgentId,
  chain: ChainSchema.optional().meta({ description: 'ethereum, base or arbitrum (aliases eth, arb). Default: ethereum.' }),
};

export const callFields = {
  target_contract: TargetContract,
  calldata: Calldata,
  value: Value.optional(),
};

export const BatchCallInput = z.object(callFields);

export const executeFields = {
  strategy_id: StrategyId.optional(),
  callback_url: CallbackUrl.optional(),
};

export const RequestIdInput = z.string().min(1).max(253).meta({ description: 'The request_id an execute answered (req-…)' });
