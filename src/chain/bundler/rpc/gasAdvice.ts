import { ChainError } from '../../errors.ts';
import type { FeeSnapshot } from '../../fees.ts';
import type { UserOperation07 } from '../../userOperation.ts';
import { BundlerRpcError, type BundlerClient } from './client.ts';

/**
 * The preVerificationGas an outside bundler requires of an operation (eth_estimateUserOperationGas of a draft):
 * each bundler prices its own calldata, fixed overhead and, on an L2, the L1 data fee, and refuses less.
 * A bundler that will not price it (its simulation refused the draft) fails the operation; one that does not
 * answer is the chain unavailable (the caller retries).
 */
export interface BundlerPreVerificationGas {
  /** The bundler's figure for a draft the service estimates at `ours` (refused above maxRatio × ours). */
  price(draft: UserOperation07, ours: bigint): Promise<bigint>;
  /** `ours` scaled as the bundler's last answer was to the service's own figure then: what a quote counts. */
  expected(ours: bigint): bigint;
}

export function bundlerPreVerificationGas(bundler: BundlerClient, maxRatio: number): BundlerPreVerificationGas {
  let last: { asked: bigint; ours: bigint } | undefined;
  return {
    async price(draft, ours) {
      let asked: bigint;
      try {
        asked = (await bundler.estimateUserOperationGas(draft)).preVerificationGas;
      } catch (e) {
        if (e instanceof BundlerRpcError && e.kind === 'rejected') {
          throw new ChainError('simulation_reverted', `the bundler at ${bundler.origin} refused to price the operation: ${e.message}`, { cause: e });
        }
        throw new ChainError('rpc_unavailable', `the bundler at ${bundler.origin} did not answer: ${(e as Error).message}`, { cause: e });
      }
      // Paid in full from the paymaster's deposit: a bundler's figure far above our own is refused, not signed.
      if (asked > scaled(ours, maxRatio)) {
        throw new ChainError(
          'simulation_reverted',
          `the bundler at ${bundler.origin} asks ${asked} preVerificationGas, more than ${maxRatio}× the service's own estimate (${ours}): not signed (bundler.maxPreVerificationGasRatio)`,
        );
      }
      if (ours > 0n) last = { asked, ours };
      return asked;
    },
    expected(ours) {
      if (!last) return ours;
      // +2 %, as prepare adds to what the bundler asks.
      const scaledUp = (ours * last.asked) / last.ours;
      return scaledUp + scaledUp / 50n;
    },
  };
}

/** `x × ratio`, the ratio to a thousandth. */
const scaled = (x: bigint, ratio: number): bigint => (x * BigInt(Math.round(ratio * 1000))) / 1000n;

/**
 * The node's fees, raised to the bundler's own price where it has a method for it (Pimlico's
 * pimlico_getUserOperationGasPrice, standard tier): a bundler refuses an operation that pays less than it asks.
 * Its answer is reused for `maxAgeMs`; a bundler that does not answer leaves the node's fees.
 */
export function withBundlerGasPrice(
  nodeFees: () => Promise<FeeSnapshot>,
  bundler: BundlerClient,
  maxAgeMs: number,
  maxRatio: number,
  onCapped?: (asked: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }, cap: bigint) => void,
): () => Promise<FeeSnapshot> {
  let cached: { at: number; value: Awaited<ReturnType<BundlerClient['gasPrice']>> } | undefined;
  let inflight: Promise<Awaited<ReturnType<BundlerClient['gasPrice']>>> | undefined;
  const price = async () => {
    if (cached && Date.now() - cached.at <= maxAgeMs) return cached.value;
    inflight ??= bundler
      .gasPrice()
      .catch(() => undefined)
      .then((value) => {
        cached = { at: Date.now(), value };
        return value;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
  return async () => {
    const [fees, answer] = await Promise.all([nodeFees(), price()]);
    let asked = answer;
    if (!asked) return fees;
    // Never above maxRatio × the node's own: a bundler's price is paid from the paymaster's deposit. Capped, an
    // operation the bundler then refuses fails with its message rather than overpaying.
    const cap = scaled(fees.maxFeePerGas, maxRatio);
    const capped = {
      maxFeePerGas: asked.maxFeePerGas > cap ? cap : asked.maxFeePerGas,
      maxPriorityFeePerGas: asked.maxPriorityFeePerGas > cap ? cap : asked.maxPriorityFeePerGas,
    };
    if (capped.maxFeePerGas !== asked.maxFeePerGas || capped.maxPriorityFeePerGas !== asked.maxPriorityFeePerGas) onCapped?.(asked, cap);
    asked = capped;
    const maxPriorityFeePerGas = asked.maxPriorityFeePerGas > fees.maxPriorityFeePerGas ? asked.maxPriorityFeePerGas : fees.maxPriorityFeePerGas;
    let maxFeePerGas = asked.maxFeePerGas > fees.maxFeePerGas ? asked.maxFeePerGas : fees.maxFeePerGas;
    if (maxFeePerGas < maxPriorityFeePerGas) maxFeePerGas = maxPriorityFeePerGas;
    return { ...fees, maxFeePerGas, maxPriorityFeePerGas };
  };
}
