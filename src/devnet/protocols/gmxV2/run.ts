import { devnetAccounts } from '../../accounts.ts';
import type { ProtocolRun, ProtocolRunContext } from '../types.ts';
import { gmxDeployments } from './deployments.ts';
import { startGmxKeeper } from './keeper.ts';
import { startGmxPriceServer } from './priceServer.ts';
import { feedReader, type GmxPricedToken } from './prices.ts';

/** The keeper's default delay between seeing an order and executing it (GMX's keepers take about a second). */
export const GMX_KEEPER_DELAY_MS_DEFAULT = 1000;
export const GMX_KEEPER_DELAY_ENV = 'AGENT_WALLET_GMX_KEEPER_DELAY_MS';

/** The keeper delay: the option, else the environment, else the default; a bad value is an error that says so. */
export function gmxKeeperDelayMs(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const raw = option ?? (env[GMX_KEEPER_DELAY_ENV] !== undefined && env[GMX_KEEPER_DELAY_ENV] !== '' ? Number(env[GMX_KEEPER_DELAY_ENV]) : GMX_KEEPER_DELAY_MS_DEFAULT);
  if (!Number.isInteger(raw) || raw < 0 || raw > 3_600_000) {
    throw new Error(`gmxV2: the keeper delay must be a whole number of milliseconds from 0 to 3600000 (${GMX_KEEPER_DELAY_ENV} or --gmx-keeper-delay-ms), got ${String(option ?? env[GMX_KEEPER_DELAY_ENV])}`);
  }
  return raw;
}

/**
 * What the devnet runs beside its GMX v2 contracts: the price server (GMX's oracle keeper API, its URL becomes the
 * config's oracleUrl) and the keeper (orders, deposits, withdrawals), both on the chain's journaled RPC (so their transactions replay).
 */
export async function runGmxV2(ctx: ProtocolRunContext<'gmxV2'>): Promise<ProtocolRun<'gmxV2'>> {
  const delayMs = gmxKeeperDelayMs(ctx.options.gmxKeeperDelayMs);
  const plan = gmxDeployments({ tokens: ctx.tokens, owner: ctx.deployer.address });
  const tokens: GmxPricedToken[] = plan.feeds.map((f) => ({ symbol: f.symbol, token: f.token, decimals: f.decimals, feed: f.deployment.address }));
  const read = feedReader(ctx.chain);
  // The last run's port when it is free: the oracleUrl handed out stays valid across restarts, as the RPC URLs do.
  const lastPort = ctx.previous?.oracleUrl ? Number(new URL(ctx.previous.oracleUrl).port) : undefined;
  const server = await startGmxPriceServer({ tokens, read, log: ctx.log, port: lastPort });
  const keeper = startGmxKeeper({
    chain: ctx.chain,
    dataStore: plan.dataStore.address,
    orderHandler: plan.orderHandler.address,
    depositHandler: plan.depositHandler.address,
    withdrawalHandler: plan.withdrawalHandler.address,
    eventEmitter: plan.eventEmitter.address,
    reader: plan.reader.address,
    indexToken: plan.market.indexToken,
    keeper: devnetAccounts().gmxKeeper,
    tokens,
    read,
    delayMs,
    log: ctx.log,
  });
  ctx.log(`${ctx.name}: gmxV2 price server ${server.url}`);
  return {
    configPatch: { oracleUrl: server.url },
    stop: async () => {
      await keeper.stop();
      await server.stop();
    },
  };
}
