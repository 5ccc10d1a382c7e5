import type { ApiClient, Call, ExecutionRequestSpec, ProtocolAction } from '../../api/v1alpha1/index.ts';
import type { ChainName } from '../../config/chains.ts';

/**
 * What a caller asks to execute, whichever route it came through (POST /execute, POST /simulate, a protocol
 * action): validated, aliases resolved, addresses checksummed, values defaulted.
 */
export interface ExecutionInput {
  agentId: string;
  chain: ChainName;
  calls: Call[];
  /** Whether the caller used the batch shape; kept so answers can echo it. */
  batch: boolean;
  strategyId?: string | undefined;
  callbackUrl?: string | undefined;
  /** The protocol action the calls were planned from (a `/protocols/...` route): what a retry is matched by. */
  action?: ProtocolAction | undefined;
}

/** The ExecutionRequest spec for `input` from `client`: the mode is the key's at acceptance time. */
export function specOf(client: ApiClient, input: ExecutionInput): ExecutionRequestSpec {
  return {
    apiClient: client.metadata.name,
    agentId: input.agentId,
    chain: input.chain,
    calls: input.calls,
    ...(input.action !== undefined && { action: input.action }),
    batch: input.batch,
    ...(input.strategyId !== undefined && { strategyId: input.strategyId }),
    ...(input.callbackUrl !== undefined && { callbackUrl: input.callbackUrl }),
    paymentMode: client.spec.paymentMode,
  };
}
