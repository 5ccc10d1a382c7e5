import type { ApiClient } from '../../api/v1alpha1/index.ts';
import type { ChainName } from '../../config/chains.ts';
import { agentFamilyContext, familyContext } from '../../protocols/context.ts';
import type { AgentContext, AnyFamily, ProtocolContext } from '../../protocols/types.ts';
import { workerFor, type GatewayContext } from '../context.ts';

/** A family's endpoint context for a request to this gateway (src/protocols/context.ts). */
export function protocolContext(ctx: GatewayContext, family: AnyFamily, chain: ChainName): ProtocolContext<never> {
  return familyContext(family, chain, workerFor(ctx, chain), ctx.protocols.get(chain));
}

/** The same, with the agent's smart wallet resolved. */
export async function agentContext(ctx: GatewayContext, family: AnyFamily, chain: ChainName, client: ApiClient, agentId: string): Promise<AgentContext<never>> {
  const base = protocolContext(ctx, family, chain);
  const worker = workerFor(ctx, chain);
  const ref = { apiClient: client.metadata.name, agentId };
  const wallet = await worker.resolveWallet(ref);
  return agentFamilyContext(base, worker, ref, wallet.address);
}
