import type { Address } from 'viem';
import type { ChainWorker, WalletRef } from '../chain/types.ts';
import type { ChainName } from '../config/chains.ts';
import { ProtocolError } from './common/errors.ts';
import { createReader } from './common/reads.ts';
import type { ProtocolsConfig } from './config.ts';
import type { AgentContext, AnyFamily, ProtocolContext } from './types.ts';

/**
 * What a family's endpoint runs with, wherever it runs (the gateway's request, the controller's re-plan at
 * signing): its chain, the protocol's configuration on that chain (none: protocol_not_configured), reads through
 * the chain worker, and the chain's clock.
 */
export function familyContext(family: AnyFamily, chain: ChainName, worker: ChainWorker, protocols: ProtocolsConfig | undefined): ProtocolContext<never> {
  const config = protocols?.[family.key as keyof ProtocolsConfig];
  if (config === undefined) {
    throw new ProtocolError('protocol_not_configured', `this deployment does not serve ${family.protocol} on ${chain}`);
  }
  return { chain, config: config as never, read: createReader(worker), now: async () => (await worker.getHead()).timestamp, events: worker, fees: () => worker.getFees() };
}

/** The same, for one agent, whose smart wallet is `wallet` (counterfactual or deployed: its address is known either way). */
export function agentFamilyContext(base: ProtocolContext<never>, worker: Pick<ChainWorker, 'getBalances' | 'simulate'>, ref: WalletRef, wallet: Address): AgentContext<never> {
  return {
    ...base,
    agentId: ref.agentId,
    wallet,
    nativeBalance: async () => BigInt((await worker.getBalances(ref)).nativeWei),
    simulate: (calls) => worker.simulate(ref, calls),
  };
}
