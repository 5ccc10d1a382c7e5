import type { ApiClient } from '../../api/v1alpha1/index.ts';
import { agentFamilyContext, familyContext } from '../../protocols/context.ts';
import type { AgentContext, AnyFamily, ProtocolContext } from '../../protocols/types.ts';
import { workerFor, type GatewayContext } from '../context.ts';

/** A family's endpoint context for a request to this gateway (src/protocols/context.ts). */
export function protocolContext(ctx: GatewayContext, family: AnyFamily): ProtocolContext<never> {
  return familyContext(family, workerFor(ctx, family.chain), ctx.protocols.get(family.chain));
}

/** The same, with the agent's smart wallet resolved. */
export async function agentContext(ctx: GatewayContext, family: AnyFamily, client: ApiClient, agentId: string): Promise<AgentContext<never>> {
  const base = protocolContext(ctx, family);
  const wallet = await workerFor(ctx, family.chain).resolveWallet({ apiClient: client.metadata.name, agentId });
  return agentFamilyContext(base, agentId, wallet.address);
}
