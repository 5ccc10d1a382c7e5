import { cachedRead } from '../lib/cachedRead.ts';
import type { ChainClient } from './client.ts';

export interface FeeSnapshot {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  baseFeePerGas: bigint;
  blockNumber: bigint;
  blockTimestamp: bigint;
  blockGasLimit: bigint;
}

/**
 * Fees from the latest block: maxFeePerGas = 2 × base fee + tip, where the tip is the node's
 * eth_maxPriorityFeePerGas. Twice the base fee survives six full blocks of base-fee growth (+12.5% each).
 */
export async function readFees(client: ChainClient): Promise<FeeSnapshot> {
  const [block, tip] = await Promise.all([
    client.getBlock({ blockTag: 'latest' }),
    client.request({ method: 'eth_maxPriorityFeePerGas' }).then(BigInt),
  ]);
  const base = block.baseFeePerGas ?? 0n;
  return {
    maxFeePerGas: base * 2n + tip,
    maxPriorityFeePerGas: tip,
    baseFeePerGas: base,
    blockNumber: block.number,
    blockTimestamp: block.timestamp,
    blockGasLimit: block.gasLimit,
  };
}

/**
 * {@link readFees} with single-flight and a short cache: concurrent preparations share one read, and a burst
 * of operations is priced from one block instead of one read per operation.
 */
export function createFeeReader(client: ChainClient, maxAgeMs: number): () => Promise<FeeSnapshot> {
  return cachedRead(() => readFees(client), maxAgeMs);
}
