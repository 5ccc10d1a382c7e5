import { isAddressEqual, type Chain } from 'viem';
import { devnetPublicClient } from '../../clients.ts';
import { dataStoreAbi, exchangeRouterAbi } from '../../../protocols/gmxV2/abis.generated.ts';
import { devnetGmxAbis, type GmxDeployments } from './deployments.ts';
import { ROLES } from './keys.ts';

/**
 * Checks that a chain holds GMX v2 as planned: code at every address, the ExchangeRouter wired to this DataStore,
 * RoleStore, OrderHandler and (through its liquidity facet) Deposit/WithdrawalHandlers and still a CONTROLLER (what the service checks to detect a stale router), the
 * DataStore on this RoleStore. Prices and pool state are not checked: trades and tests move them on purpose.
 */
export async function verifyGmx(p: { chain: Chain; plan: GmxDeployments }): Promise<void> {
  const client = devnetPublicClient(p.chain);
  const where = `${p.chain.name}: gmxV2`;
  const codes = await Promise.all(p.plan.all.map((d) => client.getCode({ address: d.address })));
  const missing = p.plan.all.filter((_, i) => (codes[i] ?? '0x') === '0x').map((d) => `${d.label} (${d.address})`);
  if (missing.length > 0) throw new Error(`${where}: no code for ${missing.join(', ')}`);

  const router = { address: p.plan.exchangeRouter.address, abi: exchangeRouterAbi } as const;
  const [dataStore, roleStore, orderHandler, routerOf, isController, dsRoleStore, depositHandler, withdrawalHandler] = await Promise.all([
    client.readContract({ ...router, functionName: 'dataStore' }),
    client.readContract({ ...router, functionName: 'roleStore' }),
    client.readContract({ ...router, functionName: 'orderHandler' }),
    client.readContract({ ...router, functionName: 'router' }),
    client.readContract({ address: p.plan.roleStore.address, abi: devnetGmxAbis.roleStore, functionName: 'hasRole', args: [p.plan.exchangeRouter.address, ROLES.CONTROLLER] }),
    client.readContract({ address: p.plan.dataStore.address, abi: dataStoreAbi, functionName: 'roleStore' }),
    client.readContract({ ...router, functionName: 'depositHandler' }),
    client.readContract({ ...router, functionName: 'withdrawalHandler' }),
  ]);
  const wrong: string[] = [];
  if (!isAddressEqual(dataStore, p.plan.dataStore.address)) wrong.push(`dataStore ${dataStore}`);
  if (!isAddressEqual(roleStore, p.plan.roleStore.address)) wrong.push(`roleStore ${roleStore}`);
  if (!isAddressEqual(orderHandler, p.plan.orderHandler.address)) wrong.push(`orderHandler ${orderHandler}`);
  if (!isAddressEqual(routerOf, p.plan.router.address)) wrong.push(`router ${routerOf}`);
  if (!isAddressEqual(depositHandler, p.plan.depositHandler.address)) wrong.push(`depositHandler ${depositHandler}`);
  if (!isAddressEqual(withdrawalHandler, p.plan.withdrawalHandler.address)) wrong.push(`withdrawalHandler ${withdrawalHandler}`);
  if (isController !== true) wrong.push('the ExchangeRouter is not a CONTROLLER');
  if (!isAddressEqual(dsRoleStore, p.plan.roleStore.address)) wrong.push(`the DataStore's roleStore ${dsRoleStore}`);
  if (wrong.length > 0) throw new Error(`${where}: the ExchangeRouter at ${p.plan.exchangeRouter.address} is not wired as planned: ${wrong.join('; ')}`);
}
