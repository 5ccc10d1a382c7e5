import type { ChainName } from '../../config/chains.ts';
import { ProtocolError } from '../../protocols/common/errors.ts';
import type { AnyFamily } from '../../protocols/types.ts';
import type { GatewayContext } from '../context.ts';
import { protocolContext } from './context.ts';

/** How long a family's availability answer is reused: an upgrade is rare, a check per request would double reads. */
const CHECK_TTL_MS = 10_000;

export interface FamilyAvailability {
  family: string;
  chain: ChainName;
  available: boolean;
  reason: string | null;
}

/**
 * The families' availability checks (ProtocolFamily.availability), shared by every request of a gateway and by its
 * /health: each (family, chain) checked at most every CHECK_TTL_MS. A check that cannot read the chain counts as
 * available (the endpoint's own reads will say the chain is not answering).
 */
export function createAvailability(ctx: GatewayContext) {
  const cache = new Map<string, { at: number; reason: Promise<string | undefined> }>();

  function reasonOf(family: AnyFamily, chain: ChainName): Promise<string | undefined> {
    if (!family.availability || ctx.protocols.get(chain)?.[family.key as never] === undefined) return Promise.resolve(undefined);
    const key = `${family.slug}/${chain}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < CHECK_TTL_MS) return hit.reason;
    const reason = family.availability(protocolContext(ctx, family, chain)).catch(() => undefined);
    cache.set(key, { at: Date.now(), reason });
    return reason;
  }

  return {
    /** Refuses with 503 protocol_unavailable while the family's deployment on `chain` cannot be used. */
    async ensure(family: AnyFamily, chain: ChainName): Promise<void> {
      const reason = await reasonOf(family, chain);
      if (reason !== undefined) throw new ProtocolError('protocol_unavailable', `${family.protocol} on ${chain} is unavailable: ${reason}`);
    },
    /** Every checked (family, chain) the deployment configures, for /health. */
    async report(): Promise<FamilyAvailability[]> {
      const checks = ctx.families.filter((f) => f.availability).flatMap((f) => f.chains.filter((c) => ctx.protocols.get(c)?.[f.key as never] !== undefined).map((c) => [f, c] as const));
      return Promise.all(checks.map(async ([f, chain]) => {
        const reason = await reasonOf(f, chain);
        return { family: f.slug, chain, available: reason === undefined, reason: reason ?? null };
      }));
    },
  };
}
export type Availability = ReturnType<typeof createAvailability>;

const shared = new WeakMap<GatewayContext, Availability>();
/** The gateway's one availability checker (its routes and /health share the answers). */
export function availabilityOf(ctx: GatewayContext): Availability {
  let a = shared.get(ctx);
  if (!a) shared.set(ctx, (a = createAvailability(ctx)));
  return a;
}
