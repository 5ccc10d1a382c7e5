import type { ApiClient } from '../../api/v1alpha1/index.ts';
import type { ChainName } from '../../config/chains.ts';
import { createReader } from '../../protocols/common/reads.ts';
import { ProtocolError } from '../../protocols/common/errors.ts';
import type { AgentContext, AnyFamily, ProtocolContext } from '../../protocols/types.ts';
import { workerFor, type GatewayContext } from '../context.ts';

/**
 * What a family's endpoint runs with, for one request: its chain (the family's own: another is 400), the protocol's
 * configuration on that chain (none: 404 protocol_not_configured), and reads through the chain worker's seam.
 */
export function protocolContext(ctx: GatewayContext, family: AnyFamily, chain: ChainName | undefined): ProtocolContext<never> {
  if (chain !== undefined && chain !== family.chain) {
    throw new ProtocolError('unsupported_chain', `${family.slug} (${family.protocol}) runs on ${family.chain} only, not ${chain}`, { field: 'chain' });
  }
  const worker = workerFor(ctx, family.chain);
  const config = ctx.protocols.get(family.chain)?.[family.key as never];
  if (config === undefined) {
    throw new ProtocolError('protocol_not_configured', `this deployment does not serve ${family.protocol} on ${family.chain}`);
  }
  return { chain: family.chain, config, read: createReader(worker) };
}

/** The same, with the agent's smart wallet resolved (counterfactual or deployed: its address is known either way). */
export async function agentContext(ctx: GatewayContext, family: AnyFamily, client: ApiClient, agentId: string, chain: ChainName | undefined): Promise<AgentContext<never>> {
  const base = protocolContext(ctx, family, chain);
  const wallet = await workerFor(ctx, family.chain).resolveWallet({ apiClient: client.metadata.name, agentId });
  return { ...base, agentId, wallet: wallet.address };
}
