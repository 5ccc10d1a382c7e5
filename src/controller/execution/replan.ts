import type { Address } from 'viem';
import type { Call, ExecutionRequest, Failure } from '../../api/v1alpha1/index.ts';
import type { ChainWorker } from '../../chain/types.ts';
import type { ChainName } from '../../config/chains.ts';
import { findAction } from '../../protocols/action.ts';
import { ProtocolError } from '../../protocols/common/errors.ts';
import type { ProtocolsConfig } from '../../protocols/config.ts';
import { agentFamilyContext, familyContext } from '../../protocols/context.ts';
import type { AnyFamily } from '../../protocols/types.ts';

export interface ReplanDeps {
  /** Each chain's protocols configuration, as the gateway has it. */
  protocols: ReadonlyMap<ChainName, ProtocolsConfig>;
  families: readonly AnyFamily[];
}

export type Replanned =
  /** Not a protocol action, or its family signs the calls planned at acceptance. */
  | { kind: 'as_accepted' }
  | { kind: 'replanned'; calls: Call[] }
  /** The re-plan refused (the protocol's state no longer allows the action), or would have moved a bound. */
  | { kind: 'refused'; failure: Failure };

/**
 * The calls to sign for a request whose action's family plans again at signing (ActionEndpoint.replan): planned
 * from the stored input, whose bounds the first plan made absolute. A plan that answers other bounds than those
 * stored is refused: a re-plan may never move what the caller was shown.
 */
export async function replanAtSigning(req: ExecutionRequest, worker: ChainWorker, deps: ReplanDeps): Promise<Replanned> {
  const action = req.spec.action;
  const found = action && findAction(deps.families, action.name);
  if (!action || !found?.endpoint.replan) return { kind: 'as_accepted' };
  const { family, endpoint } = found;
  const input = endpoint.input.safeParse(action.input);
  if (!input.success) return refused('replan_failed', `the stored input of ${action.name} no longer parses: ${input.error.issues[0]?.message}`);
  try {
    const ref = { apiClient: req.spec.apiClient, agentId: req.spec.agentId };
    const wallet = (req.status?.smartWalletAddress ?? (await worker.resolveWallet(ref)).address) as Address;
    const ctx = agentFamilyContext(familyContext(family, req.spec.chain, worker, deps.protocols.get(req.spec.chain)), worker, ref, wallet);
    const plan = await endpoint.plan(ctx, input.data as never);
    for (const [bound, value] of Object.entries(plan.bounds ?? {})) {
      const stored = action.input[bound];
      if (stored !== undefined && String(stored) !== String(value)) {
        return refused('bounds_changed', `the re-plan of ${action.name} moved ${bound} from ${String(stored)} to ${value}; nothing was signed`);
      }
    }
    return { kind: 'replanned', calls: plan.calls };
  } catch (e) {
    if (e instanceof ProtocolError && e.status < 500) return refused(e.code, `the re-plan of ${action.name} at signing: ${e.shortMessage}`);
    throw e; // a read that failed: the reconciler retries
  }
}

const refused = (code: string, message: string): Replanned => ({ kind: 'refused', failure: { code, message } });
