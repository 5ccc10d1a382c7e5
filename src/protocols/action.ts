import { protocolActionHash, type ProtocolAction } from '../api/v1alpha1/index.ts';
import type { ChainName } from '../config/chains.ts';
import { familyChain, type ActionEndpoint, type ActionPlan, type AnyFamily } from './types.ts';

/** `lend-c` + `supply` → `lend-c/supply`: the action's name on the request, whichever alias it was called by. */
export const actionName = (family: AnyFamily, endpoint: Pick<ActionEndpoint<never>, 'path'>) => `${family.slug}/${endpoint.path}`;

/** The family and endpoint an action's name (`<slug>/<path>`) names among `families`, if any serves it. */
export function findAction(families: readonly AnyFamily[], name: string): { family: AnyFamily; endpoint: ActionEndpoint<never> } | undefined {
  const slash = name.indexOf('/');
  const family = families.find((f) => f.slug === name.slice(0, slash));
  const endpoint = family?.endpoints.find((e) => e.kind === 'action' && e.path === name.slice(slash + 1));
  return family && endpoint ? { family, endpoint: endpoint as ActionEndpoint<never> } : undefined;
}

/**
 * The action a request records: its name, the caller's input as the endpoint's schema normalized it (the chain
 * filled in, so naming the family's default chain and leaving it out are one request), hashed before the plan's bounds
 * are laid over it.
 */
export function protocolActionOf(family: AnyFamily, endpoint: Pick<ActionEndpoint<never>, 'path'>, input: unknown, plan: Pick<ActionPlan<unknown>, 'bounds' | 'settles'> = {}): ProtocolAction {
  const name = actionName(family, endpoint);
  const asked = { ...(input as Record<string, unknown>), chain: familyChain(family, (input as { chain?: ChainName }).chain) };
  return withBounds({ name, input: asked, inputHash: protocolActionHash(name, asked) }, plan);
}

/**
 * `action` with what its plan fixed: the absolute bounds laid over its input (its hash, of what was asked, unchanged),
 * and when its protocol settles what it creates, if it does later.
 */
export const withBounds = (action: ProtocolAction, plan: Pick<ActionPlan<unknown>, 'bounds' | 'settles'>): ProtocolAction => ({
  ...action,
  ...(plan.bounds && { input: { ...action.input, ...plan.bounds } }),
  ...(plan.settles && { followed: plan.settles }),
});
