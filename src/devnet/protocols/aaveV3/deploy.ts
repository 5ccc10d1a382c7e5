import { createPublicClient, http, type PublicClient } from 'viem';
import type { AaveV3Config } from '../../../protocols/aaveV3/config.ts';
import { DEVNET_POLLING_MS } from '../../clients.ts';
import type { ProtocolDeployContext, ProtocolDeployResult } from '../types.ts';
import { aaveV3Layout, type AaveV3Layout } from './layout.ts';
import { sendInOrder } from '../sender.ts';
import { aaveV3Steps, type DeploymentStep } from './steps.ts';

/** The configuration the service reads (src/protocols/aaveV3/config.ts): every address is known before deploying. */
export function aaveV3Config(layout: AaveV3Layout): AaveV3Config {
  return {
    poolAddressesProvider: layout.poolAddressesProvider.address,
    pool: layout.pool,
    oracle: layout.oracle.address,
    protocolDataProvider: layout.protocolDataProvider.address,
    uiPoolDataProvider: layout.uiPoolDataProvider.address,
  };
}

const layouts = new Map<string, AaveV3Layout>();

/**
 * The layout for a devnet chain: owned by the protocol deployer, listing the chain's USDC and WETH. Kept per
 * deployer and tokens: hashing ≈ 230 KB of init code takes ≈ 20 ms, and a devnet restarts in the same process.
 */
export function layoutFor(ctx: Pick<ProtocolDeployContext, 'deployer' | 'tokens'>): AaveV3Layout {
  const tokens = Object.fromEntries(ctx.tokens.map((t) => [t.symbol, t.address]));
  const key = JSON.stringify([ctx.deployer.address, tokens]);
  let layout = layouts.get(key);
  if (!layout) layouts.set(key, (layout = aaveV3Layout(ctx.deployer.address, tokens)));
  return layout;
}

/** A client whose requests of one tick go out as one JSON-RPC batch: a round of every step's reads, or the receipts. */
export function batchingClient(ctx: Pick<ProtocolDeployContext, 'chain'>): PublicClient {
  return createPublicClient({ chain: ctx.chain, transport: http(undefined, { batch: true }), pollingInterval: DEVNET_POLLING_MS }) as PublicClient;
}

/** The steps on ctx's chain (deployAaveV3 runs them; tests cut them short). */
export function deploymentSteps(ctx: Pick<ProtocolDeployContext, 'chain' | 'deployer' | 'tokens'>, client = batchingClient(ctx)): DeploymentStep[] {
  return aaveV3Steps(ctx.chain.name, client, layoutFor(ctx));
}

/**
 * Brings the chain to a complete Aave v3 market, doing only what is missing: every step plans its missing
 * transactions from the chain (all steps at once), the plans are sent in order, then every step is planned
 * again and must find nothing left. A reload (all in place) sends nothing; a chain left half-deployed by a
 * crash is finished; a chain with something else at our addresses fails and says what differs.
 */
export async function deployAaveV3(ctx: ProtocolDeployContext): Promise<ProtocolDeployResult<'aaveV3'>> {
  const started = performance.now();
  const client = batchingClient(ctx);
  const layout = layoutFor(ctx);
  const steps = aaveV3Steps(ctx.chain.name, client, layout);
  const plans = await Promise.all(steps.map((s) => s.plan()));
  const deployed = steps.filter((_, i) => plans[i]!.length > 0).map((s) => s.label);
  if (deployed.length > 0) {
    const txs = plans.flat();
    await sendInOrder(client, ctx.chain, ctx.deployer, txs, 'aaveV3');
    const left = await Promise.all(steps.map((s) => s.plan()));
    const missing = steps.filter((_, i) => left[i]!.length > 0).map((s) => s.label);
    if (missing.length > 0) throw new Error(`${ctx.chain.name}: aaveV3: still missing after the deployment: ${missing.join(', ')}`);
    // A fresh chain gets everything; a chain a crash left half-deployed says what it lacked.
    const what = deployed.length === steps.length ? 'the whole market' : deployed.join(', ');
    ctx.log(`${ctx.chain.name}: aaveV3: deployed ${what} (${txs.length} transactions, ${Math.round(performance.now() - started)} ms)`);
  }
  return { deployed, config: aaveV3Config(layout) };
}
