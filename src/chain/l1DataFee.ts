import { encodeFunctionData, parseAbi, serializeTransaction, size, type Address, type Hex } from 'viem';
import { entryPoint07Abi, type PackedUserOperation } from 'viem/account-abstraction';
import type { L1DataFeeConfig } from '../config/chainConfig.ts';
import type { ChainClient } from './client.ts';

/**
 * The L1 data fee of an L2 operation as gas, the part of preVerificationGas production bundlers add on L2s.
 * Followed: Alto (github.com/pimlicolabs/alto, src/rpc/estimation/preVerificationGasCalculator.ts,
 * `calcOptimismPvg`, `calcArbitrumPvg`, `getSerializedHandleOpsTx`). Both price a handleOps transaction that
 * carries the operation alone, serialized and signed with large placeholder fields:
 * - OP-stack: GasPriceOracle `getL1Fee(tx)` is wei, deducted from the sender apart from gas; as gas it is divided
 *   by the price the operation pays, min(maxFeePerGas, baseFee + maxPriorityFeePerGas) (rounded up here, down in
 *   Alto: the paymaster never sponsors less than the fee).
 * - Arbitrum: NodeInterface `gasEstimateL1Component(entryPoint, false, tx)` is already gas (Nitro charges it within
 *   the transaction's gas limit), taken as is.
 * The code is ours; only the formula is theirs.
 */
export const gasPriceOracleAbi = parseAbi([
  'function getL1Fee(bytes data) view returns (uint256)',
  'function getL1FeeUpperBound(uint256 unsignedTxSize) view returns (uint256)',
  'function l1BaseFee() view returns (uint256)',
  'function blobBaseFee() view returns (uint256)',
  'function baseFeeScalar() view returns (uint32)',
  'function blobBaseFeeScalar() view returns (uint32)',
]);
export const nodeInterfaceAbi = parseAbi([
  'function gasEstimateL1Component(address to, bool contractCreation, bytes data) view returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)',
]);

/** The L1 part of an operation's preVerificationGas. */
export interface L1DataGas {
  gas: bigint;
  /**
   * Whether the chain charges it within the transaction's gas limit (Arbitrum) or apart from gas (OP-stack):
   * a bundle's gas limit must hold it in the first case only.
   */
  chargedAsGas: boolean;
}

/** The fees an operation is signed with, and the base fee they were read at. */
export interface OperationFees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  baseFeePerGas: bigint;
}

// Placeholders at least as long as any real value's encoding, so the estimate never falls short: a nonce and a gas
// limit of 4 bytes, fees of 8, and a signature of 32-byte r and s without leading zeros.
const PLACEHOLDER = {
  nonce: 0xffff_ffff,
  gas: 0xffff_ffffn,
  fee: 0xffff_ffff_ffff_ffffn,
  r: `0x${'ff'.repeat(32)}` as Hex,
  s: `0x${'7f'.repeat(32)}` as Hex,
};

type HandleOpsTransactionParams = { chainId: number; entryPoint: Address; beneficiary: Address; packed: PackedUserOperation };

function handleOpsTransaction(p: HandleOpsTransactionParams) {
  return {
    type: 'eip1559' as const,
    chainId: p.chainId,
    to: p.entryPoint,
    data: encodeFunctionData({ abi: entryPoint07Abi, functionName: 'handleOps', args: [[p.packed], p.beneficiary] }),
    nonce: PLACEHOLDER.nonce,
    gas: PLACEHOLDER.gas,
    maxFeePerGas: PLACEHOLDER.fee,
    maxPriorityFeePerGas: PLACEHOLDER.fee,
  };
}

/** The signed EIP-1559 handleOps transaction an L2 would post to L1 for this operation alone. */
export const handleOpsTransactionFor = (p: HandleOpsTransactionParams): Hex =>
  serializeTransaction(handleOpsTransaction(p), { r: PLACEHOLDER.r, s: PLACEHOLDER.s, yParity: 1 });

/** The same transaction unsigned, as Fjord's `getL1FeeUpperBound` takes its size. */
export const unsignedHandleOpsTransactionFor = (p: HandleOpsTransactionParams): Hex => serializeTransaction(handleOpsTransaction(p));

/** The gas price an operation pays: its max fee, or less when the base fee plus its tip is less. */
export const operationGasPrice = (f: OperationFees): bigint => {
  const withTip = f.baseFeePerGas + f.maxPriorityFeePerGas;
  return withTip < f.maxFeePerGas ? withTip : f.maxFeePerGas;
};

/** An OP-stack L1 fee (wei) as gas at the operation's price, rounded up. */
export function opStackL1Gas(l1FeeWei: bigint, fees: OperationFees): bigint {
  const price = operationGasPrice(fees);
  if (price <= 0n) throw new Error('an operation gas price of 0 cannot pay an L1 data fee');
  return (l1FeeWei + price - 1n) / price;
}

export type L1DataGasReader = (p: { packed: PackedUserOperation; fees: OperationFees }) => Promise<L1DataGas | undefined>;

/** Reads a chain's L1 data fee for an operation; undefined on a chain without one. RPC failures throw. */
export function createL1DataGasReader(
  client: ChainClient,
  config: { chainId: number; entryPoint: Address; beneficiary: Address; l1DataFee: L1DataFeeConfig },
): L1DataGasReader {
  const fee = config.l1DataFee;
  return async ({ packed, fees }) => {
    if (fee.kind === 'none') return undefined;
    const txParams = { chainId: config.chainId, entryPoint: config.entryPoint, beneficiary: config.beneficiary, packed };
    if (fee.kind === 'opStack') {
      const oracle = { address: fee.gasPriceOracle, abi: gasPriceOracleAbi } as const;
      const wei =
        fee.method === 'getL1FeeUpperBound'
          ? await client.readContract({ ...oracle, functionName: 'getL1FeeUpperBound', args: [BigInt(size(unsignedHandleOpsTransactionFor(txParams)))] })
          : await client.readContract({ ...oracle, functionName: 'getL1Fee', args: [handleOpsTransactionFor(txParams)] });
      return { gas: opStackL1Gas(wei, fees), chargedAsGas: false };
    }
    const tx = handleOpsTransactionFor(txParams);
    const [gas] = await client.readContract({
      address: fee.nodeInterface,
      abi: nodeInterfaceAbi,
      functionName: 'gasEstimateL1Component',
      args: [config.entryPoint, false, tx],
    });
    return { gas, chargedAsGas: true };
  };
}
