import type { ApiClient } from '../../api/v1alpha1/index.ts';
import { createReader } from '../../protocols/common/reads.ts';
import { ProtocolError } from '../../protocols/common/errors.ts';
import type { AgentContext, AnyFamily, ProtocolContext } from '../../protocols/types.ts';
import { workerFor, type GatewayContext } from '../context.ts';

/**
 * What a family's endpoint runs with, for one request: its chain (the input's schema admits no other), the
 * protocol's configuration on that chain (none: 404 protocol_not_configured), and reads through the chain worker.
 */
export function protocolContext(ctx: GatewayContext, family: AnyFamily): ProtocolContext<never> {
  const worker = workerFor(ctx, family.chain);
  const config = ctx.protocols.get(family.chain)?.[family.key as never];
  if (config === undefined) {
    throw new ProtocolError('protocol_not_configured', `this deployment does not serve ${family.protocol} on ${family.chain}`);
  }
  return { chain: family.chain, config, read: createReader(worker), now: async () => (await worker.getHead()).timestamp };
}

/** The same, with the agent's smart wallet resolved (counterfactual or deployed: its address is known either way). */
export async function agentContext(ctx: GatewayContext, family: AnyFamily, client: ApiClient, agentId: string): Promise<AgentContext<never>> {
  const base = protocolContext(ctx, family);
  const wallet = await workerFor(ctx, family.chain).resolveWallet({ apiClient: client.metadata.name, agentId });
  return { ...base, agentId, wallet: wallet.address };
}
