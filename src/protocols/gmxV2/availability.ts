import { parseAbi } from 'viem';
import { readOf } from '../common/reads.ts';
import type { ProtocolContext } from '../types.ts';
import { exchangeRouterAbi } from './abis.generated.ts';
import type { GmxV2Config } from './config.ts';
import { ROLES } from './keys.ts';

/** GMX's RoleStore: the one call that says whether a contract is still part of the system. */
const roleStoreAbi = parseAbi(['function hasRole(address account, bytes32 roleKey) view returns (bool)']);

/**
 * Whether the configured ExchangeRouter can still create orders: GMX upgrades by deploying a new ExchangeRouter and
 * revoking the old one's CONTROLLER role in its RoleStore, after which every order through it reverts. A stale one
 * is said here, before anything is signed. Undefined when it is usable.
 */
export async function exchangeRouterAvailability(ctx: ProtocolContext<'gmxV2'>): Promise<string | undefined> {
  const config = ctx.config as GmxV2Config;
  const [roleStore] = await ctx.read([readOf({ address: config.exchangeRouter, abi: exchangeRouterAbi, functionName: 'roleStore' })]);
  const [controller] = await ctx.read([readOf({ address: roleStore, abi: roleStoreAbi, functionName: 'hasRole', args: [config.exchangeRouter, ROLES.CONTROLLER] })]);
  return controller
    ? undefined
    : `the configured ExchangeRouter ${config.exchangeRouter} is no longer a CONTROLLER in GMX's RoleStore ${roleStore} (GMX has upgraded it): configure the current one`;
}
