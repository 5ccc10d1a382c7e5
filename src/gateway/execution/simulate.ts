import { newSimulationId, type ApiClient } from '../../api/v1alpha1/index.ts';
import type { ExecutionResult } from '../../api/http/index.ts';
import { workerFor, type GatewayContext } from '../context.ts';
import { simulationFailureError } from '../failures.ts';
import { payableEstimateUsd } from '../../payments/terms.ts';
import { pricedGas } from '../../payments/pricing.ts';
import type { ExecutionInput } from './input.ts';
import type { Observed, SimulateOptions } from '../../chain/types.ts';

/** What the key would pay for this simulation under its mode (spec §2.6): the quote an execute would show. */
export function estimatedCostUsd(
  ctx: GatewayContext,
  client: ApiClient,
  chain: ExecutionInput['chain'],
  sim: Parameters<typeof payableEstimateUsd>[1],
): number {
  const terms = ctx.payments.terms.get(chain);
  if (!terms || client.spec.paymentMode === 'sponsored') return 0;
  return payableEstimateUsd(client.spec.paymentMode, sim, terms, ctx.payments.settings, client.spec.platformFeeUsd);
}

/**
 * The simulate flow (POST /simulate, the protocol actions' `.../simulate`): the chain worker runs the calls as
 * the wallet would and nothing is stored or broadcast. The `sim_...` request_id names this answer only; `observe`
 * reads come back before and after the calls (a protocol action's effects). Throws GatewayError when the calls would fail.
 */
export async function simulateExecution(
  ctx: GatewayContext,
  client: ApiClient,
  input: Pick<ExecutionInput, 'agentId' | 'chain' | 'calls'>,
  opts: SimulateOptions = {},
): Promise<{ result: ExecutionResult; observed?: Observed | undefined }> {
  const worker = workerFor(ctx, input.chain);
  const result = await worker.simulate({ apiClient: client.metadata.name, agentId: input.agentId }, input.calls, opts);
  if (!result.ok) throw simulationFailureError(result.error, input.chain);
  const sim = result.value;
  return {
    result: {
      request_id: newSimulationId(),
      status: 'pending',
      smart_wallet_address: sim.wallet.address,
      // The gas the key's price is made from (the auto mode's fee transfer included): docs/payments.md.
      estimated_gas: Number(pricedGas(client.spec.paymentMode, sim.estimatedGas)),
      ...(sim.l1Data && { l1_data_gas: Number(sim.l1Data.gas) }),
      estimated_cost_usd: estimatedCostUsd(ctx, client, input.chain, sim),
      tx_hash: null,
      message: 'simulation succeeded; nothing was broadcast',
    },
    observed: sim.observed,
  };
}
