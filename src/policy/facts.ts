import type { Call } from '../api/v1alpha1/index.ts';
import type { ChainName } from '../config/chains.ts';
import type { Valuation } from './valuation.ts';

/** What a policy judges about one request: who asks, where, what calls, made from which protocol action, when. */
export interface PolicyFacts {
  apiClient: string;
  agentId: string;
  chain: ChainName;
  calls: readonly Call[];
  /** The protocol action the calls were planned from (`lend-a-v3/supply` and its normalized input); absent for POST /execute. */
  action?: { name: string; input: Record<string, unknown> } | undefined;
  now: Date;
  /**
   * The agent's own smart wallet, when known: a call to it (its upgrade, its EntryPoint deposit) is accepted only by a
   * rule naming it in `targets`, since through it an agent could leave every policy behind.
   */
  wallet?: string | undefined;
  /**
   * What the simulated execution moves out of the wallet and its worth (the controller's and the dry-run's).
   * Absent where it is not known (the gateway's early check): rules on outflows and USD then refuse nothing there
   * (a reject on them does not match, an accept may) and the controller decides them.
   */
  execution?: Valuation | undefined;
}
