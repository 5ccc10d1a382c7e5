import type { Address, Hex } from 'viem';
import type { Call } from '../../api/v1alpha1/index.ts';
import { ProtocolError } from '../common/errors.ts';
import type { AgentContext } from '../types.ts';
import { decodeGmxRevert } from './errors.ts';
import type { ContractMarketPrices } from './marketParams.ts';
import type { PerpMarket } from './snapshot.ts';

/** The prices a simulated execution runs at (GMX's SimulatePricesParams): one per distinct token, contract format. */
export interface SimulatedPrices {
  tokens: Address[];
  prices: ContractMarketPrices[keyof ContractMarketPrices][];
  /** The oracle timestamp (seconds): the chain's now. */
  at: bigint;
}

export const simulatedOracleParams = (p: SimulatedPrices) => ({ primaryTokens: p.tokens, primaryPrices: p.prices, minTimestamp: p.at, maxTimestamp: p.at });

/** A market's three prices as SimulatePricesParams wants them: each token once (the index is often the long token). */
export function simulationPricesOf(m: PerpMarket, at: bigint): SimulatedPrices {
  const tokens = [m.index, m.long, m.short].map((t) => t.address);
  const prices = [m.contractPrices.indexTokenPrice, m.contractPrices.longTokenPrice, m.contractPrices.shortTokenPrice];
  const unique = tokens.flatMap((t, i) => (tokens.findIndex((x) => x.toLowerCase() === t.toLowerCase()) === i ? [i] : []));
  return { tokens: unique.map((i) => tokens[i]!), prices: unique.map((i) => prices[i]!), at };
}

const END_OF_SIMULATION = 'EndOfOracleSimulation';

/**
 * Runs a create batch whose multicall ends with one of GMX's `simulateExecuteLatest…(prices)` from the wallet
 * (nothing is signed): the router creates the request, executes it at those prices, and reverts with
 * EndOfOracleSimulation when the execution succeeded; any other revert is why the keeper would cancel it (or why
 * the create itself fails). `what` names the request in the refusal; `sendsNative` what its ETH pays for.
 */
export async function checkKeeperExecutes(ctx: AgentContext<'gmxV2'>, calls: Call[], opts: { what: 'order' | 'deposit' | 'withdrawal'; sendsNative: string }): Promise<void> {
  const result = await ctx.simulate(calls);
  if (result.ok) throw new ProtocolError('protocol_read_failed', "GMX's simulated execution returned instead of ending the simulation: this ExchangeRouter is not a GMX v2 one");
  const e = result.error;
  if (e.code === 'insufficient_funds') throw new ProtocolError('insufficient_balance', `the wallet cannot pay the ETH this ${opts.what} sends (${opts.sendsNative}): ${e.message}`);
  if (e.code === 'rpc_unavailable') throw new ProtocolError('protocol_read_failed', `the chain did not answer the ${opts.what}'s simulation: ${e.message}`);
  const decoded = e.revertData ? decodeGmxRevert(e.revertData as Hex) : undefined;
  if (decoded?.name === END_OF_SIMULATION) return;
  const why = decoded ? `${decoded.name}: ${decoded.message}` : (e.revertReason ?? e.message);
  throw new ProtocolError('order_not_executable', `GMX's keeper would not execute this ${opts.what} now (${why})`, {
    details: { ...(decoded && { protocol_error: { protocol: 'GMX v2', ...decoded } }), ...(e.revertData && { revert_data: e.revertData }) },
  });
}
