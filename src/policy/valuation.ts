import type { Address } from 'viem';
import type { Call } from '../api/v1alpha1/index.ts';
import type { Outflow } from '../chain/types.ts';
import { approvalOf } from './approvals.ts';
export { formatMicroUsd } from './usd.ts';
import { assetKey, microUsdOf, type Asset, type AssetPrice } from './prices/price.ts';
import type { PriceSource } from './prices/source.ts';

/**
 * What an execution moves out of the wallet's control, priced: every outflow of its simulation and every allowance
 * its calls grant (another can move that much later). Made once per admission; each USD rule totals it with its
 * own allow-listed spenders (totalOf).
 */
export interface Valuation {
  /** What leaves the wallet (src/chain/outflows.ts); undefined when the chain could not trace it (`unavailable`). */
  outflows: readonly Outflow[] | undefined;
  /** Why the outflows are not known (the chain's RPC lacks what tracing needs). */
  unavailable?: string;
  lines: ValuedLine[];
}

/** One outflow or one allowance granted, and its worth. */
export interface ValuedLine {
  what: 'outflow' | 'approval';
  asset: Asset;
  /** Base units (wei, token units, 1 per NFT); undefined for an operator approval (every token of a collection). */
  amount: bigint | undefined;
  /** The recipient of an outflow, the spender of an approval. */
  to: Address;
  callIndex?: number | undefined;
  /** An approval call whose arguments do not decode: its spender is unknown, so no allow-list leaves it out. */
  undecodable?: true;
  value:
    | { kind: 'priced'; microUsd: bigint }
    /** An allowance without a bound of a priced token (max, or an operator): over any limit. */
    | { kind: 'unbounded' }
    | { kind: 'unpriced'; reason: string };
}

/** What the execution is worth under one rule: its total, or why it has none. */
export type ExecutionValue =
  /** `unbounded`: an allowance without a bound counts, so the total is over any limit (microUsd: the rest). */
  | { kind: 'priced'; microUsd: bigint; unbounded: boolean; lines: ValuedLine[] }
  | { kind: 'unpriced'; asset: Asset; reason: string; lines: ValuedLine[] }
  | { kind: 'unavailable'; reason: string };

/**
 * An allowance of at least this is unbounded: Permit2's maximum (uint160), and beyond it the ERC-20 `max`
 * (2^256 − 1) wallets and dapps grant to mean "forever".
 */
export const UNBOUNDED_ALLOWANCE = 2n ** 160n - 1n;

/** The assets a valuation of these outflows and calls needs prices of. */
export function assetsOf(outflows: readonly Outflow[] | undefined, calls: readonly Call[]): Asset[] {
  const assets: Asset[] = (outflows ?? []).map((o) => (o.kind === 'native' ? 'native' : o.token!));
  for (const call of calls) {
    const a = approvalOf(call);
    if (a && a !== 'undecodable') assets.push(a.token);
  }
  return assets;
}

/**
 * The pure part: outflows and the calls' allowances priced with `prices` (by assetKey). An ERC-721/1155 outflow is
 * priced only when its token is (a configured price per token id). A call that looks like an approval but does not
 * decode is a line of doubt: unpriced.
 */
export function valueOf(
  simulated: { outflows: readonly Outflow[] | undefined; unavailable?: string | undefined },
  calls: readonly Call[],
  prices: ReadonlyMap<string, AssetPrice>,
): Valuation {
  const lines: ValuedLine[] = [];
  const worth = (asset: Asset, amount: bigint | undefined): ValuedLine['value'] => {
    const p = prices.get(assetKey(asset)) ?? { kind: 'unpriced', reason: 'not priced' };
    if (p.kind === 'unpriced') return p;
    if (amount === undefined || amount >= UNBOUNDED_ALLOWANCE) return { kind: 'unbounded' };
    return { kind: 'priced', microUsd: microUsdOf(amount, p) };
  };
  for (const o of simulated.outflows ?? []) {
    const asset: Asset = o.kind === 'native' ? 'native' : o.token!;
    lines.push({ what: 'outflow', asset, amount: o.amount, to: o.to, callIndex: o.callIndex, value: worth(asset, o.amount) });
  }
  for (const [i, call] of calls.entries()) {
    const a = approvalOf(call);
    if (a === undefined) continue;
    if (a === 'undecodable') {
      const target = call.target as Address;
      lines.push({ what: 'approval', asset: target, amount: undefined, to: target, callIndex: i, undecodable: true, value: { kind: 'unpriced', reason: 'an approval whose arguments do not decode' } });
      continue;
    }
    lines.push({ what: 'approval', asset: a.token, amount: a.amount, to: a.spender, callIndex: i, value: worth(a.token, a.amount) });
  }
  return { outflows: simulated.outflows, ...(simulated.unavailable !== undefined && { unavailable: simulated.unavailable }), lines };
}

/**
 * The execution's total under a rule that allow-lists `allowSpenders`: every outflow, and every allowance to a
 * spender not on the list. Any line unpriced makes the whole unpriced (naming its asset), as do outflows unknown.
 */
export function totalOf(v: Valuation, allowSpenders: readonly string[] = []): ExecutionValue {
  if (v.outflows === undefined) return { kind: 'unavailable', reason: v.unavailable ?? 'the outflows were not traced' };
  const allowed = new Set(allowSpenders.map((a) => a.toLowerCase()));
  const counted = v.lines.filter((l) => l.what === 'outflow' || l.undecodable || !allowed.has(l.to.toLowerCase()));
  const unpriced = counted.find((l) => l.value.kind === 'unpriced');
  if (unpriced?.value.kind === 'unpriced') return { kind: 'unpriced', asset: unpriced.asset, reason: unpriced.value.reason, lines: counted };
  let microUsd = 0n;
  let unbounded = false;
  for (const l of counted) {
    if (l.value.kind === 'priced') microUsd += l.value.microUsd;
    else unbounded = true;
  }
  return { kind: 'priced', microUsd, unbounded, lines: counted };
}

/** The part that fetches: `valueOf` with the prices of the assets involved, read from `source` at `now`. */
export async function valueExecution(
  source: PriceSource | undefined,
  simulated: { outflows?: readonly Outflow[] | undefined; outflowsUnavailable?: { message: string } | undefined },
  calls: readonly Call[],
  now: Date,
): Promise<Valuation> {
  const outflows = simulated.outflows;
  const unavailable = outflows === undefined ? (simulated.outflowsUnavailable?.message ?? 'the outflows were not traced') : undefined;
  const assets = assetsOf(outflows, calls);
  const prices = source && assets.length > 0 ? await source.prices(assets, now) : new Map<string, AssetPrice>();
  if (!source) for (const a of assets) prices.set(assetKey(a), { kind: 'unpriced', reason: 'this chain has no price source' });
  return valueOf({ outflows, unavailable }, calls, prices);
}

